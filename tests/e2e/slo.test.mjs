// End-to-end: service-level objectives in headless Chromium against strobe-sim. An SLO typed
// after a run re-judges it at once (attainment, the charts' thresholds and misses, the link, the
// CSV); a run started with an SLO records it in its artifact, and dropping that file restores
// it; a sweep stops once attainment falls below its floor and names its capacity at SLO.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync } from 'node:fs';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

/** The ECharts option of the chart with this test id, once it has a series named `series`. */
async function chartOption(page, testId, series = null) {
  const handle = await page.waitForFunction(
    ([id, name]) => {
      const element = document.querySelector(`[data-testid="${id}"] .chart-canvas`);
      const chart = element && window.echarts.getInstanceByDom(element);
      if (!chart) return null;
      const option = JSON.parse(JSON.stringify(chart.getOption()));
      return name === null || (option.series ?? []).some((s) => s.name === name) ? option : null;
    },
    [testId, series],
    { timeout: 15_000 },
  );
  return handle.jsonValue();
}

const seriesNamed = (option, name) => (option.series ?? []).filter((series) => series.name === name);

/** Types `text` into the SLO box and waits for the run's SLO line to say something new. */
async function typeSlo(page, text, lineId = 'run-slo') {
  const line = page.getByTestId(lineId);
  const before = (await line.count()) ? await line.textContent() : null;
  await page.getByTestId('slo-input').fill(text);
  await page.waitForFunction(
    ([id, previous]) => {
      const element = document.querySelector(`[data-testid="${id}"]`);
      return element && element.textContent !== previous;
    },
    [lineId, before],
  );
  return line;
}

test('an SLO typed after the run re-judges it: attainment, thresholds, misses, link and CSV', async () => {
  const sim = await startSim(['--seed', '41', '--decode-interval-ms', '5']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '24',
      concurrency: '4',
      context_tokens: '128',
      max_tokens: '16',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.equal(await page.getByTestId('run-slo').count(), 0, 'no SLO, no SLO line');
    const { artifact } = await downloadArtifact(page, 'slo-after');
    assert.equal(artifact.slo, undefined, 'a run without an SLO records none');

    // A TTFT limit at the 12th-fastest request: exactly the requests at or below it meet it.
    const ttfts = artifact.request_timings.map((row) => row.ttft_ms).sort((a, b) => a - b);
    const limit = Math.round(ttfts[11] * 1000) / 1000;
    const met = ttfts.filter((ttft) => ttft <= limit).length;
    const line = await typeSlo(page, `ttft:${limit}`);
    assert.equal(Number(await line.getAttribute('data-attainment')), met / 24);
    assert.match(await line.textContent(), new RegExp(`met \\(${met} of 24\\)`));
    assert.match(await line.textContent(), /goodput [\d.]+ req\/s/);
    assert.ok(page.url().includes(`slo=ttft%3A${limit}`), page.url());

    // The histogram and CDF of TTFT draw the bound; the timeline rings each miss.
    for (const id of ['chart-hist-ttft', 'chart-cdf-ttft']) {
      const option = await chartOption(page, id, 'SLO bound');
      assert.equal(seriesNamed(option, 'SLO bound')[0].markLine.data[0].xAxis, limit, id);
    }
    await page.getByTestId('latency-metric').getByText('TPOT', { exact: true }).click();
    const unbounded = await chartOption(page, 'chart-hist-tpot');
    assert.equal(seriesNamed(unbounded, 'SLO bound').length, 0, 'TPOT is not bounded');
    const timeline = await chartOption(page, 'chart-timeline', 'misses the SLO');
    assert.equal(seriesNamed(timeline, 'misses the SLO')[0].data.length, 24 - met);

    // The CSV says which rows met it.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    copyFileSync(await download.path(), 'test-results/slo-rows.csv');
    const [header, ...rows] = readFileSync('test-results/slo-rows.csv', 'utf8').trim().split('\r\n');
    const columns = header.split(',');
    assert.deepEqual(columns.slice(-2), ['meets_slo', 'slo_ttft']);
    const meets = rows.map((row) => row.split(',')[columns.indexOf('meets_slo')]);
    assert.equal(meets.filter((cell) => cell === 'true').length, met);

    // A changed SLO changes everything at once; a bad one says what to write and keeps the run.
    assert.equal(Number(await (await typeSlo(page, 'ttft:0.001')).getAttribute('data-attainment')), 0);
    assert.equal(Number(await (await typeSlo(page, 'ttft:60000,e2el:60000')).getAttribute('data-attainment')), 1);
    await page.getByTestId('slo-input').fill('ttft:soon');
    assert.match(await page.getByTestId('slo-error').textContent(), /must be a number of milliseconds/);
    assert.equal(await page.getByTestId('run-slo').count(), 0);
    assert.equal(await page.getByTestId('summary-table').count(), 1, 'the run is still shown');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a run held to an SLO records it, and dropping its file restores it', async () => {
  const sim = await startSim(['--seed', '42', '--decode-interval-ms', '5']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '12',
      concurrency: '3',
      context_tokens: '128',
      max_tokens: '16',
      slo: 'tpot:1000,ttft:60000',
      slo_target: '90',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    const { path, artifact } = await downloadArtifact(page, 'slo-held');
    assert.deepEqual(
      { ...artifact.slo, goodput_req_s: undefined, goodput_output_tok_s: undefined },
      {
        spec: 'ttft:60000,tpot:1000',
        bounds_ms: { ttft: 60000, tpot: 1000 },
        target: 0.9,
        sent: 12,
        met: 12,
        attainment: 1,
        goodput_req_s: undefined,
        goodput_output_tok_s: undefined,
        rejected_by: { ttft: 0, tpot: 0 },
      },
    );
    assert.ok(Math.abs(artifact.slo.goodput_req_s - 12 / (artifact.wall_clock_ms / 1000)) < 1e-9);
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.deepEqual(errors, []);
    await page.close();

    const { page: fresh, errors: freshErrors } = await env.open();
    assert.equal(await fresh.getByTestId('slo-input').inputValue(), '');
    await fresh.getByTestId('artifact-input').setInputFiles(path);
    const outcome = fresh.getByTestId('slo-outcome');
    await outcome.waitFor();
    assert.equal(await fresh.getByTestId('slo-input').inputValue(), 'ttft:60000,tpot:1000');
    assert.equal(await fresh.getByTestId('slo-target').inputValue(), '90');
    assert.match(await fresh.getByTestId('slo-note').textContent(), /restored from slo-held\.json/);
    assert.equal(Number(await outcome.getAttribute('data-attainment')), 1);
    assert.ok(fresh.url().includes('slo=ttft%3A60000%2Ctpot%3A1000'), fresh.url());
    assert.deepEqual(freshErrors, []);
    await fresh.close();
  } finally {
    await sim.stop();
  }
});

test('a sweep stops below its attainment floor and names its capacity at SLO', async () => {
  // At most 4 sequences at once: at c=8 half the requests wait a whole stream (16 × 10 ms) for
  // their first token, so a 150 ms TTFT bound holds up to c=4 and fails for about half at c=8.
  const sim = await startSim(['--seed', '43', '--max-num-seqs', '4', '--decode-interval-ms', '10'], { ports: 4 });
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      pool: sim.baseUrls.slice(1).join(' '),
      requests: '24',
      concurrency: '16',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'concurrency:1,4,8,16',
      slo: 'ttft:150',
      sweep_min_attainment: '75',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 180_000);
    assert.equal(await page.getByTestId('sweep-step').count(), 3, 'c=16 never ran');
    assert.match(await page.getByTestId('sweep-end').textContent(), /SLO attainment fell below sweep_min_attainment/);
    const atSlo = page.getByTestId('capacity-at-slo');
    await atSlo.waitFor();
    const text = await atSlo.textContent();
    console.log(`# ${text}`);
    assert.match(text, /95 % of requests meet the SLO up to about c=[\d.]+ \(interpolated between c=4 and c=8\)/);
    await page.getByTestId('chart-goodput').locator('canvas').first().waitFor();
    await page.getByTestId('chart-slo-attainment').locator('canvas').first().waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});
