// End-to-end: results files of vLLM, GuideLLM and AIPerf dropped beside a strobe artifact are
// read by content, charted and compared with strobe's, and the comparison flags where the
// tools define TTFT, TTFO and E2E differently (docs/guide/results.md, *Other tools' files*).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite } from './page.mjs';

const env = browserAndSite();
const PEERS = 'tests/fixtures/peers';
const FILES = [
  'tests/fixtures/reference-artifact.json',
  `${PEERS}/vllm/vllm-0.33.0-c4.json`,
  `${PEERS}/guidellm/guidellm-0.8.1-c4.json`,
  `${PEERS}/aiperf/aiperf-0.13.0-c4/profile_export.jsonl`,
];

const file = (name, text) => ({ name, mimeType: 'application/json', buffer: Buffer.from(text) });

async function verdicts(page, count) {
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=library-row]').length >= n, count);
  return page.getByTestId('library-row').evaluateAll((rows) =>
    Object.fromEntries(
      rows.map((row) => [
        row.querySelector('[data-testid=artifact-label]').textContent,
        row.querySelector('[data-testid=verdict]').textContent,
      ]),
    ),
  );
}

test("vLLM, GuideLLM and AIPerf files chart and compare beside a strobe run", async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('artifact-input').setInputFiles(FILES);
  const read = await verdicts(page, 4);
  assert.deepEqual(read, {
    'reference-artifact.json': 'valid',
    'vllm-0.33.0-c4.json': 'read as vLLM (version not recorded)',
    'guidellm-0.8.1-c4.json': 'read as GuideLLM 0.8.1',
    'profile_export.jsonl': 'read as AIPerf (version not recorded)',
  });
  // All four are selected: one comparison, with the definitions that differ flagged.
  await page.getByTestId('compare-runs').waitFor();
  const flagged = await page.getByTestId('mismatch').evaluateAll((items) =>
    Object.fromEntries(items.map((item) => [item.dataset.field, item.textContent])),
  );
  assert.match(flagged['definition: TTFO'], /vLLM's TTFT \(`ttfts`\) here is strobe's TTFO/);
  assert.match(flagged['definition: TTFT'], /not recorded \(vLLM\)/);
  assert.match(flagged['definition: E2E'], /AIPerf's request latency/);
  assert.match(flagged['definition: E2E'], /last content chunk/);
  // Every run has TTFO rows, so the TTFO CDF draws four lines.
  await page.getByTestId('latency-metric').getByText('TTFO', { exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[data-testid=chart-compare-cdf-ttfo]')?.dataset.drawn === 'true');
  const lines = await page.evaluate(() => {
    const element = document.querySelector('[data-testid=chart-compare-cdf-ttfo] .chart-canvas');
    return window.echarts.getInstanceByDom(element).getOption().series.map((series) => [series.name, series.data.length]);
  });
  // One step per request plus the start at 0 %: the reference's 6 rows, each tool's 48.
  assert.deepEqual(lines.map(([, points]) => points), [7, 49, 49, 49], JSON.stringify(lines));
  const table = await page.getByTestId('compare-table').textContent();
  assert.match(table, /TTFO p50/);
  await page.screenshot({ path: 'test-results/peers-compare.png', fullPage: true });

  // vLLM's run alone: its rows chart, and its notes say how its numbers map.
  const row = (name) =>
    page.getByTestId('library-row').filter({ has: page.getByTestId('artifact-label').getByText(name, { exact: true }) });
  for (const name of ['reference-artifact.json', 'guidellm-0.8.1-c4.json', 'profile_export.jsonl']) {
    await row(name).getByTestId('select-artifact').uncheck();
  }
  await page.getByTestId('single-run').waitFor();
  const notes = await page.getByTestId('foreign-notes').textContent();
  assert.match(notes, /Read as vLLM \(version not recorded\): `bench serve` result with per-request arrays/);
  assert.match(notes, /E2E here — vLLM's latency \(`latencies`\): request start to the last content chunk/);
  await page.getByTestId('chart-hist-ttfo').locator('canvas').first().waitFor();
  await page.getByTestId('chart-timeline').locator('canvas').first().waitFor();
  await page.getByTestId('chart-read-gaps').locator('canvas').first().waitFor();
  // Its rows export like a strobe run's, and an SLO judges them (vLLM's E2E, as its notes say).
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
  const csv = readFileSync(await download.path(), 'utf8').trim().split(/\r?\n/);
  assert.equal(csv.length, 49, 'a header and 48 rows');
  const vllm = JSON.parse(readFileSync(`${PEERS}/vllm/vllm-0.33.0-c4.json`, 'utf8'));
  const sorted = [...vllm.latencies].map((seconds) => seconds * 1000).sort((a, b) => a - b);
  const limit = Math.round(sorted[23] * 1000) / 1000;
  const met = sorted.filter((ms) => ms <= limit).length;
  await page.getByTestId('slo-input').fill(`e2el:${limit}`);
  const outcome = page.getByTestId('slo-outcome');
  await page.waitForFunction(() => document.querySelector('[data-testid=slo-outcome]')?.dataset.attainment);
  assert.equal(Number(await outcome.getAttribute('data-attainment')), met / 48);
  assert.deepEqual(errors, []);
  await page.close();
});

test("an AIPerf run's two exports dropped together are one run", async () => {
  const { page, errors } = await env.open();
  const folder = `${PEERS}/aiperf/aiperf-0.13.0-c1`;
  await page.getByTestId('artifact-input').setInputFiles([`${folder}/profile_export_aiperf.json`, `${folder}/profile_export.jsonl`]);
  const read = await verdicts(page, 1);
  assert.deepEqual(read, { 'profile_export.jsonl': 'read as AIPerf 0.13.0' });
  await page.getByTestId('single-run').waitFor();
  assert.match(await page.getByTestId('library-row').getByTestId('artifact-status').textContent(), /48 request rows/);
  await page.getByTestId('chart-hist-ttft').locator('canvas').first().waitFor();
  assert.deepEqual(errors, []);
  await page.close();
});

test('a broken or unknown file says what is wrong and shows nothing of it', async () => {
  const { page, errors } = await env.open();
  const vllm = JSON.parse(readFileSync(`${PEERS}/vllm/vllm-0.33.0-c4.json`, 'utf8'));
  vllm.itls.pop();
  await page
    .getByTestId('artifact-input')
    .setInputFiles([file('short-itls.json', JSON.stringify(vllm)), file('other.json', '{"hello": 1}')]);
  const read = await verdicts(page, 2);
  assert.deepEqual(read, { 'short-itls.json': 'invalid', 'other.json': 'invalid' });
  const status = async (name) =>
    page
      .getByTestId('library-row')
      .filter({ has: page.getByTestId('artifact-label').getByText(name, { exact: true }) })
      .getByTestId('artifact-status')
      .textContent();
  assert.match(await status('short-itls.json'), /looks like a vLLM file, but `itls` has 47 entries where `ttfts` has 48/);
  assert.match(await status('other.json'), /Not a file strobe reads: it reads .*vLLM .*GuideLLM .*AIPerf/);
  assert.equal(await page.getByTestId('select-artifact').count(), 0, 'neither can be selected');
  assert.deepEqual(errors, []);
  await page.close();
});
