// End-to-end: a repeated run in headless Chromium against strobe-sim. repeats=3 sends the same
// six requests three times and files three runs; it downloads as
// one .zip of three valid artifacts, each with the group's `repeat` block; dropped on a fresh
// page, the zip regroups into one point of the capacity view whose table gives the mean of the
// runs' TTFT p50 with its Student-t 95 % interval (and the flag when the runs disagree), the
// numbers the artifacts themselves give.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { browserAndSite, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { readZipEntries, validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

// Student's t quantile t(0.975, 2): three runs have two degrees of freedom.
const T_975_2 = 4.302652729911275;

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
  const text = `${pageNumber(mean)} ms ± ${pageNumber((T_975_2 * sd) / Math.sqrt(n))} (95 %, ${n} runs)`;
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
