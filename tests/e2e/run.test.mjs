// End-to-end: the built app, served on one origin, benchmarks strobe-sim on another origin in
// headless Chromium; the downloaded artifact is validated by the core and every row is held
// against the simulator's own truth log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact, recomputeArtifact } from './artifact-tools.mjs';
import { TRUTH_RUN_SETTINGS } from './truth.mjs';

const env = browserAndSite();

const runFromPage = env.run;


test('24 requests at concurrency 4 with canaries: a valid artifact whose rows the simulator confirms', async () => {
  const sim = await startSim(['--seed', '7']);
  try {
    const { page, errors } = await runFromPage({ base_url: sim.baseUrls[0], ...TRUTH_RUN_SETTINGS });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, suggested, artifact } = await downloadArtifact(page, 'run-c4');
    await page.screenshot({ path: 'test-results/run-finished.png', fullPage: true });

    assert.match(suggested, /^benchmark-\d{8}T\d{6}Z\.json$/);
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.equal(report[0].generation, 'modern');
    assert.equal(recomputeArtifact(path).exitCode, 0, 'metrics recompute from rows exactly');

    assert.equal(artifact.requests, 24);
    assert.equal(artifact.completed, 24, JSON.stringify(artifact.failures));
    assert.equal(artifact.concurrency, 4);
    assert.equal(artifact.engine, 'strobe-sim');
    assert.equal(artifact.model, 'strobe-sim-1');
    assert.equal(artifact.base_url, sim.baseUrls[0]);
    assert.equal(artifact.client.name, 'strobe');
    assert.equal(artifact.client.measurement_thread, 'worker', 'the worker measures by default');
    assert.equal(artifact.client.cross_origin_isolated, true);
    assert.ok(artifact.client.timer_resolution_ms <= 0.1, `timer ${artifact.client.timer_resolution_ms}`);
    assert.deepEqual(artifact.client.transport.http_protocols_seen, ['http/1.1']);
    assert.equal(artifact.client.transport.connection_limit_suspected, false);
    assert.ok(!JSON.stringify(artifact).includes('Bearer'), 'no credential in the artifact');
    assert.equal(artifact.measurement_protocol, 'capacity-v4-reasoning');

    // Every row is a request the simulator served, with the usage it reported.
    const truth = await sim.truth();
    const byMarker = new Map(truth.records.map((record) => [record.marker, record]));
    for (const row of artifact.request_timings) {
      const record = byMarker.get(row.request_canary.marker);
      assert.ok(record, `truth has ${row.request_canary.marker}`);
      assert.equal(row.prompt_tokens, record.usage.prompt_tokens);
      assert.equal(row.output_tokens, record.usage.completion_tokens);
      assert.equal(row.cached_tokens, record.cached_tokens);
    }
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a cancelled run keeps every finished row and accounts for every request', async () => {
  const sim = await startSim(['--decode-interval-ms', '25']);
  try {
    const { page, errors } = await runFromPage(
      { base_url: sim.baseUrls[0], requests: '24', concurrency: '2', context_tokens: '1024', max_tokens: '32' },
      { cancelAfterDone: 3, liveCharts: true },
    );
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('status').textContent(), /cancelled/);
    const { path, artifact } = await downloadArtifact(page, 'run-cancelled');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.ok(artifact.completed >= 3 && artifact.completed < 24, `completed ${artifact.completed}`);
    assert.equal(artifact.completed + artifact.failed, 24);
    assert.equal(artifact.request_timings.length, artifact.completed);
    assert.equal(artifact.performance_eligible, false);
    assert.equal(artifact.metrics.throughput_tok_s, null);
    const reasons = artifact.failures.map((failure) => failure.error_message);
    assert.ok(artifact.failures.every((failure) => failure.error_type === 'AbortError'), JSON.stringify(reasons));
    assert.ok(reasons.some((reason) => /before this request was sent/.test(reason)), 'unsent requests say so');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('429, 500 and mid-stream resets become classified failures and rows stay intact', async () => {
  const sim = await startSim(['--fault-rate', '0.4', '--fault-kinds', 'http-429,http-500,reset', '--seed', '3']);
  try {
    const { page } = await runFromPage({
      base_url: sim.baseUrls[0],
      requests: '24',
      concurrency: '4',
      context_tokens: '1024',
      max_tokens: '32',
      // The faults would hit the warm-up too, and a failed warm-up stops the run
      // (warmup.test.mjs); here every injected fault must land on a measured request.
      warmup: 'false',
    });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'run-faults');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.equal(recomputeArtifact(path).exitCode, 0);
    const truth = await sim.truth();
    const faulted = truth.records.filter((record) => record.faults.length > 0).length;
    assert.ok(faulted > 0, 'the simulator injected faults');
    assert.equal(artifact.failed, faulted, 'every injected fault is a failure, no more and no less');
    assert.equal(artifact.completed + artifact.failed, 24);
    const types = new Set(artifact.failures.map((failure) => failure.error_type));
    for (const type of types) assert.ok(['HttpError', 'StreamError'].includes(type), `unexpected ${type}`);
    for (const failure of artifact.failures) {
      assert.equal(failure.failure_class, 'request_error');
      assert.ok(failure.error_message.length > 10, 'a failure keeps its reason');
      if (failure.error_type === 'HttpError') assert.match(failure.error_message, /\b(429|500)\b/);
    }
    assert.equal(artifact.metrics.throughput_tok_s, null, 'throughput is withheld when requests failed');
    await expectFailuresTable(page, artifact.failed);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a stream that goes quiet is cut off after the timeout, with the reason, in the run and in the warm-up', async () => {
  // Every answer stops halfway and the simulator holds the connection open for a minute.
  const sim = await startSim(['--fault-rate', '1', '--fault-kinds', 'hang', '--hang-ms', '60000', '--seed', '5']);
  try {
    const settings = { base_url: sim.baseUrls[0], requests: '3', concurrency: '3', context_tokens: '1024', max_tokens: '32', timeout_s: '1' };
    const started = Date.now();
    const { page } = await runFromPage({ ...settings, warmup: 'false' });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { artifact } = await downloadArtifact(page, 'run-timeouts');
    assert.equal(artifact.failed, 3, JSON.stringify(artifact.failures));
    for (const failure of artifact.failures) {
      assert.equal(failure.error_type, 'TimeoutError');
      assert.match(failure.error_message, /no response data for 1 s/);
    }
    // Cut off about a second after the last data, not after the simulator's minute.
    assert.ok(Date.now() - started < 20_000, `the run took ${Date.now() - started} ms`);
    const truth = await sim.truth();
    // strobe closed each connection; the simulator would have held it for a minute.
    assert.ok(truth.records.every((record) => record.outcome === 'hung' && /the client closed the connection/.test(record.error ?? '')),
      JSON.stringify(truth.records.map((record) => [record.outcome, record.error])));
    await page.close();
  } finally {
    await sim.stop();
  }
  // The warm-up's requests are watched too: headers held back past the timeout stop the run
  // before anything is measured.
  const slow = await startSim(['--fault-rate', '1', '--fault-kinds', 'slow-headers', '--slow-headers-ms', '5000']);
  try {
    const { page } = await runFromPage({ base_url: slow.baseUrls[0], requests: '3', concurrency: '3', timeout_s: '1' });
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    assert.match(await status.textContent(), /warm-up failed, so no request was measured.*TimeoutError: no response data for 1 s/s);
    await page.close();
  } finally {
    await slow.stop();
  }
});

async function expectFailuresTable(page, count) {
  const rows = await page.getByTestId('failures-table').locator('tbody tr').count();
  assert.equal(rows, count);
}

test('thinking on and off give the v4 and v3 protocols; strict controlled output passes', async () => {
  const sim = await startSim();
  try {
    const base = { base_url: sim.baseUrls[0], requests: '6', concurrency: '3', context_tokens: '1024', max_tokens: '64' };
    const cases = [
      { name: 'thinking-on', settings: { ...base, thinking_mode: 'enabled' }, protocol: 'capacity-v4-reasoning' },
      { name: 'thinking-off', settings: { ...base, thinking_mode: 'disabled' }, protocol: 'capacity-v3' },
      {
        name: 'strict',
        settings: { ...base, thinking_mode: 'disabled', response_words: '16', controlled_output_policy: 'strict' },
        protocol: 'capacity-v3',
      },
    ];
    for (const { name, settings, protocol } of cases) {
      const { page } = await runFromPage(settings);
      const redact = name === 'strict';
      const { path, artifact } = await downloadArtifact(page, `run-${name}`, { redact });
      assert.equal(validateArtifact(path).exitCode, 0, name);
      assert.equal(artifact.base_url, redact ? '[operator identity redacted]' : sim.baseUrls[0], name);
      assert.equal(artifact.completed, 6, `${name}: ${JSON.stringify(artifact.failures)}`);
      assert.equal(artifact.measurement_protocol, protocol, name);
      assert.equal(artifact.serve_flags.thinking_mode, settings.thinking_mode);
      for (const row of artifact.request_timings) {
        if (protocol === 'capacity-v3') {
          assert.equal(row.reasoning_chunks, 0, name);
          assert.equal(row.time_to_first_output_ms, row.ttft_ms, `${name}: TTFO is TTFT without reasoning`);
        } else {
          assert.ok(row.reasoning_chunks > 0, name);
          assert.ok(row.time_to_first_output_ms < row.ttft_ms, `${name}: reasoning comes first`);
        }
      }
      if (name === 'strict') {
        assert.equal(artifact.controlled_output_policy, 'strict');
        assert.equal(artifact.metrics.controlled_output_exact_adherence, 6);
        for (const row of artifact.request_timings) {
          assert.equal(row.controlled_output.exact_adherence, true);
          assert.equal(row.controlled_output.requested_words, 16);
        }
      }
      await page.close();
    }
  } finally {
    await sim.stop();
  }
});
