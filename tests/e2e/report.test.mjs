// End-to-end: the one-file report. A run against strobe-sim serving a model with a hostile name,
// behind an API key, is saved with Save report (the key is nowhere in it); the file opens from file:// in a fresh, offline browser that
// records every request (there must be none), shows the numbers and the charts with values on
// hover, and shows the hostile name as text that runs nothing. Dropped back on the page, it
// loads the same run; a damaged report says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { collectPageErrors, launchBrowser } from './browser.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const HOSTILE = '<img src=x onerror="window.__pwned=(window.__pwned||0)+1">';
const KEY = 'sk-report-never-in-the-file-7d41';

/** The files a report carries, as the page reads them back. */
function carriedFiles(html) {
  const open = '<script type="application/json" id="strobe-artifacts">';
  const start = html.indexOf(open) + open.length;
  const end = html.indexOf('</script>', start);
  return JSON.parse(html.slice(start, end)).files;
}

/** The single-run view's "Summary as Markdown": every headline number of the selected run. */
async function summaryMarkdown(page) {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('single-run').getByTestId('export-markdown').click(),
  ]);
  return readFileSync(await download.path(), 'utf8');
}

/** Drops `files` ({name, text, type}) on the drop zone as a drag from the desktop does. */
async function dropFiles(page, files) {
  await page.getByTestId('drop-zone').evaluate((zone, files) => {
    const transfer = new DataTransfer();
    for (const file of files) transfer.items.add(new File([file.text], file.name, { type: file.type }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }, files);
}

test('a saved report opens offline from disk, fetches nothing, runs no hostile text and loads again', async () => {
  const sim = await startSim(['--seed', '37', '--model', HOSTILE, '--api-key', KEY]);
  let reportPath;
  let artifactText;
  let runLabel;
  let markdown;
  try {
    const settings = {
      base_url: sim.baseUrls[0],
      model: HOSTILE,
      requests: '12',
      concurrency: '3',
      context_tokens: '256',
      max_tokens: '16',
      slo: 'ttft:5000',
    };
    const { page, errors } = await env.open(settings);
    await page.getByTestId('api-key').fill(KEY);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    await page.getByTestId('single-run').waitFor();
    runLabel = (await page.getByTestId('artifact-label').first().textContent()).trim();
    markdown = await summaryMarkdown(page);
    const artifact = await downloadArtifact(page, 'report-run');
    artifactText = readFileSync(artifact.path, 'utf8');
    assert.equal(artifact.artifact.model, HOSTILE);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('single-run').getByTestId('save-report').click(),
    ]);
    assert.match(download.suggestedFilename(), /^strobe-report-.*\.html$/);
    reportPath = resolve('test-results/report.html');
    copyFileSync(await download.path(), reportPath);
    assert.match(await page.getByTestId('report-note').textContent(), /drop it on this page/);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }

  const html = readFileSync(reportPath, 'utf8');
  // The artifact rides along byte for byte; the key never does (artifacts hold none).
  const carried = carriedFiles(html);
  assert.equal(carried.length, 1);
  assert.equal(carried[0].text, artifactText, 'the carried artifact is the downloaded one');
  assert.ok(!html.includes(KEY), 'the API key the run was sent with is not in the report');
  assert.ok(!html.includes('<img'), 'the hostile name is escaped everywhere');
  assert.ok(html.length < 1_500_000, `${html.length} bytes`);

  // A fresh browser, offline, that records every request the report makes.
  const fresh = await launchBrowser();
  try {
    await fresh.setOffline(true);
    const requests = [];
    fresh.on('request', (request) => requests.push(request.url()));
    const url = pathToFileURL(reportPath).href;
    // Anything but the report itself is recorded and refused.
    await fresh.route('**/*', (route) => {
      if (route.request().url() === url) return route.continue();
      requests.push(`routed: ${route.request().url()}`);
      return route.abort();
    });
    const page = await fresh.newPage();
    const errors = collectPageErrors(page);
    await page.goto(url);
    await page.waitForFunction(() => document.documentElement.dataset.hover === 'ready');

    assert.match(await page.getByTestId('report-title').textContent(), /^strobe report: /);
    const identity = await page.getByTestId('report-identity').textContent();
    assert.ok(identity.includes(`model: ${HOSTILE}`), identity);
    assert.equal(await page.locator('img').count(), 0, 'no element came from the name');
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran');
    assert.match(await page.getByTestId('report-card-requests').textContent(), /12 ok/);
    assert.match(await page.getByTestId('report-card-ttft').textContent(), /TTFT p50\d/);
    assert.match(await page.getByTestId('report-slo').textContent(), /^SLO: /);
    assert.match(await page.getByTestId('report-card-goodput').textContent(), /Goodput/);
    assert.ok((await page.getByTestId('report-notes').locator('li').count()) > 0, 'measurement notes');
    const drawn = await page.locator('figure[data-testid=report-chart] svg.chart').count();
    assert.ok(drawn >= 10, `${drawn} charts drawn`);

    // Hover over the TTFT CDF's first point: its values, as text.
    const chart = page.locator('figure[data-chart="run-cdf-ttft"]');
    await chart.scrollIntoViewIfNeeded();
    const point = await chart.evaluate((figure) => {
      const series = JSON.parse(document.getElementById('strobe-hover').textContent)['run-cdf-ttft'].s[0];
      const at = (t, v) => t[2] + ((v - t[0]) / (t[1] - t[0])) * (t[3] - t[2]);
      const svg = figure.querySelector('svg');
      const i = 2 * Math.floor(series.d.length / 4);
      const screen = new DOMPoint(at(series.x, series.d[i]), at(series.y, series.d[i + 1])).matrixTransform(svg.getScreenCTM());
      return { x: screen.x, y: screen.y, value: series.d[i] };
    });
    await page.mouse.move(point.x, point.y);
    const tip = chart.locator('.tip');
    await tip.waitFor({ state: 'visible' });
    const tipText = await tip.textContent();
    assert.match(tipText, /TTFT \(ms\): [\d,.]+ · Requests at or below \(%\): [\d.]+/, tipText);

    assert.deepEqual(errors, [], 'no console error: the policy allowed the style and the script');
    assert.deepEqual(
      requests.filter((request) => request !== url),
      [],
      'the report asks the network for nothing',
    );
  } finally {
    await fresh.close();
  }

  // Dropped on the page, the report loads the same run; a damaged one says what is wrong.
  const { page, errors } = await env.open();
  await dropFiles(page, [{ name: 'report.html', text: html, type: 'text/html' }]);
  await page.getByTestId('single-run').waitFor();
  assert.equal((await page.getByTestId('artifact-label').first().textContent()).trim(), runLabel);
  assert.equal(await page.getByTestId('verdict').first().textContent(), 'valid');
  assert.match(await page.getByTestId('artifact-status').first().textContent(), /Valid artifact with 12 request rows/);
  assert.equal(await summaryMarkdown(page), markdown, 'the same numbers as the run saved');
  const damaged = html.replace('"format":"strobe-report/1"', '"format":"strobe-report/1"]');
  writeFileSync('test-results/report-damaged.html', damaged);
  await page.getByTestId('artifact-input').setInputFiles(['test-results/report-damaged.html']);
  const card = page.getByTestId('library-row').filter({ hasText: 'report-damaged.html' });
  await card.waitFor();
  assert.match(await card.getByTestId('artifact-status').textContent(), /strobe report is damaged/);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(errors, []);
  await page.close();
});
