// End-to-end: sweeps in headless Chromium against strobe-sim. A concurrency sweep past the
// simulator's admission limit shows the knee of its throughput–latency curve, downloads as one
// .zip of valid artifacts that regroup into the same curve when dropped back; stop rules and
// Cancel end a sweep and keep every step it finished.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { browserAndSite, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { readZipEntries, validateArtifact, recomputeArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

/** Presses Run and waits for the sweep to end. */
async function runSweep(settings) {
  const { page, errors } = await env.open(settings);
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 180_000);
  return { page, errors };
}

/** Clicks "Download sweep (.zip)", keeps it in test-results/ and reads its entries. */
async function downloadSweep(page, name) {
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('download-sweep').click(),
  ]);
  const path = `test-results/${name}.zip`;
  copyFileSync(await download.path(), path);
  const artifacts = readZipEntries(path).map(({ name: entry, text }, index) => {
    const file = `test-results/${name}-${index + 1}.json`;
    writeFileSync(file, text);
    return { entry, file, artifact: JSON.parse(text) };
  });
  return { path, suggested: download.suggestedFilename(), artifacts };
}

test('a concurrency sweep past the admission limit shows the knee and reloads as one curve', async () => {
  // At most 4 sequences run at once: from c=8 on, half the requests queue for a whole stream
  // (16 tokens × 10 ms), so TTFT p95 jumps. Two ports keep 8 in flight within 4 per origin.
  const sim = await startSim(['--seed', '31', '--max-num-seqs', '4', '--decode-interval-ms', '10'], { ports: 2 });
  try {
    const { page, errors } = await runSweep({
      base_url: sim.baseUrls[0],
      pool: sim.baseUrls[1],
      requests: '24',
      concurrency: '8',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'concurrency:1,2,4,8',
    });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('sweep-status').textContent(), /all 4 steps done/);
    assert.equal(await page.getByTestId('sweep-step').count(), 4);
    assert.match(await page.getByTestId('sweep-end').textContent(), /Every step ran/);

    const { suggested, artifacts } = await downloadSweep(page, 'sweep-concurrency');
    assert.match(suggested, /^sweep-benchmark-.*\.zip$/);
    assert.equal(artifacts.length, 4);
    const ids = new Set(artifacts.map(({ artifact }) => artifact.sweep.id));
    assert.equal(ids.size, 1, 'one sweep id for every step');
    for (const [index, { entry, file, artifact }] of artifacts.entries()) {
      const { exitCode, report } = validateArtifact(file);
      assert.equal(exitCode, 0, `${entry}: ${JSON.stringify(report)}`);
      assert.equal(recomputeArtifact(file).exitCode, 0, `${entry} recomputes from its rows`);
      assert.equal(artifact.completed, 24, JSON.stringify(artifact.failures));
      assert.deepEqual(
        { ...artifact.sweep, id: undefined },
        {
          id: undefined,
          step_index: index,
          step_count: 4,
          variable: 'concurrency',
          value: [1, 2, 4, 8][index],
          spec: 'concurrency:1,2,4,8',
          stop_reason: null,
        },
      );
      assert.equal(artifact.concurrency, [1, 2, 4, 8][index]);
      assert.ok(entry.includes(`-step0${index + 1}-concurrency-`), entry);
    }
    const ttftP95 = artifacts.map(({ artifact }) => artifact.metrics.ttft_p95_ms);
    console.log(`# TTFT p95 by step (ms): ${ttftP95.map((ms) => ms.toFixed(1)).join(' / ')}`);
    assert.ok(ttftP95[3] > 2 * ttftP95[2], `the knee: c=8 ${ttftP95[3]} ms against c=4 ${ttftP95[2]} ms`);
    assert.ok(ttftP95[3] > 100, 'at c=8 requests wait for a whole stream');

    // Every step is in the library, selected: the capacity view draws the curve.
    const capacity = page.getByTestId('capacity-view');
    await capacity.getByTestId('chart-capacity').locator('canvas').first().waitFor();
    const sweepId = [...ids][0];
    assert.match(await capacity.textContent(), new RegExp(`1 curve: ${sweepId}`));
    await capacity.getByTestId('capacity-metric').selectOption('e2e');
    await capacity.getByTestId('capacity-axis').selectOption('requests');
    assert.equal(await capacity.getByTestId('chart-offered-achieved').count(), 0, 'a concurrency sweep offers no rate');
    assert.deepEqual(errors, []);
    await page.close();

    // The .zip dropped on a fresh page regroups into the same curve.
    const { page: fresh, errors: freshErrors } = await env.open();
    await fresh.getByTestId('artifact-input').setInputFiles('test-results/sweep-concurrency.zip');
    await fresh.getByTestId('capacity-view').getByTestId('chart-capacity').locator('canvas').first().waitFor();
    assert.match(await fresh.getByTestId('capacity-view').textContent(), new RegExp(`1 curve: ${sweepId}`));
    assert.deepEqual(freshErrors, []);
    await fresh.close();
  } finally {
    await sim.stop();
  }
});

test('a rate sweep stops at saturation and says so in the step that decided it', async () => {
  // Streams of about 0.7 s with at most two in flight carry under 3 requests a second: the
  // 1 req/s step keeps up, the 10 req/s step cannot, and the 20 req/s step never runs.
  const sim = await startSim(['--seed', '32', '--decode-interval-ms', '40']);
  try {
    const { page } = await runSweep({
      base_url: sim.baseUrls[0],
      requests: '6',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'rate:1,10,20',
      sweep_stop_saturated: 'true',
    });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('sweep-status').textContent(), /stopped after 2 of 3 steps: .*saturated/);
    const { artifacts } = await downloadSweep(page, 'sweep-saturated');
    assert.equal(artifacts.length, 2);
    assert.equal(artifacts[0].artifact.sweep.stop_reason, null);
    assert.equal(artifacts[1].artifact.sweep.stop_reason, 'saturated');
    assert.equal(artifacts[1].artifact.load.mode, 'rate');
    assert.equal(artifacts[1].artifact.load.rate, 10);
    await page.getByTestId('capacity-view').getByTestId('chart-offered-achieved').locator('canvas').first().waitFor();
    for (const { file } of artifacts) assert.equal(validateArtifact(file).exitCode, 0);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('cancel during a cool-down ends the sweep and keeps its finished steps', async () => {
  const sim = await startSim(['--seed', '33']);
  try {
    const { page } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'concurrency:1,2,4',
      sweep_cooldown_s: '60',
    });
    await page.getByTestId('run').click();
    await page.waitForFunction(
      () => /cooling down/.test(document.querySelector('[data-testid=sweep-status]')?.textContent ?? ''),
      null,
      { timeout: 60_000 },
    );
    await page.getByTestId('cancel').click();
    await waitForRunEnd(page, 10_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('sweep-status').textContent(), /stopped after 1 of 3 steps: the sweep was cancelled/);
    const { artifacts } = await downloadSweep(page, 'sweep-cancelled');
    assert.equal(artifacts.length, 1);
    assert.equal(artifacts[0].artifact.completed, 4);
    assert.equal(artifacts[0].artifact.sweep.stop_reason, 'cancelled', 'the step before the cancel says why the sweep ended');
    assert.equal(validateArtifact(artifacts[0].file).exitCode, 0);
    // The library's copy says so too.
    assert.match(await page.getByTestId('artifact-list').textContent(), /step01-concurrency-1/);
    assert.match(
      await page.getByTestId('single-run').getByTestId('sweep-note').textContent(),
      /Step 1 of 3 of sweep-.* \(concurrency 1\)\. The sweep stopped after this step: cancelled\./,
    );
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('cancel within a step keeps its partial artifact and starts no further step', async () => {
  const sim = await startSim(['--seed', '34']);
  try {
    const { page } = await env.run(
      {
        base_url: sim.baseUrls[0],
        requests: '30',
        concurrency: '2',
        context_tokens: '128',
        max_tokens: '16',
        sweep: 'concurrency:1,2',
      },
      { cancelAfterDone: 3 },
    );
    assert.match(await page.getByTestId('sweep-status').textContent(), /stopped after 1 of 2 steps: the sweep was cancelled/);
    const { artifacts } = await downloadSweep(page, 'sweep-cancelled-in-step');
    assert.equal(artifacts.length, 1);
    const { artifact, file } = artifacts[0];
    assert.equal(artifact.sweep.stop_reason, 'cancelled');
    assert.ok(artifact.completed >= 3 && artifact.completed < 30, `completed ${artifact.completed}`);
    assert.equal(artifact.completed + artifact.failed, 30, 'every request of the step is accounted for');
    assert.equal(validateArtifact(file).exitCode, 0);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('an auto sweep measures both ends, then offers a rate between them', async () => {
  const sim = await startSim(['--seed', '35', '--decode-interval-ms', '10']);
  try {
    const { page } = await runSweep({
      base_url: sim.baseUrls[0],
      requests: '12',
      concurrency: '4',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'auto',
      sweep_steps: '3',
    });
    assert.match(await page.getByTestId('sweep-status').textContent(), /all 3 steps done/);
    const { artifacts } = await downloadSweep(page, 'sweep-auto');
    const [sync, throughput, rate] = artifacts.map(({ artifact }) => artifact);
    assert.deepEqual([sync.concurrency, throughput.concurrency], [1, 4]);
    assert.equal(sync.load, undefined, 'the measuring steps are closed loops');
    const completedPerS = (artifact) => artifact.completed / (artifact.wall_clock_ms / 1000);
    const [low, high] = [completedPerS(sync), completedPerS(throughput)];
    assert.equal(rate.sweep.variable, 'rate');
    assert.equal(rate.load.mode, 'rate');
    assert.ok(Math.abs(rate.load.rate - (low + high) / 2) < 1e-9, `${rate.load.rate} halfway between ${low} and ${high}`);
    for (const { file } of artifacts) assert.equal(validateArtifact(file).exitCode, 0);
    // One curve of both kinds of step, the rate step drawn against what it achieved.
    const capacity = page.getByTestId('capacity-view');
    await capacity.getByTestId('chart-offered-achieved').locator('canvas').first().waitFor();
    assert.match(await capacity.textContent(), /1 curve:/);
    await page.close();
  } finally {
    await sim.stop();
  }
});
