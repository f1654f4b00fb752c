// End-to-end: open-loop load (load=rate) against strobe-sim in headless Chromium. Requests go
// out on their schedule (the simulator's own receipt times confirm it), a cap that holds
// requests back is reported before the numbers, and a Cancel accounts for every request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact, recomputeArtifact } from './artifact-tools.mjs';
import { stampMs } from './truth.mjs';

const env = browserAndSite();

/** The median of numbers. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

test('a Poisson run at 20 req/s reaches the server on its schedule', async () => {
  // Three ports, so 16 in flight stay within six per origin; short prompts (the simulator
  // prefills one at a time) and streams of about 0.2 s, so about four are in flight at 20 a
  // second and neither the server nor the cap falls behind.
  const sim = await startSim(['--seed', '21', '--decode-interval-ms', '10'], { ports: 3 });
  try {
    const { page, errors } = await env.run({
      base_url: sim.baseUrls[0],
      pool: sim.baseUrls.slice(1).join(' '),
      requests: '40',
      concurrency: '16',
      load: 'rate',
      rate: '20',
      arrivals: 'poisson',
      arrival_seed: '7',
      context_tokens: '128',
      max_tokens: '16',
      request_canaries: 'true',
    });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'load-poisson-20');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));
    assert.equal(recomputeArtifact(path).exitCode, 0, 'metrics recompute from rows exactly');
    assert.equal(artifact.completed, 40, JSON.stringify(artifact.failures));
    assert.equal(artifact.concurrency, 16, 'the cap is the artifact concurrency');

    const load = artifact.load;
    assert.equal(load.mode, 'rate');
    assert.equal(load.arrivals, 'poisson');
    assert.equal(load.seed, 7);
    assert.equal(load.scheduled_requests, 40);
    assert.equal(load.sent_requests, 40);
    assert.equal(load.throttled, false, JSON.stringify(load));
    assert.equal(load.schedule_kept, true, JSON.stringify(load.dispatch_lag_ms));
    assert.ok(Math.abs(load.achieved_rate / load.offered_rate - 1) < 0.1, JSON.stringify(load));
    assert.ok(load.max_in_flight <= 16);

    // Every row says when it was due and how late it went out; nothing went out early.
    const rows = [...artifact.request_timings].sort((a, b) => a.request_index - b.request_index);
    assert.equal(rows[0].scheduled_ms, 0);
    for (const [i, row] of rows.entries()) {
      if (i > 0) assert.ok(row.scheduled_ms >= rows[i - 1].scheduled_ms, 'the schedule is in index order');
      assert.ok(row.dispatch_lag_ms >= 0, `row ${row.request_index} went out ${row.dispatch_lag_ms} ms early`);
      assert.equal(row.cap_wait_ms, 0);
    }

    // The simulator received each request when it was due: its receipt minus the due time
    // holds the dispatch lag and the way from fetch() to the server.
    const truth = await sim.truth();
    const byMarker = new Map(truth.records.map((record) => [record.marker, record]));
    const runStartMs = artifact.started_at_unix_ns / 1e6;
    const late = rows.map((row) => {
      const record = byMarker.get(row.request_canary.marker);
      assert.ok(record, `truth has ${row.request_canary.marker}`);
      return stampMs(record.times.received) - (runStartMs + row.scheduled_ms);
    });
    console.log(`# received − due (ms): median ${median(late).toFixed(2)}, max ${Math.max(...late).toFixed(2)}`);
    assert.ok(median(late) < 5, `median ${median(late)} ms after its time`);
    assert.ok(Math.max(...late) < 50, `worst ${Math.max(...late)} ms after its time`);
    assert.ok(Math.min(...late) > -2, `a request reached the server ${-Math.min(...late)} ms early`);

    // The results say how the load went before anyone reads a latency.
    const notes = await page.getByTestId('run-summary').getByTestId('load-notes').textContent();
    assert.match(notes, /Open loop at 20\.00 req\/s, poisson arrivals, seed 7, at most 16 in flight/);
    assert.equal(await page.getByTestId('run-summary').getByTestId('load-warning').count(), 0);
    assert.match(await page.getByTestId('live-schedule').textContent(), /40 of 40 sent/);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a run the concurrency cap throttles says so before its numbers', async () => {
  // Streams of about 0.7 s, 50 requests a second offered, at most two in flight.
  const sim = await startSim(['--seed', '22', '--decode-interval-ms', '40']);
  try {
    const { page } = await env.run({
      base_url: sim.baseUrls[0],
      requests: '8',
      concurrency: '2',
      load: 'rate',
      rate: '50',
      arrivals: 'constant',
      context_tokens: '1024',
      max_tokens: '16',
    });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'load-throttled');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
    const load = artifact.load;
    assert.equal(load.throttled, true, JSON.stringify(load));
    assert.ok(load.capped_sends >= 5, `capped ${load.capped_sends}`);
    assert.equal(load.max_in_flight, 2, 'never more than the cap');
    assert.ok(load.achieved_rate < load.offered_rate / 2, JSON.stringify(load));
    const capped = artifact.request_timings.filter((row) => row.cap_wait_ms > 0);
    assert.equal(capped.length, load.capped_sends);
    assert.ok(capped.every((row) => row.dispatch_lag_ms >= row.cap_wait_ms - 1), 'the wait is inside the lag');

    // The warning stands above the summary table.
    const summary = page.getByTestId('run-summary');
    const warning = summary.getByTestId('load-warning');
    assert.match(await warning.textContent(), /The concurrency cap \(2\) held back \d+ of 8 requests/);
    const above = await page.evaluate(() => {
      const box = document.querySelector('[data-testid=run-summary]');
      const warn = box.querySelector('[data-testid=load-warning]');
      const table = box.querySelector('[data-testid=summary-table]');
      return Boolean(warn.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING);
    });
    assert.ok(above, 'the warning comes before the latencies');
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('cancel in an open loop keeps what was sent and accounts for the rest', async () => {
  const sim = await startSim(['--seed', '23']);
  try {
    const { page } = await env.run(
      {
        base_url: sim.baseUrls[0],
        requests: '30',
        concurrency: '4',
        load: 'rate',
        rate: '4',
        context_tokens: '1024',
        max_tokens: '16',
      },
      { cancelAfterDone: 3 },
    );
    assert.match(await page.getByTestId('status').textContent(), /cancelled/);
    const { path, artifact } = await downloadArtifact(page, 'load-cancelled');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed + artifact.failed, 30);
    assert.ok(artifact.completed >= 3 && artifact.completed < 30, `completed ${artifact.completed}`);
    const unsent = artifact.failures.filter((failure) => /before this request was sent/.test(failure.error_message));
    assert.ok(unsent.length > 0, 'requests not yet due are recorded as never sent');
    assert.ok(unsent.every((failure) => failure.scheduled_ms === undefined), 'a request never sent has no dispatch keys');
    assert.equal(artifact.load.sent_requests + unsent.length, 30);
    await page.close();
  } finally {
    await sim.stop();
  }
});
