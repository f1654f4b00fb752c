// End-to-end: a clean prefix cache between steps. With reset_prefix_cache=before_each_step a
// two-step sweep empties strobe-sim's prefix cache before each step's warm-up: the simulator's
// truth log shows each reset before the step's first measured request, that request finding
// nothing cached, and its metrics reading an empty cache; each artifact records the reset and
// what its first requests say of it. An engine without a reset is refused before anything is
// sent, and a reset answered 404 stops the run before any measured request, with what to do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { browserAndSite, waitForRunEnd } from './page.mjs';
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
    assert.deepEqual(errors, []);
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
