// End-to-end: open-loop load (load=rate) against strobe-sim in headless Chromium. The page says
// how the load went before its numbers, a cap that holds requests back is reported, and a Cancel
// accounts for every request. Whether requests go out on schedule is load-schedule.test.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

test('an open-loop run says how its load went before its numbers', async () => {
  // The schedule itself is held to the server's receipt times in load-schedule.test.mjs,
  // through a bare DevTools pipe; this run checks what the page says about it.
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
    const { artifact } = await downloadArtifact(page, 'load-poisson-20-page');
    assert.equal(artifact.completed, 40, JSON.stringify(artifact.failures));
    const notes = await page.getByTestId('run-summary').getByTestId('load-notes').textContent();
    assert.match(notes, /Open loop at 20\.00 req\/s, poisson arrivals, seed 7, at most 16 in flight/);
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
