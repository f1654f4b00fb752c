// End-to-end: saved artifacts dropped on the page (through the file input) are validated by the
// core, charted, compared, and never rendered as HTML.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite } from './page.mjs';

const REFERENCE = 'tests/fixtures/reference-artifact.json';
const G1 = 'tests/fixtures/real/2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx1024.json';
const HOSTILE = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">';
const env = browserAndSite();

function jsonFile(name, value) {
  return { name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(value, null, 2)) };
}

async function cards(page, count) {
  const list = page.getByTestId('library-row');
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=library-row]').length >= n, count);
  return list;
}

test('reference, legacy and invalid artifacts get the right verdicts', async () => {
  const { page, errors } = await env.open();
  await page
    .getByTestId('artifact-input')
    .setInputFiles([REFERENCE, G1, 'tests/fixtures/invalid/wrong-schema.json', 'tests/fixtures/invalid/not-json.json']);
  const list = await cards(page, 4);
  const verdictOf = async (name) =>
    list.filter({ has: page.getByTestId('artifact-label').getByText(name, { exact: true }) }).getByTestId('verdict').textContent();
  assert.equal(await verdictOf('reference-artifact.json'), 'valid');
  assert.match(await verdictOf('2026-07-16-gemma4-vllm0251-wsl2__control-fast-c128-ctx1024.json'), /valid legacy \(G1/);
  assert.equal(await verdictOf('wrong-schema.json'), 'invalid');
  assert.equal(await verdictOf('not-json.json'), 'invalid');
  const wrongSchema = list.filter({ hasText: 'wrong-schema.json' });
  assert.match(await wrongSchema.getByTestId('violations').textContent(), /schema/);
  // The two readable runs are selected: a comparison with the legacy run's p50/p95.
  await page.getByTestId('compare-runs').waitFor();
  await page.getByTestId('chart-compare-percentiles').locator('canvas').first().waitFor();
  // The legacy run alone: its p50/p95 bars, in a section of their own.
  const row = (name) => list.filter({ has: page.getByTestId('artifact-label').getByText(name, { exact: true }) });
  await row('reference-artifact.json').getByTestId('select-artifact').uncheck();
  await page.getByTestId('single-run').waitFor();
  await page.getByTestId('charts-percentiles').getByTestId('chart-percentiles').locator('canvas').first().waitFor();
  assert.equal(await page.getByTestId('charts-latency').count(), 0, 'a run without rows has no distributions');
  await page.waitForFunction(() => document.querySelector('[data-testid=chart-percentiles]')?.dataset.drawn === 'true');
  await page.screenshot({ path: 'test-results/legacy-artifact.png', fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('one artifact is charted; the example button loads the shipped reference', async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('open-example').click();
  await cards(page, 1);
  await page.getByTestId('single-run').waitFor();
  for (const id of ['chart-cdf-ttft', 'chart-hist-ttft', 'chart-timeline', 'chart-context', 'chart-throughput']) {
    await page.getByTestId(id).locator('canvas').first().waitFor({ timeout: 10_000 });
  }
  // Charts come in sections by the question they answer, latency first, one metric at a time.
  const sections = await page.locator('.chart-section').evaluateAll((all) => all.map((section) => section.dataset.testid));
  assert.deepEqual(sections, ['charts-latency', 'charts-over-the-run', 'charts-prompt-and-cache']);
  const latency = page.getByTestId('charts-latency');
  const latencyCharts = () => latency.locator('figure').evaluateAll((all) => all.map((figure) => figure.dataset.testid));
  assert.deepEqual(await latencyCharts(), ['chart-hist-ttft', 'chart-cdf-ttft']);
  const metrics = await page.getByTestId('latency-metric').locator('input').evaluateAll((all) => all.map((input) => input.value));
  assert.deepEqual(metrics, ['ttfo', 'ttft', 'e2e', 'tpot', 'decode']);
  await page.getByTestId('latency-metric').getByText('E2E', { exact: true }).click();
  await page.getByTestId('chart-cdf-e2e').locator('canvas').first().waitFor();
  assert.deepEqual(await latencyCharts(), ['chart-hist-e2e', 'chart-cdf-e2e']);
  assert.ok(await page.getByTestId('latency-metric').locator('input[value=e2e]').isChecked());
  // The chart's title is drawn once (on the canvas), its run named once (above, not in a legend).
  assert.equal(await page.getByTestId('chart-cdf-e2e').locator('figcaption').count(), 0);
  const legendShown = await page.evaluate(() => {
    const element = document.querySelector('[data-testid=chart-cdf-e2e] .chart-canvas');
    return window.echarts.getInstanceByDom(element).getOption().legend.map((legend) => legend.show);
  });
  assert.deepEqual(legendShown, [false]);
  await page.screenshot({ path: 'test-results/results-view.png', fullPage: true });
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  const csv = readFileSync(await download.path(), 'utf8');
  assert.equal(csv.trim().split('\n').length, 7, 'a header and six rows');
  assert.deepEqual(errors, []);
  await page.close();
});

test('hostile strings in an artifact render as text and execute nothing', async () => {
  const { page, errors } = await env.open();
  const reference = JSON.parse(readFileSync(REFERENCE, 'utf8'));
  const hostileValid = { ...reference, model: HOSTILE, engine: HOSTILE, gpu: HOSTILE };
  const hostileInvalid = {
    ...reference,
    failed: 1,
    failures: [{ request_index: 6, error_type: HOSTILE, error_message: HOSTILE, failure_class: 'request_error' }],
  };
  await page
    .getByTestId('artifact-input')
    .setInputFiles([jsonFile(`${HOSTILE}.json`, hostileValid), jsonFile('hostile-failures.json', hostileInvalid)]);
  await cards(page, 2);
  await page.getByTestId('single-run').waitFor();
  await page.getByTestId('chart-timeline').locator('canvas').first().waitFor();
  // Hover every chart so ECharts builds its tooltips.
  for (const canvas of await page.locator('.chart-canvas canvas').all()) {
    const box = await canvas.boundingBox();
    if (box) await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  }
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'no handler ran');
  assert.equal(await page.locator('main img').count(), 0, 'no element was created from file text');
  const text = await page.getByTestId('results-view').textContent();
  assert.ok(text.includes(HOSTILE), 'the hostile text is shown verbatim, as text');
  assert.deepEqual(errors, []);
  await page.close();
});

test('comparing two runs flags a workload mismatch that is there', async () => {
  const { page, errors } = await env.open();
  const reference = JSON.parse(readFileSync(REFERENCE, 'utf8'));
  const otherConcurrency = { ...reference, concurrency: 4, run_id: 'benchmark-20261005T120000Z' };
  await page
    .getByTestId('artifact-input')
    .setInputFiles([jsonFile('reference.json', reference), jsonFile('concurrency-4.json', otherConcurrency)]);
  await cards(page, 2);
  // The library sorts by any column, and again the other way.
  const labels = () => page.getByTestId('artifact-label').allTextContents();
  await page.getByTestId('sort-load').click();
  const lowFirst = reference.concurrency < 4 ? ['reference.json', 'concurrency-4.json'] : ['concurrency-4.json', 'reference.json'];
  assert.deepEqual(await labels(), lowFirst);
  await page.getByTestId('sort-load').click();
  assert.deepEqual(await labels(), [...lowFirst].reverse());
  await page.getByTestId('compare-runs').waitFor();
  const fields = await page.getByTestId('mismatch').evaluateAll((items) => items.map((item) => item.dataset.field));
  assert.ok(fields.includes('concurrency'), `mismatches: ${fields}`);
  assert.equal(await page.getByTestId('compare-table').locator('tbody tr').count() > 5, true);
  await page.screenshot({ path: 'test-results/compare-view.png', fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
