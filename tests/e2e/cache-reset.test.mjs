// End-to-end: a clean prefix cache between steps. With reset_prefix_cache=before_each_step a
// two-step sweep empties strobe-sim's prefix cache before each step's warm-up: the simulator's
// truth log shows each reset before the step's first measured request, that request finding
// nothing cached, and its metrics reading an empty cache; each artifact records the reset and
// what its first requests say of it, and the comparison and capacity views show what the
// server's own metrics said of each step. The results say in words whether the cache was
// emptied, for a run made in the page and for its file dropped on a fresh page. An engine
// without a reset is refused before anything is sent, a reset answered 404 stops the run
// before any measured request, with what to do, and Cancel during a slow reset ends the run
// having sent nothing (or, in a sweep, keeps the steps before it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { readZipEntries, validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

/** Clicks "Download sweep (.zip)" and reads its artifacts, each kept in test-results/. */
async function downloadSweep(page, name) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-sweep').click()]);
  const path = `test-results/${name}.zip`;
  copyFileSync(await download.path(), path);
  return readZipEntries(path).map(({ text }, index) => {
    const file = `test-results/${name}-${index + 1}.json`;
    writeFileSync(file, text);
    return { file, artifact: JSON.parse(text) };
  });
}

/** When the simulator had read a scrape or reset (`received`) or a request (`times.received`), Unix ms. */
const receivedMs = (record) => (record.times ? record.times.received : record.received).unix_ns / 1e6;

test('before_each_step empties the prefix cache before each step of a sweep', async () => {
  const sim = await startSim(['--seed', '51']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '6',
      concurrency: '2',
      context_tokens: '1024',
      prompt_cache_mode: 'shared',
      shared_prefix_tokens: '512',
      max_tokens: '16',
      sweep: 'concurrency:1,2',
      reset_prefix_cache: 'before_each_step',
      server_metrics: 'auto',
      // Often enough that each short step has samples inside its window.
      server_metrics_interval_ms: '100',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const steps = await downloadSweep(page, 'cache-reset-sweep');
    assert.equal(steps.length, 2);

    const truth = await sim.truth();
    const resets = truth.scrapes.filter((scrape) => scrape.endpoint === 'reset_prefix_cache');
    assert.equal(resets.length, 2, 'one reset per step');
    assert.ok(resets.every((reset) => reset.status === 200));
    assert.ok(resets[1].cleared_blocks > 0, 'the second reset emptied what the first step cached');
    const measured = truth.records
      .filter((record) => record.marker !== null)
      .sort((a, b) => receivedMs(a) - receivedMs(b));
    assert.equal(measured.length, 12);
    const metricsScrapes = truth.scrapes.filter((scrape) => scrape.endpoint === 'metrics');

    for (const [index, { file, artifact }] of steps.entries()) {
      assert.equal(validateArtifact(file).exitCode, 0, file);
      assert.equal(artifact.completed, 6, JSON.stringify(artifact.failures));
      const reset = resets[index];
      const resetAt = receivedMs(reset);
      // Every measured request of this step came after its reset, and of the step before, before.
      const stepRecords = measured.slice(index * 6, index * 6 + 6);
      assert.ok(stepRecords.every((record) => receivedMs(record) > resetAt), `step ${index + 1}`);
      if (index > 0) assert.ok(receivedMs(measured[index * 6 - 1]) < resetAt, 'the reset came between steps');
      // The step's first wave (as many as ran at once) reached an empty cache: one of them
      // found nothing cached, though later requests of the step found the shared prefix.
      const firstWave = stepRecords.slice(0, index + 1).map((record) => record.cached_tokens);
      assert.equal(Math.min(...firstWave), 0, `step ${index + 1}: ${firstWave}`);
      assert.ok(stepRecords.some((record) => record.cached_tokens > 0), 'the prefix is cacheable');
      // The scrape the page made right after the reset read an empty cache.
      const after = metricsScrapes.find((scrape) => receivedMs(scrape) > resetAt);
      assert.ok(after && receivedMs(after) < receivedMs(stepRecords[0]));
      assert.equal(after.metrics.kv_cache_usage_perc, 0);

      const block = artifact.prefix_cache_reset;
      assert.equal(block.policy, 'before_each_step');
      assert.equal(block.reset.engine, 'strobe-sim');
      assert.equal(block.reset.method, 'POST');
      assert.equal(block.reset.url, `${sim.origin}/reset_prefix_cache`);
      assert.equal(block.reset.status, 200);
      assert.ok(block.reset.t_ms < 0, 'sent before the measured run');
      assert.equal(block.reset.counters_after.kv_cache_use, 0);
      assert.equal(block.check.verdict, 'emptied', block.check.reason);
      assert.equal(block.check.first_wave_min_cached_tokens, 0);
      // On the run's clock: the reset reached the simulator a little after the page sent it.
      const lead = resetAt - artifact.started_at_unix_ns / 1e6 - block.reset.t_ms;
      assert.ok(lead > -5 && lead < 100, `sent at ${block.reset.t_ms} ms, received ${lead} ms later`);
    }
    // The two steps are compared and drawn as a capacity curve, with what the server's own
    // metrics said of each step: its queue and KV cache at peak.
    await page.getByTestId('compare-runs').waitFor();
    const waitingRow = page.locator('[data-testid=compare-table] tr[data-metric="server: waiting (peak)"]');
    assert.equal(await waitingRow.count(), 1, 'the comparison has the server queue row');
    const cells = await waitingRow.locator('td').allTextContents();
    assert.equal(cells.length, 3, cells.join(' | '));
    const peaks = steps.map(({ artifact }) => artifact.server_metrics.summary.gauges.waiting.max);
    assert.equal(cells[1], String(peaks[0]), cells.join(' | '));
    assert.ok(cells[2].startsWith(String(peaks[1])), cells.join(' | '));
    assert.equal(await page.locator('[data-testid=compare-table] tr[data-metric="server: KV cache (peak)"]').count(), 1);
    const capacity = page.getByTestId('capacity-view');
    const kvCells = await capacity.getByTestId('capacity-server-kv').allTextContents();
    assert.equal(kvCells.length, 2, kvCells.join(' | '));
    steps.forEach(({ artifact }, index) => {
      const percent = artifact.server_metrics.summary.gauges.kv_cache_use.max * 100;
      assert.ok(kvCells[index].endsWith(' %') && Math.abs(parseFloat(kvCells[index]) - percent) < 1, `${kvCells[index]} vs ${percent}`);
    });
    await capacity.getByTestId('chart-capacity-server').locator('canvas').first().waitFor();
    // The sweep's own table has the server's figures of each step too.
    const stepServer = await page.getByTestId('sweep-step-server').allTextContents();
    assert.equal(stepServer.length, 2);
    assert.ok(stepServer.every((text) => /^waiting \d+ · running \d+ · KV [\d.]+ %/.test(text)), stepServer.join(' | '));
    assert.deepEqual(errors, []);
  } finally {
    await sim.stop();
  }
});

test('the results say in words that the cache was emptied, for the run and for its dropped file', async () => {
  const sim = await startSim(['--seed', '54']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '6',
      concurrency: '2',
      context_tokens: '1024',
      prompt_cache_mode: 'shared',
      shared_prefix_tokens: '512',
      max_tokens: '16',
      reset_prefix_cache: 'before_run',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 60_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const expected =
      /^prefix cache emptied before the run \(strobe-sim POST \/reset_prefix_cache answered 200; cached tokens 0 in the first 2 requests\): its first requests met a cold cache$/;
    const note = page.getByTestId('cache-reset-note');
    assert.equal(await note.getAttribute('data-verdict'), 'emptied');
    assert.match((await note.textContent()).trim(), expected);
    const { path, artifact } = await downloadArtifact(page, 'cache-reset-note');
    assert.equal(artifact.prefix_cache_reset.check.verdict, 'emptied');
    await page.close();

    // The same file dropped on a fresh page says the same.
    const fresh = await env.open();
    await fresh.page.getByTestId('artifact-input').setInputFiles([path]);
    const dropped = fresh.page.getByTestId('single-run').getByTestId('cache-reset-note');
    await dropped.waitFor();
    assert.equal(await dropped.getAttribute('data-verdict'), 'emptied');
    assert.match((await dropped.textContent()).trim(), expected);
    assert.deepEqual([...errors, ...fresh.errors], []);
    await fresh.page.close();
  } finally {
    await sim.stop();
  }
});

test('a reset that does not empty the cache is said plainly, with what it means', async () => {
  const sim = await startSim(['--seed', '55']);
  try {
    const settings = {
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '1',
      context_tokens: '1024',
      prompt_cache_mode: 'shared',
      shared_prefix_tokens: '512',
      max_tokens: '16',
    };
    // A first run puts the shared prefix into the cache.
    const warm = await env.open(settings);
    await warm.page.getByTestId('run').click();
    await waitForRunEnd(warm.page, 60_000);
    await warm.page.close();
    // The "reset" answers 200 but empties nothing (the simulator's truth-log reset).
    const { page, errors } = await env.open({
      ...settings,
      reset_prefix_cache: 'before_run',
      reset_prefix_cache_url: `${sim.origin}/sim/truth/reset`,
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 60_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const note = page.getByTestId('cache-reset-note');
    assert.equal(await note.getAttribute('data-verdict'), 'not_emptied');
    const text = (await note.textContent()).trim();
    assert.match(text, /^prefix cache NOT emptied before the run \(POST http:\/\/127\.0\.0\.1:\d+\/sim\/truth\/reset answered 200, yet the first request found \d+ tokens cached\)/);
    assert.match(text, /its TTFT is a warm cache's/);
    assert.equal(await note.getAttribute('class'), 'warning');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('Cancel during a slow reset ends the run having sent nothing', async () => {
  // Every reset is held 5 s before the simulator does it and answers.
  const sim = await startSim(['--seed', '56', '--reset-delay-ms', '5000']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '1',
      context_tokens: '256',
      max_tokens: '16',
      reset_prefix_cache: 'before_run',
    });
    const status = page.getByTestId('status');
    await page.getByTestId('run').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'resetting');
    assert.match(await status.textContent(), /Emptying the server's prefix cache before the run/);
    const pressed = Date.now();
    await page.getByTestId('cancel').click();
    await waitForRunEnd(page, 10_000);
    assert.ok(Date.now() - pressed < 3_000, 'the reset in flight was aborted, not waited for');
    assert.equal(await status.getAttribute('data-state'), 'cancelled');
    assert.match(
      await status.textContent(),
      /^Cancelled while the server's prefix cache was being emptied \(POST http:\/\/127\.0\.0\.1:\d+\/reset_prefix_cache\): no request of the run was sent and nothing was measured/,
    );
    assert.deepEqual((await sim.truth()).records, [], 'not one request was sent');
    // The page is ready for the next run.
    assert.ok(await page.getByTestId('run').isEnabled());
    assert.ok(await page.getByTestId('cancel').isDisabled());
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('Cancel during a later step\'s reset keeps the steps measured before it', async () => {
  const sim = await startSim(['--seed', '57', '--reset-delay-ms', '1500']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '1',
      context_tokens: '256',
      max_tokens: '16',
      sweep: 'concurrency:1,2',
      reset_prefix_cache: 'before_each_step',
    });
    await page.getByTestId('run').click();
    // The first step is filed, and the second step's reset is under way.
    await page.getByTestId('sweep-step').first().waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'resetting');
    const before = (await sim.truth()).records.filter((record) => record.marker !== null).length;
    await page.getByTestId('cancel').click();
    await waitForRunEnd(page, 10_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('sweep-end').textContent(), /^Stopped: .*cancel/i);
    const steps = await downloadSweep(page, 'cache-reset-cancelled');
    assert.equal(steps.length, 1, 'the first step is kept');
    assert.equal(steps[0].artifact.completed, 4);
    assert.equal(steps[0].artifact.sweep.stop_reason, 'cancelled');
    const measured = (await sim.truth()).records.filter((record) => record.marker !== null).length;
    assert.equal(before, 4);
    assert.equal(measured, 4, 'the second step sent nothing');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('an engine without a reset is refused at the field, before Run', async () => {
  const sim = await startSim(['--seed', '52']);
  try {
    const { page } = await env.open({
      base_url: sim.baseUrls[0],
      engine: 'tgi',
      requests: '4',
      concurrency: '1',
      context_tokens: '256',
      max_tokens: '16',
      reset_prefix_cache: 'before_run',
    });
    const refusal = page.getByTestId('error-reset_prefix_cache');
    assert.match(await refusal.textContent(), /Hugging Face TGI has no route that empties its prefix cache/);
    assert.match(await refusal.textContent(), /set reset_prefix_cache to off/);
    assert.ok(await page.getByTestId('run').isDisabled(), 'Run waits for the field to be fixed');
    const truth = await sim.truth();
    assert.deepEqual(truth.records, [], 'no request was sent');
    assert.deepEqual(truth.scrapes, [], 'no reset was sent');
  } finally {
    await sim.stop();
  }
});

test('a reset answered 404 stops the run before any measured request, saying what to do', async () => {
  const sim = await startSim(['--seed', '53']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '1',
      context_tokens: '256',
      max_tokens: '16',
      reset_prefix_cache: 'before_run',
      reset_prefix_cache_url: `${sim.origin}/no_such_reset`,
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 30_000);
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    const message = await status.textContent();
    assert.match(message, /prefix-cache reset failed, so nothing was measured/);
    assert.match(message, /answered 404 to POST http:\/\/127\.0\.0\.1:\d+\/no_such_reset/);
    assert.match(message, /check reset_prefix_cache_url, or set reset_prefix_cache to off/);
    assert.deepEqual((await sim.truth()).records, [], 'not one request was sent');
    // The browser logs the 404 itself; nothing else went wrong on the page.
    assert.deepEqual(
      errors.filter((error) => !/404/.test(error)),
      [],
    );
  } finally {
    await sim.stop();
  }
});
