// End-to-end: the warm-up before a measured run, and the transport facts of every row.
//
// The built app benchmarks strobe-sim in headless Chromium. The simulator's truth log shows
// when the warm-up requests (no canary marker: the priming round's max_tokens 1, the check
// rounds' max_tokens 8) ran; rows are joined to their
// truth records by canary marker, so warm-up records never join. The first wave of a run is
// where a cold start shows: its TTFO then includes opening connections and CORS preflights,
// time the server never saw.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { stampMs } from './truth.mjs';
import { percentile } from './bench/stats.mjs';
import { startSim, unusedPort } from './sim.mjs';
import { validateArtifact, recomputeArtifact } from './artifact-tools.mjs';
import { judgeOnAQuietHost, timingBar } from './quiet-host.mjs';

const CONCURRENCY = 4;
const REQUESTS = 16;
/** The priming round: two per connection the slots can use (RunPlan::warmup_requests). */
const PRIMING_REQUESTS = 2 * Math.min(CONCURRENCY, 6);
/** A check round: one per connection (RunPlan::warmup_check_requests_per_endpoint). */
const CHECK_REQUESTS = Math.min(CONCURRENCY, 6);
/** plan::WARMUP_CHECK_ROUNDS and prompt::WARMUP_CHECK_MAX_TOKENS. */
const MOST_CHECK_ROUNDS = 3;
const CHECK_MAX_TOKENS = 8;
/** The first wave's median TTFO error against the server's truth may not exceed this. */
const FIRST_WAVE_MEDIAN_MS = 2;
/** core::observe::BROWSER_WAIT_FLAG_MS: a row that waited longer in the browser is flagged. */
const BROWSER_WAIT_FLAG_MS = 5;
const SETTINGS = {
  requests: String(REQUESTS),
  concurrency: String(CONCURRENCY),
  context_tokens: '1024',
  max_tokens: '32',
  request_canaries: 'true',
};
const env = browserAndSite();

const runFromPage = env.run;

/**
 * The first `CONCURRENCY` rows by start, each held against its truth record on absolute
 * moments: `ttfoError` is the client's first-output moment (run start + started_at_ms + TTFO)
 * minus the server's, as run.test.mjs measures it; `ttfoExcess` is the client's TTFO minus the
 * server's own (first output sent − request received), which also counts what happened before
 * the request reached the server (browser queue, connection, preflight, upload, scheduling).
 */
function firstWave(artifact, truth) {
  const byMarker = new Map(truth.records.map((record) => [record.marker, record]));
  const runStartMs = artifact.started_at_unix_ns / 1e6;
  return [...artifact.request_timings]
    .sort((a, b) => a.started_at_ms - b.started_at_ms)
    .slice(0, CONCURRENCY)
    .map((row) => {
      const record = byMarker.get(row.request_canary.marker);
      assert.ok(record, `truth has ${row.request_canary.marker}`);
      const start = runStartMs + row.started_at_ms;
      const serverFirst = stampMs(record.times.first_reasoning_byte_sent ?? record.times.first_content_byte_sent);
      const serverTtfo = serverFirst - stampMs(record.times.received);
      return {
        index: row.request_index,
        ttfoError: start + row.time_to_first_output_ms - serverFirst,
        ttfoExcess: row.time_to_first_output_ms - serverTtfo,
        clientQueue: row.client_queue_ms,
        newConnection: row.new_connection,
      };
    });
}

const describe = (wave) =>
  wave
    .map((r) => `#${r.index}: error ${r.ttfoError.toFixed(2)} excess ${r.ttfoExcess.toFixed(2)} queue ${r.clientQueue?.toFixed(2)} new ${r.newConnection}`)
    .join(' | ');

const isWarmup = (record) => record.marker === null && [1, CHECK_MAX_TOKENS].includes(record.max_tokens);
const isPriming = (record) => isWarmup(record) && record.max_tokens === 1;

test('the warm-up primes every slot first and is in no row; rows carry their transport facts', async (t) => {
  // The first wave's clock bars are timing bars, judged on a quiet host (quiet-host.mjs).
  await judgeOnAQuietHost(t, warmRun);
});

/** One run with the warm-up on, with every check. */
async function warmRun({ measure }) {
  const sim = await startSim(['--seed', '7']);
  let page;
  try {
    const opened = await runFromPage({ base_url: sim.baseUrls[0], ...SETTINGS }, { measure });
    page = opened.page;
    const { errors } = opened;
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'warmup-on');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.equal(recomputeArtifact(path).exitCode, 0, 'metrics recompute from rows exactly');

    const warmup = artifact.client.warmup;
    assert.ok(warmup.check_rounds >= 1 && warmup.check_rounds <= MOST_CHECK_ROUNDS, `check rounds ${warmup.check_rounds}`);
    assert.equal(warmup.requests, PRIMING_REQUESTS + warmup.check_rounds * CHECK_REQUESTS);
    assert.equal(warmup.connections, 'ready', 'a check round saw every slot on an open connection of its own');
    assert.equal(warmup.failures, 0);
    assert.ok(Number.isFinite(warmup.duration_ms) && warmup.duration_ms > 0, `duration ${warmup.duration_ms}`);
    assert.equal(artifact.requests, REQUESTS);
    assert.equal(artifact.completed, REQUESTS, JSON.stringify(artifact.failures));
    assert.equal(artifact.request_timings.length, REQUESTS, 'no row is a warm-up');

    const truth = await sim.truth();
    const warm = truth.records.filter(isWarmup);
    const measured = truth.records.filter((record) => record.marker !== null);
    assert.equal(warm.length, warmup.requests, 'the artifact counts every warm-up request');
    assert.equal(warm.filter(isPriming).length, PRIMING_REQUESTS, 'two priming requests per slot');
    assert.equal(measured.length, REQUESTS);
    assert.equal(truth.records.length, warmup.requests + REQUESTS, 'nothing else reached the server');
    // The dry run before the warm-up went through the measuring code without sending anything.
    assert.ok(artifact.client.dry_run_requests >= REQUESTS, `dry run ${artifact.client.dry_run_requests}`);
    // Check rounds follow the priming round: none was received before every priming answer
    // ended. A response's end is its last write's start (`last_write_started`), the earliest the
    // client can have read it: the server stamps a write's return only after the write, and a
    // server descheduled in between (once 8.7 ms here) would make that stamp trail what the
    // client did next.
    const ended = (record) => {
      assert.ok(record.times.last_write_started, `warm-up ${record.request_id} has no last write`);
      return stampMs(record.times.last_write_started);
    };
    const primingEnd = Math.max(...warm.filter(isPriming).map(ended));
    const firstCheck = Math.min(...warm.filter((record) => !isPriming(record)).map((record) => stampMs(record.times.received)));
    assert.ok(firstCheck > primingEnd, `a check request arrived ${(primingEnd - firstCheck).toFixed(2)} ms before the priming ended`);
    // Every warm-up was answered and ended before the first measured request arrived.
    const measuredStart = Math.min(...measured.map((record) => stampMs(record.times.received)));
    for (const record of warm) {
      const answered = stampMs(record.times.first_reasoning_byte_sent ?? record.times.first_content_byte_sent);
      assert.ok(answered !== null && answered < measuredStart, `warm-up ${record.request_id} answered before the run`);
      const end = ended(record);
      assert.ok(end < measuredStart, `warm-up ${record.request_id} ended ${(end - measuredStart).toFixed(2)} ms after the first measured request arrived`);
    }
    // The run's start is read after the warm-up, so its first request starts right away.
    const firstStart = Math.min(...artifact.request_timings.map((row) => row.started_at_ms));
    timingBar(firstStart < 10, `first request ${firstStart.toFixed(3)} ms after the run start`);

    for (const row of artifact.request_timings) {
      const name = `row ${row.request_index}`;
      assert.equal(row.http_protocol, 'http/1.1', name);
      assert.equal(row.new_connection, false, `${name}: the warm-up opened its connection`);
      assert.ok('preflight' in row && row.preflight === null, `${name}: preflight is not observable`);
      assert.ok(Number.isFinite(row.client_queue_ms) && row.client_queue_ms >= 0, `${name}: ${row.client_queue_ms}`);
      assert.equal(row.chunk_arrivals_ms, undefined, 'traces are off by default');
    }

    const wave = firstWave(artifact, truth);
    console.log('warm-up on, first wave (ms):', describe(wave));
    // The warm-up's effect is in the transport facts above (no new connection, no preflight
    // wait); against the truth, the first wave is held to the same median bar as the rest of a
    // run. A single row can still be a few ms late when this 2-core machine deschedules a side.
    const waveErrors = wave.map((row) => Math.abs(row.ttfoError)).sort((a, b) => a - b);
    const waveMedian = percentile(waveErrors, 50);
    timingBar(waveMedian <= FIRST_WAVE_MEDIAN_MS, `first wave TTFO median off the truth by ${waveMedian.toFixed(2)} ms`);
    assert.deepEqual(errors, []);
  } finally {
    await page?.close();
    await sim.stop();
  }
}

test('without the warm-up the first wave pays for its connections inside TTFO', async () => {
  const sim = await startSim(['--seed', '7']);
  try {
    const { page, errors } = await runFromPage({ base_url: sim.baseUrls[0], ...SETTINGS, warmup: 'false', traces: 'true' });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'warmup-off');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.client.warmup, undefined, 'no warm-up ran');
    assert.equal(artifact.completed, REQUESTS, JSON.stringify(artifact.failures));
    const truth = await sim.truth();
    assert.equal(truth.records.filter(isWarmup).length, 0);

    for (const row of artifact.request_timings) {
      const arrivals = row.chunk_arrivals_ms;
      assert.ok(Array.isArray(arrivals) && arrivals.length > 0, `row ${row.request_index} has a trace`);
      assert.ok(arrivals.every((ms, i) => i === 0 || ms >= arrivals[i - 1]), 'arrivals are in order');
      // The first reads carry the role chunk; the read that carried the first output is traced.
      assert.ok(arrivals.some((ms) => Math.abs(ms - row.time_to_first_output_ms) < 1e-6), 'TTFO is a traced read');
      assert.ok(arrivals[0] <= row.time_to_first_output_ms + 1e-6);
      assert.ok(arrivals.at(-1) <= row.e2e_ms + 1e-6);
    }
    // The per-chunk view: gaps between reads, and each request's longest stall.
    await page.getByTestId('chart-read-gaps').locator('canvas').first().waitFor();
    await page.getByTestId('chart-stalls').locator('canvas').first().waitFor();
    assert.equal(await page.getByTestId('chart-read-gaps').locator('[role=img]').getAttribute('aria-label'), 'Gaps between stream reads');
    assert.equal(await page.getByTestId('chart-stalls').locator('[role=img]').getAttribute('aria-label'), 'Longest stall per request');

    // The endpoint check (GET /models) leaves one connection open, so the first wave must open
    // the rest. A request that opens its own says new_connection: true (usually all but one
    // of the wave); one whose CORS preflight opened it looks reused, because Resource Timing
    // folds the preflight into the request's entry, and shows the cost as browser wait
    // instead. Either way the cold wave says so; with the warm-up no row opens a connection
    // (the test above).
    const wave = firstWave(artifact, truth);
    console.log('warm-up off, first wave (ms):', describe(wave));
    for (const row of wave) assert.ok(Number.isFinite(row.clientQueue), `#${row.index} reports its wait`);
    const cold = wave.filter((row) => row.newConnection === true || row.clientQueue > BROWSER_WAIT_FLAG_MS);
    assert.ok(cold.length > 0, 'the cold first wave shows its connections');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('an unreachable endpoint ends the run in the error state with a reason and no rows', async () => {
  const port = await unusedPort();
  const { page } = await runFromPage({
    base_url: `http://127.0.0.1:${port}/v1`,
    model: 'strobe-sim-1',
    engine: 'strobe-sim',
    ...SETTINGS,
  });
  const status = page.getByTestId('status');
  assert.equal(await status.getAttribute('data-state'), 'error');
  assert.match(await status.textContent(), /Could not run: .{10,}/);
  await page.getByTestId('results-empty').waitFor();
  assert.equal(await page.getByTestId('download').count(), 0, 'no artifact');
  await page.close();
});

test('a failing warm-up stops the run before any measured request, with the reason', async () => {
  const sim = await startSim(['--fault-rate', '1', '--fault-kinds', 'http-500']);
  try {
    const { page } = await runFromPage({ base_url: sim.baseUrls[0], ...SETTINGS });
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    const text = await status.textContent();
    assert.match(text, /warm-up failed, so no request was measured/);
    assert.match(text, /HttpError: HTTP 500/);
    await page.getByTestId('results-empty').waitFor();
    assert.equal(await page.getByTestId('download').count(), 0, 'no artifact');
    const truth = await sim.truth();
    assert.equal(truth.records.length, PRIMING_REQUESTS, 'only the priming round reached the server');
    assert.ok(truth.records.every(isPriming), JSON.stringify(truth.records.map((r) => r.max_tokens)));
    await page.close();
  } finally {
    await sim.stop();
  }
});
