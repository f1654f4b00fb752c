// End-to-end: an open-loop run (load=rate) sends on its schedule: strobe's own dispatch lag and
// strobe-sim's receipt times both say so. Timed through a bare DevTools pipe (bare-browser.mjs),
// in a file of its own: Playwright's Network domain reports every response chunk from the
// measuring thread and delays it by several milliseconds at times, which is not what a user's
// browser does. What the page says about the load is load.test.mjs's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { launchBareBrowser } from './bare-browser.mjs';
import { serveStatic } from './static-server.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact, recomputeArtifact } from './artifact-tools.mjs';
import { stampMs } from './truth.mjs';
import { judgeOnAQuietHost, timingBar } from './quiet-host.mjs';

const DIST = process.env.STROBE_DIST ?? 'dist';

/** The median of numbers. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

let browser;
let site;
before(async () => {
  browser = await launchBareBrowser();
  site = await serveStatic({ root: DIST });
});
after(async () => {
  await browser?.close();
  await site?.close();
});

test('a Poisson run at 20 req/s reaches the server on its schedule', async (t) => {
  // Two cores hold the browser's threads, the simulator and this runner. Now and then the OS
  // keeps the measuring thread off its core for a few milliseconds, and strobe then reports,
  // truthfully, that the schedule was not kept (a fresh machine's CI saw two bursts of two
  // sends 5-6 ms late, p95 5.6 ms against the 5 ms line). Such a run must say so consistently,
  // and is run again (quiet-host.mjs); a dispatch late by design (a clamped timer, a blocked
  // thread) misses on every run, on a quiet host too.
  await judgeOnAQuietHost(t, poissonRun);
});

/** One Poisson run with every check; keeping the schedule is a timing bar (quiet-host.mjs). */
async function poissonRun({ measure }) {
  // Three ports, so 16 in flight stay within six per origin; short prompts (the simulator
  // prefills one at a time) and streams of about 0.2 s, so about four are in flight at 20 a
  // second and neither the server nor the cap falls behind.
  const sim = await startSim(['--seed', '21', '--decode-interval-ms', '10'], { ports: 3 });
  try {
    const { artifact, text, pageErrors } = await browser.run(site.url, {
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
    }, 120_000, { measure });
    const path = 'test-results/load-poisson-20.json';
    writeFileSync(path, text);
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
    // The verdict follows from the lags it records (the 5 ms line is LATE_SEND_MS).
    assert.equal(load.schedule_kept, load.dispatch_lag_ms.p95 <= 5, JSON.stringify(load));
    if (!load.schedule_kept) assert.ok(load.late_sends > 0, JSON.stringify(load));
    timingBar(load.schedule_kept, `schedule missed: dispatch lag ${JSON.stringify(load.dispatch_lag_ms)}, ${load.late_sends} late sends`);
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
    timingBar(median(late) < 5, `median ${median(late)} ms after its time`);
    timingBar(Math.max(...late) < 50, `worst ${Math.max(...late)} ms after its time`);
    assert.ok(Math.min(...late) > -2, `a request reached the server ${-Math.min(...late)} ms early`);

    assert.deepEqual(pageErrors, []);
  } finally {
    await sim.stop();
  }
}
