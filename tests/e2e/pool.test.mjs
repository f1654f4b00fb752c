// End-to-end: past the browser's six HTTP/1.1 connections per origin. An endpoint pool (three
// ports of one strobe-sim) carries 16 concurrent streams with no queueing inside the browser;
// without a pool, concurrency 8 to one origin is detected and reported as queued, in the UI,
// the artifact and the rows. Also: the main-thread measurement mode, kept for comparison, runs
// and says so, and the quiet live view (`live_view=end`) draws nothing until its run ends. A
// measurement worker that cannot load, dies mid-run, or is cancelled while it starts (the run
// then ends as cancelled, having sent nothing) never leaves the run hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact, holdWorkerGlue, waitForRunEnd } from './page.mjs';
import { startSim, unusedPort } from './sim.mjs';
import { serverConcurrency } from './truth.mjs';
import { validateArtifact, recomputeArtifact } from './artifact-tools.mjs';

/** core::observe::BROWSER_WAIT_FLAG_MS: a row that waited longer in the browser is flagged. */
const BROWSER_WAIT_FLAG_MS = 5;
const env = browserAndSite();

const runFromPage = env.run;

function assertValid(path) {
  const { exitCode, report } = validateArtifact(path);
  assert.equal(exitCode, 0, JSON.stringify(report));
  assert.equal(recomputeArtifact(path).exitCode, 0, 'metrics recompute from rows exactly');
}

test('a pool of 3 ports carries 16 concurrent streams with no browser queueing', async () => {
  // 40 ms per token keeps every stream open long enough for all 16 to overlap.
  const sim = await startSim(['--seed', '11', '--max-num-seqs', '32', '--decode-interval-ms', '40'], { ports: 3 });
  try {
    const [base, ...pool] = sim.baseUrls;
    const { page, errors } = await runFromPage({
      base_url: base,
      pool: pool.join(' '),
      requests: '32',
      concurrency: '16',
      context_tokens: '1024',
      max_tokens: '32',
      request_canaries: 'true',
    });
    assert.equal(await page.getByTestId('connection-limit-warning').count(), 0, 'six per origin: no warning');
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const summary = await page.getByTestId('run-summary').textContent();
    assert.match(summary, /3 endpoints; at most 6 requests in flight to one origin\./);
    assert.match(summary, /Measured by strobe [0-9.]+ in a dedicated worker; timer resolution [0-9.]+ (µs|ms); cross-origin isolated\./);
    // The run joins the library; how it was measured is said once, above its charts.
    await page.getByTestId('single-run').waitFor();
    assert.equal(await page.getByTestId('client-notes').count(), 1);
    assert.match(await page.getByTestId('run-summary').getByTestId('client-notes').textContent(), /in a dedicated worker/);
    const { path, artifact } = await downloadArtifact(page, 'run-pool-c16');
    assertValid(path);
    assert.equal(artifact.completed, 32, JSON.stringify(artifact.failures));
    assert.equal(artifact.base_url, base, 'base_url stays the first endpoint');
    const { client } = artifact;
    assert.equal(client.measurement_thread, 'worker');
    assert.deepEqual(client.transport, {
      http_protocols_seen: ['http/1.1'],
      connection_limit_suspected: false,
      endpoints: 3,
      max_in_flight_per_origin: 6,
    });
    // Priming: two warm-up requests per connection each endpoint's slots use (6, 5 and 5
    // slots); then check rounds of one per connection until one shows them all open.
    assert.ok(client.warmup.check_rounds >= 1 && client.warmup.check_rounds <= 3, `check rounds ${client.warmup.check_rounds}`);
    assert.equal(client.warmup.requests, 12 + 10 + 10 + client.warmup.check_rounds * 16);
    assert.equal(client.warmup.connections, 'ready');
    assert.match(summary, /Warm-up: \d+ unmeasured requests before the run; every connection the first wave needs was shown open/);
    // A request queued for a connection waits until another request's stream ends, so its
    // wait would be at least the shortest E2E of the run (over a second here). The network
    // stack's own latency (1-25 ms on this 2-core machine under 16 streams) is no such wait.
    const shortestE2e = Math.min(...artifact.request_timings.map((row) => row.e2e_ms));
    // The warm-up's check rounds showed every slot an open connection of its own, so no row
    // may have opened one (with the priming round alone, one request of 32 did in about one
    // run of fifteen).
    const fresh = artifact.request_timings.filter((row) => row.new_connection === true);
    assert.deepEqual(fresh.map((row) => row.request_index), [], 'no measured request opened a connection');
    for (const row of artifact.request_timings) {
      assert.equal(typeof row.new_connection, 'boolean', `request ${row.request_index} says whether it opened a connection`);
      assert.equal(typeof row.client_queue_ms, 'number', `request ${row.request_index} has transport facts`);
      assert.ok(row.client_queue_ms < shortestE2e / 10, `request ${row.request_index} waited ${row.client_queue_ms} ms in the browser`);
      assert.equal(row.http_protocol, 'http/1.1');
    }

    const truth = await sim.truth();
    const measured = truth.records.filter((record) => record.marker);
    assert.equal(measured.length, 32);
    const ports = new Set(measured.map((record) => record.port));
    assert.equal(ports.size, 3, `requests reached ports ${[...ports]}`);
    assert.equal(serverConcurrency(measured), 16, 'the server streamed 16 at once');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('without a pool, concurrency 8 to one HTTP/1.1 origin is reported as browser queueing', async () => {
  const sim = await startSim(['--seed', '12', '--max-num-seqs', '32', '--decode-interval-ms', '20']);
  try {
    const { page, errors } = await runFromPage({
      base_url: sim.baseUrls[0],
      requests: '16',
      concurrency: '8',
      context_tokens: '1024',
      max_tokens: '32',
      request_canaries: 'true',
    });
    const warning = await page.getByTestId('connection-limit-warning').textContent();
    assert.match(warning, /up to 8 requests on one origin/);
    assert.match(warning, /endpoint pool/);
    const summary = await page.getByTestId('run-summary').textContent();
    assert.match(summary, /more than the browser's 6 connections|than the browser's 6 connections/);
    const { path, artifact } = await downloadArtifact(page, 'run-queued-c8');
    assertValid(path);
    assert.equal(artifact.completed, 16, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.transport.connection_limit_suspected, true);
    assert.equal(artifact.client.transport.max_in_flight_per_origin, 8);
    assert.equal(artifact.client.transport.endpoints, 1);
    // The requests that found no free connection say so in their rows: they waited for another
    // stream to end (hundreds of ms), far past the flag.
    const waited = artifact.request_timings.filter((row) => row.client_queue_ms > 10 * BROWSER_WAIT_FLAG_MS);
    assert.ok(waited.length >= 2, `rows that waited: ${artifact.request_timings.map((row) => row.client_queue_ms)}`);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a dead pool endpoint stops the run in the warm-up and is named', async () => {
  const sim = await startSim(['--seed', '14']);
  try {
    const dead = `http://127.0.0.1:${await unusedPort()}/v1`;
    const { page } = await runFromPage({
      base_url: sim.baseUrls[0],
      pool: dead,
      requests: '8',
      concurrency: '4',
      context_tokens: '1024',
      max_tokens: '32',
    });
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    const text = await status.textContent();
    assert.match(text, /warm-up failed, so no request was measured/);
    assert.ok(text.includes(`from ${dead}/chat/completions: `), text);
    assert.match(text, /TypeError/);
    assert.equal(await page.getByTestId('download').count(), 0, 'no artifact');
    const truth = await sim.truth();
    assert.ok(truth.records.every((record) => !record.marker), 'no measured request reached the live endpoint');
    await page.close();
  } finally {
    await sim.stop();
  }
});

/** A small run measured on the page's own thread (8 requests, two at a time, with canaries). */
const SMALL_MAIN_THREAD_RUN = {
  requests: '8',
  concurrency: '2',
  context_tokens: '1024',
  max_tokens: '32',
  request_canaries: 'true',
  measurement: 'main',
};

test('the main-thread mode measures too and says so', async () => {
  const sim = await startSim(['--seed', '13']);
  try {
    const { page, errors } = await runFromPage({ base_url: sim.baseUrls[0], ...SMALL_MAIN_THREAD_RUN });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('run-summary').textContent(), /Measured by strobe [0-9.]+ on the page's main thread/);
    const { path, artifact } = await downloadArtifact(page, 'run-main-thread');
    assertValid(path);
    assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.measurement_thread, 'main');
    assert.equal(artifact.client.transport.endpoints, 1);
    assert.ok(artifact.request_timings.every((row) => typeof row.client_queue_ms === 'number'));
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

/**
 * Opens the app with `settings`, watches what the run panel shows while the run is running (its
 * text each time it changes) and presses Run; `cancelAfterMs`: press Cancel that long after Run.
 */
async function watchedRun(settings, { cancelAfterMs = null } = {}) {
  const { page, errors } = await env.open(settings);
  await page.evaluate(() => {
    const status = document.querySelector('[data-testid=status]');
    window.__whileRunning = { texts: [], liveCounts: false };
    new MutationObserver(() => {
      if (status.dataset.state !== 'running') return;
      window.__whileRunning.texts.push(status.textContent);
      window.__whileRunning.liveCounts ||= status.querySelector('[data-testid=live-counts]') !== null;
    }).observe(status, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await page.getByTestId('run').click();
  if (cancelAfterMs !== null) {
    await page.waitForTimeout(cancelAfterMs);
    await page.getByTestId('cancel').click();
  }
  await waitForRunEnd(page, 60_000);
  const seen = await page.evaluate(() => window.__whileRunning);
  return { page, errors, distinctTexts: [...new Set(seen.texts)], liveCounts: seen.liveCounts };
}

test('live view "end" draws nothing while the run goes on, records it, and still cancels', async () => {
  // 40 ms per token: 8 requests at concurrency 2 take a few seconds, a dozen live refreshes.
  const sim = await startSim(['--seed', '23', '--decode-interval-ms', '40']);
  try {
    const settings = { base_url: sim.baseUrls[0], ...SMALL_MAIN_THREAD_RUN };
    // The default, for contrast: the panel counts requests as they finish.
    const during = await watchedRun(settings);
    assert.ok(during.liveCounts, 'a live run shows its counters');
    assert.ok(during.distinctTexts.length > 2, `a live run refreshes: ${JSON.stringify(during.distinctTexts)}`);
    assert.equal((await downloadArtifact(during.page, 'run-live-during')).artifact.client.live_view, 'during');
    await during.page.close();

    const quiet = await watchedRun({ ...settings, live_view: 'end' });
    assert.equal(await quiet.page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.equal(quiet.liveCounts, false, 'no counters while a quiet run goes on');
    assert.equal(quiet.distinctTexts.length, 1, `one text for the whole run: ${JSON.stringify(quiet.distinctTexts)}`);
    assert.match(quiet.distinctTexts[0], /Running 8 requests\. Live view: end/);
    // At the end everything is shown, as after any run.
    assert.equal(await quiet.page.getByTestId('live-counts').textContent(), '8 / 0 / 0');
    assert.match(
      await quiet.page.getByTestId('run-summary').textContent(),
      /on the page's main thread, the page drawing nothing until the run ended/,
    );
    const { path, artifact } = await downloadArtifact(quiet.page, 'run-live-end');
    assertValid(path);
    assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.live_view, 'end');
    assert.equal(artifact.client.measurement_thread, 'main');
    assert.deepEqual(quiet.errors, []);
    await quiet.page.close();

    // Cancel works without any live view, in the worker too: the page says it is cancelling,
    // and the run ends at once with its rows accounted for.
    const cancelled = await watchedRun(
      { ...settings, requests: '40', live_view: 'end', measurement: 'worker' },
      { cancelAfterMs: 1_500 },
    );
    assert.equal(await cancelled.page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.deepEqual(cancelled.distinctTexts.map((text) => text.replace(/\..*/, '.')), ['Running 40 requests.', 'Cancelling…']);
    assert.match(await cancelled.page.getByTestId('status').textContent(), /cancelled/);
    const stopped = (await downloadArtifact(cancelled.page, 'run-live-end-cancelled')).artifact;
    assert.ok(stopped.completed < 40, `completed ${stopped.completed}`);
    assert.equal(stopped.completed + stopped.failed, 40);
    assert.equal(stopped.client.live_view, 'end');
    assert.equal(stopped.client.measurement_thread, 'worker');
    assert.deepEqual(cancelled.errors, []);
    await cancelled.page.close();
  } finally {
    await sim.stop();
  }
});

/** transport::BODY_END_GRACE_MS: how long strobe waits for a body's end after `[DONE]`. */
const BODY_END_GRACE_MS = 200;

test('no request leaves its body-end timer behind to fire later in the run', async () => {
  // Every request, warm-up or measured, races the end of its body against a 200 ms timer once
  // `[DONE]` has arrived. strobe-sim writes the end right after `[DONE]`, so the end wins; the
  // timer must then be cleared, not left to run as a task among the next requests' sends and
  // reads. Watched on the page's own timers, so in the main-thread mode; the worker runs the
  // same code.
  const sim = await startSim(['--seed', '17']);
  const page = await env.browser.newPage();
  try {
    await page.addInitScript((graceMs) => {
      const watched = { set: 0, cleared: 0, fired: 0 };
      const pending = new Set();
      const { setTimeout: set, clearTimeout: clear } = window;
      window.__graceTimers = watched;
      window.setTimeout = function (callback, ms, ...rest) {
        if (ms !== graceMs || document.querySelector('[data-testid=status]')?.dataset.state !== 'running') {
          return set.call(window, callback, ms, ...rest);
        }
        const id = set.call(window, (...args) => {
          if (pending.delete(id)) watched.fired += 1;
          return callback(...args);
        }, ms, ...rest);
        pending.add(id);
        watched.set += 1;
        return id;
      };
      window.clearTimeout = function (id) {
        if (pending.delete(id)) watched.cleared += 1;
        return clear.call(window, id);
      };
    }, BODY_END_GRACE_MS);
    const settings = {
      base_url: sim.baseUrls[0],
      requests: '12',
      concurrency: '3',
      context_tokens: '512',
      max_tokens: '16',
      measurement: 'main',
    };
    await page.goto(`${env.site.url}?${new URLSearchParams(settings)}`);
    await page.getByTestId('app-ready').waitFor();
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 60_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    await page.waitForTimeout(2 * BODY_END_GRACE_MS);
    const watched = await page.evaluate(() => window.__graceTimers);
    const { artifact } = await downloadArtifact(page, 'grace-timers');
    assert.equal(artifact.completed, 12, JSON.stringify(artifact.failures));
    // Each request set exactly one: every warm-up request, every one of the 12 measured ones,
    // and every request of the dry run before the warm-up, whose synthetic streams end after
    // `[DONE]` as strobe-sim's do (no other 200 ms timer runs during a run).
    const { dry_run_requests: dryRun, warmup } = artifact.client;
    assert.ok(dryRun > 0, `the artifact records the dry run: ${JSON.stringify(artifact.client)}`);
    assert.equal(watched.set, dryRun + warmup.requests + 12, JSON.stringify(watched));
    assert.equal(
      watched.fired,
      0,
      `grace timers that fired (left behind, or a body's end read over 200 ms after its [DONE]): ${JSON.stringify(watched)}`,
    );
    assert.equal(watched.cleared, watched.set, JSON.stringify(watched));
  } finally {
    await page.close();
    await sim.stop();
  }
});

test('a server that keeps the body open after [DONE] is timed to its [DONE] and cut off after the grace', async () => {
  // Every response, warm-up included, sends [DONE] and then never ends its body. The measurement
  // ends at [DONE]; what follows only frees the connection, read without calling into the
  // module, and cut off BODY_END_GRACE_MS later. Without the cut the run would wait --hang-ms.
  const sim = await startSim(['--fault-rate', '1', '--fault-kinds', 'hold-after-done', '--hang-ms', '60000', '--seed', '19']);
  try {
    const started = Date.now();
    const { page, errors } = await runFromPage({
      base_url: sim.baseUrls[0],
      requests: '6',
      concurrency: '2',
      context_tokens: '512',
      max_tokens: '16',
      request_canaries: 'true',
    });
    const wallMs = Date.now() - started;
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { artifact } = await downloadArtifact(page, 'hold-after-done');
    assert.equal(artifact.completed, 6, JSON.stringify(artifact.failures));
    assert.ok(wallMs < 30_000, `the run took ${wallMs} ms: the held bodies were not cut off`);
    const { records } = await sim.truth();
    const held = records.filter((record) => record.marker);
    assert.equal(held.length, 6);
    for (const record of held) {
      assert.match(record.error ?? '', /hold-after-done fault: .*the client closed the connection/, JSON.stringify(record));
    }
    const runStartMs = artifact.started_at_unix_ns / 1e6;
    for (const row of artifact.request_timings) {
      const record = held.find((candidate) => candidate.marker === row.request_canary.marker);
      const doneMs = record.times.last_byte_sent.unix_ns / 1e6;
      const endMs = runStartMs + row.started_at_ms + row.e2e_ms;
      assert.ok(
        Math.abs(endMs - doneMs) < BODY_END_GRACE_MS / 4,
        `row ${row.request_index} ends ${(endMs - doneMs).toFixed(1)} ms after the server's [DONE]: E2E must stop at [DONE]`,
      );
    }
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a measurement worker that cannot load its code stops the run with the reason', async () => {
  const sim = await startSim(['--seed', '15']);
  let page;
  try {
    ({ page } = await env.open({ base_url: sim.baseUrls[0], requests: '4', concurrency: '2', context_tokens: '1024', max_tokens: '32' }));
    // The page has its code; the worker it starts next cannot fetch the app's JavaScript glue.
    await page.route(/strobe-[0-9a-f]+\.js$/, (route) => route.abort());
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 20_000);
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    const text = await status.textContent();
    assert.match(text, /the measurement worker failed: its code could not be loaded/);
    assert.match(text, /Measure in: main/);
    const truth = await sim.truth();
    assert.ok(truth.records.every((record) => !record.marker), 'nothing was measured');
  } finally {
    await page?.close();
    await sim.stop();
  }
});

test('a measurement worker that dies mid-run stops the run with the reason instead of hanging', async () => {
  // Long streams (80 ms per token), so the run is still going when the worker goes.
  const sim = await startSim(['--seed', '16', '--decode-interval-ms', '80']);
  let page;
  try {
    ({ page } = await env.open({ base_url: sim.baseUrls[0], requests: '8', concurrency: '2', context_tokens: '1024', max_tokens: '64' }));
    const [worker] = await Promise.all([page.waitForEvent('worker'), page.getByTestId('run').click()]);
    // Mid-run: the worker has started and reported requests in flight (a worker closed while it
    // still loads is the start timeout's case, not this one).
    await page.waitForFunction(() => {
      const counts = document.querySelector('[data-testid=live-counts]')?.textContent ?? '';
      const [, , inFlight] = counts.split('/').map((part) => Number(part.trim()));
      return inFlight > 0;
    });
    // The worker ends itself without a word: no error event, no message.
    await worker.evaluate(() => self.close()).catch(() => {});
    await waitForRunEnd(page, 30_000);
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'error');
    assert.match(await status.textContent(), /the measurement worker stopped answering \(10 s without a message\)/);
  } finally {
    await page?.close();
    await sim.stop();
  }
});

test('cancel pressed while the measurement worker is still starting ends the run as cancelled, having sent nothing', async () => {
  const sim = await startSim(['--seed', '17']);
  let page;
  let release;
  try {
    ({ page } = await env.open({ base_url: sim.baseUrls[0], requests: '8', concurrency: '2', context_tokens: '1024', max_tokens: '32' }));
    // The worker's import of the app's glue is held until after Cancel, so Cancel certainly
    // lands while the worker is still starting.
    const glue = await holdWorkerGlue(page);
    release = glue.release;
    await page.getByTestId('run').click();
    await glue.held;
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'running', 'the worker is starting');
    const pressed = Date.now();
    await page.getByTestId('cancel').click();
    // Ended at once, the glue still held: nothing waits for the worker it will never start.
    await waitForRunEnd(page, 5_000);
    assert.ok(Date.now() - pressed < 3_000, 'the starting worker was not waited for');
    assert.equal(await status.getAttribute('data-state'), 'cancelled', 'a cancel that sent nothing is no error');
    assert.match(await status.textContent(), /^The run was cancelled before its first request\./);
    // The glue arrives after all: the worker was ended, so no Start follows and nothing is sent.
    release();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await status.getAttribute('data-state'), 'cancelled');
    assert.deepEqual((await sim.truth()).records, [], 'not one request was sent, warm-up included');
    // The page is ready for the next run.
    assert.ok(await page.getByTestId('run').isEnabled());
    assert.ok(await page.getByTestId('cancel').isDisabled());
  } finally {
    release?.();
    await page?.close();
    await sim.stop();
  }
});
