// End-to-end against a real inference server: llama.cpp's own `llama-server`, built from the
// source vendored in llama-cpp-python's PyPI sdist (scripts/setup-llama.sh), serving a tiny
// random-weight model (scripts/make-tiny-gguf.py) with 4 slots of 2,048 tokens. strobe learns
// its context window, caps prompts to fit before the run, measures tokens from `usage`, sizes
// prompts in the model's own tokens when asked to, keeps and classifies failed canaries, says
// plainly when the API key is wrong, and, with `llama-server --metrics`, reads the server's own
// /metrics beside the run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startLlama } from './llama.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();
let llama;
before(async () => {
  llama = await startLlama();
});
after(async () => {
  await llama?.stop();
});

/** Opens the page on the server with `settings`, presses Run and waits for the end. */
async function run(settings) {
  const { page, errors } = await env.open({
    base_url: llama.baseUrl,
    requests: '24',
    concurrency: '4',
    context_tokens: '256',
    max_tokens: '16',
    request_canaries: 'false',
    ...settings,
  });
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 180_000);
  return { page, errors };
}

/**
 * The page's console errors less the one line the endpoint check's scrape of /metrics gives a
 * llama-server started without --metrics (it answers 501, and the browser logs that itself),
 * which must be there once: the run asks no more.
 */
function besideTheMetricsCheck(errors) {
  const check = errors.filter((error) => /status of 501/.test(error));
  assert.equal(check.length, 1, errors.join('\n'));
  return errors.filter((error) => !/status of 501/.test(error));
}

test('24 requests at concurrency 4 measure tokens from usage and learn the window', async () => {
  const { page, errors } = await run({});
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
  const { path, artifact } = await downloadArtifact(page, 'llama-24');
  const { exitCode, report } = validateArtifact(path);
  assert.equal(exitCode, 0, JSON.stringify(report));
  assert.equal(artifact.engine, 'llamacpp', 'the engine comes from owned_by');
  assert.equal(artifact.completed, 24, JSON.stringify(artifact.failures));
  assert.equal(artifact.max_context_tokens, 2048, "one slot's context, from meta.n_ctx");
  for (const row of artifact.request_timings) {
    assert.equal(row.output_token_source, 'usage', `request ${row.request_index}`);
    assert.equal(row.output_tokens, 16, `request ${row.request_index} runs to max_tokens`);
    assert.ok(row.prompt_tokens > 0);
  }
  assert.match(await page.getByTestId('context-window').textContent(), /2,048 tokens \(meta\.n_ctx/);
  // llama-server sends no Timing-Allow-Origin: no time from the wire, and the block says why.
  assert.equal(artifact.client.from_wire.rows_with_wire_time, 0);
  assert.match(artifact.client.from_wire.unavailable, /Timing-Allow-Origin/);
  assert.equal(artifact.client.from_wire.ttft_p50_ms, null);
  for (const row of artifact.request_timings) assert.equal(row.ttft_from_wire_ms, null);
  // Without --metrics llama-server answers 501 on /metrics: the endpoint check says so before
  // the run, which then sends no scrape, and its block says why and what to do.
  assert.match(await page.getByTestId('metrics-check').textContent(), /\/metrics: HTTP 501: this server serves no metrics as started/);
  assert.deepEqual(artifact.server_metrics.samples, []);
  assert.equal(artifact.server_metrics.notes.length, 1, JSON.stringify(artifact.server_metrics.notes));
  assert.match(artifact.server_metrics.notes[0], /^not scraped: the endpoint check before the run found HTTP 501: .*started with --metrics/);
  assert.deepEqual(besideTheMetricsCheck(errors), []);
  await page.close();
});

test('context calibration sizes prompts in the server\'s own tokens', async () => {
  const { page, errors } = await run({ requests: '8', context_tokens: '512', context_calibration: 'true' });
  const { path, artifact } = await downloadArtifact(page, 'llama-calibrated');
  const { exitCode, report } = validateArtifact(path);
  assert.equal(exitCode, 0, JSON.stringify(report));
  assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
  const calibration = artifact.client.context_calibration;
  assert.equal(calibration.probes.length, 2, JSON.stringify(calibration));
  assert.ok(calibration.chars_per_token > 1 && calibration.chars_per_token < 6, JSON.stringify(calibration));
  const prompts = artifact.request_timings.map((row) => row.prompt_tokens).sort((a, b) => a - b);
  const median = prompts[prompts.length >> 1];
  assert.ok(Math.abs(median - 512) / 512 <= 0.02, `median ${median} prompt tokens for 512 planned: ${prompts}`);
  for (const row of artifact.request_timings) {
    assert.equal(row.planned_context_tokens, 512);
    assert.ok(Math.abs(row.prompt_tokens - 512) / 512 <= 0.05, `request ${row.request_index}: ${row.prompt_tokens}`);
  }
  const notes = await page.getByTestId('client-notes').locator('li').allTextContents();
  assert.ok(notes.some((note) => /context calibration/.test(note)), notes.join('\n'));
  assert.ok(!notes.some((note) => /server tokens per planned token/.test(note)), notes.join('\n'));
  assert.deepEqual(besideTheMetricsCheck(errors), []);
  await page.close();
});

test('a plan too large for the window is capped before the run, and says so', async () => {
  const { page, errors } = await run({ requests: '8', context_tokens: '4096', max_tokens: '64' });
  // 2,048 − max_tokens 64 − margin 1,024 leaves 960 tokens for each prompt.
  const note = await page.getByTestId('context-window').textContent();
  assert.match(note, /capped at 960 tokens/, note);
  const { artifact } = await downloadArtifact(page, 'llama-capped');
  assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
  assert.deepEqual(artifact.context_distribution, { 960: 8 });
  for (const row of artifact.request_timings) {
    assert.ok(row.prompt_tokens + 64 <= 2048, `request ${row.request_index}: ${row.prompt_tokens} prompt tokens fit`);
  }
  assert.deepEqual(besideTheMetricsCheck(errors), []);
  await page.close();
});

test('canaries a random model cannot follow fail as request_canary_failed, kept and classified', async () => {
  const { page } = await run({ requests: '4', request_canaries: 'true' });
  const { artifact } = await downloadArtifact(page, 'llama-canaries');
  assert.equal(artifact.completed, 0);
  assert.equal(artifact.failed, 4);
  for (const failure of artifact.failures) {
    assert.equal(failure.failure_class, 'request_canary_failed', JSON.stringify(failure));
  }
  assert.equal(await page.getByTestId('failures-table').locator('tbody tr').count(), 4);
  await page.close();
});

test('a wrong API key is refused at the form with what to do', async () => {
  const guarded = await startLlama(['--api-key', 'right-key']);
  try {
    const { page } = await env.open({ base_url: guarded.baseUrl });
    await page.getByTestId('api-key').fill('wrong-key');
    await page.getByTestId('load-models').click();
    const message = await page.getByTestId('preflight-error').textContent();
    assert.match(message, /answered 401/);
    assert.match(message, /refused the API key/);
    assert.ok(!message.includes('wrong-key'), 'the key is never shown');
    await page.getByTestId('api-key').fill('right-key');
    await page.getByTestId('load-models').click();
    await page.getByTestId('preflight-ok').waitFor();
    await page.close();
  } finally {
    await guarded.stop();
  }
});

test('with --metrics, the server\'s own llamacpp: series arrive beside the run', async () => {
  const scraped = await startLlama(['--metrics']);
  try {
    const { page, errors } = await env.open({
      base_url: scraped.baseUrl,
      requests: '24',
      concurrency: '4',
      context_tokens: '256',
      max_tokens: '32',
      request_canaries: 'false',
      server_metrics: 'auto',
      server_metrics_interval_ms: '100',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 180_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'llama-metrics');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.equal(artifact.completed, 24, JSON.stringify(artifact.failures));
    const block = artifact.server_metrics;
    assert.equal(block.source, `${scraped.origin}/metrics`);
    assert.equal(block.family, 'llamacpp', JSON.stringify(block.notes));
    assert.ok(block.samples.length >= 3, `${block.samples.length} samples; notes ${JSON.stringify(block.notes)}`);
    for (const [i, sample] of block.samples.entries()) {
      for (const name of [
        'llamacpp:requests_processing',
        'llamacpp:requests_deferred',
        'llamacpp:prompt_tokens_total',
        'llamacpp:tokens_predicted_total',
        'llamacpp:n_busy_slots_per_decode',
      ]) {
        assert.equal(typeof sample.values[name], 'number', `sample ${i} has ${name}`);
      }
    }
    // The scrapes saw the run: requests being processed at some scrape, and by the last one
    // at least every token the rows counted (the server's counter also holds the warm-up's).
    assert.ok(
      block.samples.some((sample) => sample.values['llamacpp:requests_processing'] > 0),
      JSON.stringify(block.samples.map((sample) => sample.values['llamacpp:requests_processing'])),
    );
    const generated = artifact.request_timings.reduce((sum, row) => sum + row.output_tokens, 0);
    const first = block.samples[0].values['llamacpp:tokens_predicted_total'];
    const last = block.samples.at(-1).values['llamacpp:tokens_predicted_total'];
    assert.ok(last - first >= generated, `the server generated ${last - first} tokens, the rows counted ${generated}`);
    // The summary reads llama.cpp's series by their common names, and the results say so.
    const { summary } = block;
    assert.ok(summary.gauges.running.max >= 1, JSON.stringify(summary.gauges));
    assert.ok(summary.counters.generation_tokens.delta > 0, JSON.stringify(summary.counters));
    const line = await page.getByTestId('server-line').textContent();
    assert.match(line, /^server \(llamacpp\): peak queue \d+, peak running \d+/);
    await page.getByTestId('chart-server').locator('canvas').first().waitFor();
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await scraped.stop();
  }
});
