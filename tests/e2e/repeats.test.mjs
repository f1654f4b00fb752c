// End-to-end: a repeated run in headless Chromium against strobe-sim. repeats=3 sends the same
// six requests three times and files three runs; it downloads as
// one .zip of three valid artifacts, each with the group's `repeat` block; dropped on a fresh
// page, the zip regroups into one point of the capacity view whose table gives the mean of the
// runs' TTFT p50 with its Student-t 95 % interval (and the flag when the runs disagree), the
// numbers the artifacts themselves give. A two-step sweep with repeats=2 runs each step twice
// (the prefix cache emptied before every run), files four runs with their sweep and repeat
// blocks, and draws (and, dropped back, redraws) one curve of two points with their intervals;
// Cancel between two repeats keeps the run that finished, in a sweep and in a plain group of
// repeats, where it ends the cool-down at once; so does Cancel while a later repeat's worker
// is still starting (that repeat sends nothing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { browserAndSite, holdWorkerGlue, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { readZipEntries, validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

// Student's t quantiles t(0.975, n − 1) for n = 2 and 3 runs.
const T_975 = { 2: 12.706204736174707, 3: 4.302652729911275 };

/** A number as the page writes it (core::format::format_number, with thousands separators). */
function pageNumber(value) {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 || Number.isInteger(value) ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  const [whole, fraction] = value.toFixed(digits).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/**
 * What the page writes for the runs' `values`: "1,057 ms ± 19.9 (95 %, 3 runs)", and whether it
 * flags them (their coefficient of variation above 10 %).
 */
function acrossRuns(values) {
  const n = values.length;
  const mean = values.reduce((sum, value) => sum + value, 0) / n;
  const sd = Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1));
  const text = `${pageNumber(mean)} ms ± ${pageNumber((T_975[n] * sd) / Math.sqrt(n))} (95 %, ${n} runs)`;
  return { text, flagged: sd / mean > 0.1 };
}

/**
 * The capacity table's point that stands for three runs, at TTFT p50: its interval text and
 * whether it carries the disagreement flag.
 */
async function groupLatency(page) {
  const capacity = page.getByTestId('capacity-view');
  await capacity.getByTestId('chart-capacity').locator('canvas').first().waitFor();
  await capacity.getByTestId('capacity-stat').selectOption('p50');
  const point = capacity.locator('[data-testid=capacity-point][data-runs="3"]');
  assert.equal(await point.count(), 1, 'the group is one point');
  assert.equal(await capacity.getByTestId('capacity-point').count(), 1, 'and the only one');
  const cell = point.getByTestId('capacity-latency');
  const flag = cell.getByTestId('capacity-disagreement');
  const flagged = (await flag.count()) === 1;
  const full = (await cell.textContent()).trim();
  const text = flagged ? full.slice(0, full.length - (await flag.textContent()).length).trim() : full;
  if (flagged) assert.match(await flag.textContent(), /the 3 runs disagree .*more repeats/);
  return { text, flagged };
}

/**
 * The runs in the zip the page's `button` downloads, saved as `test-results/<name>.zip` and each
 * as `test-results/<name>-<n>.json`, every one a valid artifact: `[{ name, artifact }]`.
 */
async function runsInZip(page, button, name) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(button).click()]);
  const zip = `test-results/${name}.zip`;
  copyFileSync(await download.path(), zip);
  return readZipEntries(zip).map(({ name: entry, text }, index) => {
    const file = `test-results/${name}-${index + 1}.json`;
    writeFileSync(file, text);
    const { exitCode, report } = validateArtifact(file);
    assert.equal(exitCode, 0, `${entry}: ${JSON.stringify(report)}`);
    return { name: entry, artifact: JSON.parse(text) };
  });
}

/** The capacity table's TTFT p50 of each point, with whether it is flagged, and the chart's series. */
async function capacityPoints(page) {
  const capacity = page.getByTestId('capacity-view');
  await capacity.getByTestId('chart-capacity').locator('canvas').first().waitFor();
  await capacity.getByTestId('capacity-stat').selectOption('p50');
  const points = [];
  for (const point of await capacity.getByTestId('capacity-point').all()) {
    const cell = point.getByTestId('capacity-latency');
    const flag = cell.getByTestId('capacity-disagreement');
    const flagged = (await flag.count()) === 1;
    const full = (await cell.textContent()).trim();
    const text = flagged ? full.slice(0, full.length - (await flag.textContent()).length).trim() : full;
    points.push({ runs: Number(await point.getAttribute('data-runs')), text, flagged });
  }
  const series = await capacity.getByTestId('chart-capacity').evaluate((element) => {
    const chart = window.echarts.getInstanceByDom(element.querySelector('.chart-canvas'));
    return JSON.parse(JSON.stringify(chart.getOption().series)).map(({ name, data }) => ({ name, data }));
  });
  return { text: await capacity.textContent(), points, series };
}

test('a repeated run downloads as one zip that regroups with its interval when dropped', async () => {
  const sim = await startSim(['--seed', '9']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '6',
      concurrency: '2',
      context_tokens: '256',
      max_tokens: '16',
      repeats: '3',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('repeat-group').textContent(), /3 of 3 runs/);
    assert.equal(await page.getByTestId('library-row').count(), 3, 'three runs in the library');
    // Measured requests carry canary markers (the warm-up's do not): the same six, three times.
    const served = (await sim.truth()).records.filter((record) => record.marker);
    assert.equal(served.length, 18);
    const counts = new Map();
    for (const record of served) counts.set(record.marker, (counts.get(record.marker) ?? 0) + 1);
    assert.equal(counts.size, 6);
    assert.ok([...counts.values()].every((count) => count === 3), 'the same plan each time');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('download-group').click(),
    ]);
    assert.match(download.suggestedFilename(), /^repeat-.*\.zip$/);
    const zip = 'test-results/repeat-group.zip';
    copyFileSync(await download.path(), zip);
    const entries = readZipEntries(zip);
    assert.equal(entries.length, 3, 'every repeat in the zip');
    const artifacts = entries.map(({ name, text }, index) => {
      const file = `test-results/repeat-group-${index + 1}.json`;
      writeFileSync(file, text);
      const { exitCode, report } = validateArtifact(file);
      assert.equal(exitCode, 0, `${name}: ${JSON.stringify(report)}`);
      return JSON.parse(text);
    });
    const groupIds = new Set(artifacts.map((artifact) => artifact.repeat.group_id));
    assert.equal(groupIds.size, 1, 'one group id');
    assert.match([...groupIds][0], /^repeat-/);
    assert.deepEqual(
      artifacts.map((artifact) => [artifact.repeat.index, artifact.repeat.count]),
      [[0, 3], [1, 3], [2, 3]],
    );
    for (const artifact of artifacts) assert.equal(artifact.completed, 6, JSON.stringify(artifact.failures));

    const expected = acrossRuns(artifacts.map((artifact) => artifact.metrics.ttft_p50_ms));
    console.log(`# TTFT p50 across the repeats: ${expected.text}${expected.flagged ? ' (flagged)' : ''}`);
    assert.deepEqual(await groupLatency(page), expected, 'the run page shows the group as one point');
    assert.deepEqual(errors, []);
    await page.close();

    // The zip dropped on a fresh page regroups into the same point with the same words.
    const { page: fresh, errors: freshErrors } = await env.open();
    await fresh.getByTestId('artifact-input').setInputFiles(zip);
    assert.deepEqual(await groupLatency(fresh), expected);
    assert.deepEqual(freshErrors, []);
    await fresh.close();
  } finally {
    await sim.stop();
  }
});

test('a sweep with repeats runs each step twice and regroups as one curve of repeated points', async () => {
  const sim = await startSim(['--seed', '37']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'concurrency:1,2',
      repeats: '2',
      reset_prefix_cache: 'before_each_step',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(await page.getByTestId('sweep-status').textContent(), /all 2 steps done, 2 runs each \(4 runs\)/);
    assert.equal(await page.getByTestId('sweep-step').count(), 4, 'one row a run');
    assert.equal(await page.getByTestId('repeat-group').count(), 0, "the sweep's download holds the repeats");
    // The prefix cache was emptied before each of the four runs; each step sent the same
    // requests twice (measured requests carry canary markers, in the order they arrived).
    const truth = await sim.truth();
    assert.equal(truth.scrapes.filter((scrape) => scrape.endpoint === 'reset_prefix_cache').length, 4);
    const received = (record) => record.times.received.unix_ns;
    const served = truth.records.filter((record) => record.marker).sort((a, b) => (received(a) < received(b) ? -1 : 1));
    assert.equal(served.length, 16);
    const markers = (run) => served.slice(run * 4, run * 4 + 4).map((record) => record.marker).sort();
    assert.deepEqual(markers(1), markers(0), 'step 1 sent the same requests twice');
    assert.deepEqual(markers(3), markers(2), 'step 2 sent the same requests twice');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-sweep').click()]);
    assert.match(download.suggestedFilename(), /^sweep-.*\.zip$/);
    const zip = 'test-results/sweep-repeats.zip';
    copyFileSync(await download.path(), zip);
    const entries = readZipEntries(zip);
    assert.equal(entries.length, 4, 'every run of every step in the zip');
    const artifacts = entries.map(({ name, text }, index) => {
      const file = `test-results/sweep-repeats-${index + 1}.json`;
      writeFileSync(file, text);
      const { exitCode, report } = validateArtifact(file);
      assert.equal(exitCode, 0, `${name}: ${JSON.stringify(report)}`);
      return { name, artifact: JSON.parse(text) };
    });
    const sweepIds = new Set(artifacts.map(({ artifact }) => artifact.sweep.id));
    assert.equal(sweepIds.size, 1, 'one sweep');
    const [sweepId] = [...sweepIds];
    const groupIds = artifacts.map(({ artifact }) => artifact.repeat.group_id);
    assert.equal(new Set(groupIds).size, 2, 'one repeat group a step');
    for (const [index, { name, artifact }] of artifacts.entries()) {
      const [step, repeat] = [Math.floor(index / 2), index % 2];
      assert.equal(artifact.completed, 4, JSON.stringify(artifact.failures));
      assert.equal(artifact.concurrency, step + 1);
      assert.deepEqual(
        { ...artifact.sweep, id: undefined },
        { id: undefined, step_index: step, step_count: 2, variable: 'concurrency', value: step + 1, spec: 'concurrency:1,2', stop_reason: null },
      );
      assert.deepEqual({ ...artifact.repeat, group_id: undefined }, { group_id: undefined, index: repeat, count: 2 });
      assert.equal(artifact.repeat.group_id, groupIds[step * 2], `${name}: the step's group`);
      assert.match(artifact.repeat.group_id, new RegExp(`-step0${step + 1}$`));
      assert.ok(name.includes(`-step0${step + 1}-concurrency-${step + 1}-repeat0${repeat + 1}`), name);
      assert.equal(artifact.prefix_cache_reset?.policy, 'before_each_step');
    }

    // The capacity view: one curve of two points, each the mean of its step's two runs with
    // its 95 % interval in the table and as an error bar on the chart.
    const expected = [0, 1].map((step) =>
      acrossRuns(artifacts.slice(step * 2, step * 2 + 2).map(({ artifact }) => artifact.metrics.ttft_p50_ms)),
    );
    console.log(`# TTFT p50 by step across its repeats: ${expected.map((e) => e.text).join(' / ')}`);
    const checkView = async (shown) => {
      assert.match(shown.text, new RegExp(`1 curve: ${sweepId}`));
      assert.deepEqual(shown.points, expected.map(({ text, flagged }) => ({ runs: 2, text, flagged })));
      assert.equal(shown.series.length, 2, 'the curve and its error bars');
      assert.equal(shown.series[1].name, shown.series[0].name, 'the bars go with their curve');
      const bars = shown.series[1].data.filter((value) => Array.isArray(value));
      assert.equal(bars.length, 4, 'a low and a high end for each point');
    };
    await checkView(await capacityPoints(page));
    assert.deepEqual(errors, []);
    await page.close();

    // The zip dropped on a fresh page regroups into the same sweep of repeated steps.
    const { page: fresh, errors: freshErrors } = await env.open();
    await fresh.getByTestId('artifact-input').setInputFiles(zip);
    await checkView(await capacityPoints(fresh));
    assert.deepEqual(freshErrors, []);
    await fresh.close();
  } finally {
    await sim.stop();
  }
});

test("cancel between a step's repeats keeps the finished run and says why the sweep stopped", async () => {
  const sim = await startSim(['--seed', '38']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      sweep: 'concurrency:1,2',
      repeats: '2',
      sweep_cooldown_s: '60',
    });
    await page.getByTestId('run').click();
    await page.waitForFunction(
      () => /repeat 1 of 2 done; cooling down .* before repeat 2/.test(document.querySelector('[data-testid=sweep-status]')?.textContent ?? ''),
      null,
      { timeout: 60_000 },
    );
    await page.getByTestId('cancel').click();
    await waitForRunEnd(page, 10_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.match(
      await page.getByTestId('sweep-status').textContent(),
      /stopped in step 1 of 2 after 1 run \(2 a step\): the sweep was cancelled/,
    );
    const runs = await runsInZip(page, 'download-sweep', 'sweep-repeats-cancelled');
    assert.equal(runs.length, 1, 'the finished run, kept');
    const [{ artifact }] = runs;
    assert.equal(artifact.completed, 4);
    assert.equal(artifact.sweep.stop_reason, 'cancelled', 'the run before the cancel says why the sweep ended');
    assert.deepEqual([artifact.repeat.index, artifact.repeat.count], [0, 2]);
    assert.equal(await page.getByTestId('library-row').count(), 1, 'and it is in the library');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('cancel during the cool-down between two repeats ends the group and keeps the run filed', async () => {
  const sim = await startSim(['--seed', '39']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      repeats: '3',
      sweep_cooldown_s: '60',
    });
    await page.getByTestId('run').click();
    // The group's line counts the cool-down down once the first repeat is filed.
    await page.waitForFunction(
      () => /1 of 3 runs; cooling down .* before the next/.test(document.querySelector('[data-testid=repeat-status]')?.textContent ?? ''),
      null,
      { timeout: 60_000 },
    );
    await page.getByTestId('cancel').click();
    // Well inside the 60 s cool-down: Cancel ends it at once.
    await waitForRunEnd(page, 10_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    assert.equal(
      (await page.getByTestId('repeat-status').textContent()).trim(),
      'Repeats · 1 of 3 runs; cancelled, 2 not run (the runs filed are kept)',
    );
    assert.equal(await page.getByTestId('library-row').count(), 1, 'the finished repeat is kept');
    // Nothing after the cancel: the sim served the first repeat's four measured requests only.
    const served = (await sim.truth()).records.filter((record) => record.marker);
    assert.equal(served.length, 4);
    const runs = await runsInZip(page, 'download-group', 'repeats-cancelled');
    assert.equal(runs.length, 1, 'the finished run, kept');
    const [{ artifact }] = runs;
    assert.equal(artifact.completed, 4);
    assert.deepEqual([artifact.repeat.index, artifact.repeat.count], [0, 3]);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test("cancel while a later repeat's worker starts keeps the runs before it, sending nothing more", async () => {
  const sim = await startSim(['--seed', '39']);
  let page;
  let release = () => {};
  try {
    let errors;
    ({ page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '16',
      repeats: '2',
      sweep_cooldown_s: '3',
    }));
    await page.getByTestId('run').click();
    await page.getByTestId('library-row').first().waitFor({ timeout: 60_000 });
    // The first repeat is filed and the cool-down runs. The next worker's import of the app's
    // glue is held until after Cancel, so Cancel certainly lands while the second repeat's
    // worker is still starting.
    const glue = await holdWorkerGlue(page);
    release = glue.release;
    await glue.held;
    const status = page.getByTestId('status');
    assert.equal(await status.getAttribute('data-state'), 'running', 'the second worker is starting');
    const sentBefore = (await sim.truth()).records.length;
    await page.getByTestId('cancel').click();
    await waitForRunEnd(page, 5_000);
    release();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // As a cancel during a later repeat's reset: the group ends, its first run kept.
    assert.equal(await status.getAttribute('data-state'), 'finished');
    assert.match(await status.textContent(), /^Finished \(cancelled\): 4 completed, 0 failed\./);
    assert.equal(await page.getByTestId('library-row').count(), 1, 'the first run is kept');
    const records = (await sim.truth()).records;
    assert.equal(records.length, sentBefore, 'the second repeat sent nothing');
    assert.equal(records.filter((record) => record.marker).length, 4, 'the first repeat, measured once');
    assert.deepEqual(errors, []);
  } finally {
    release();
    await page?.close();
    await sim.stop();
  }
});
