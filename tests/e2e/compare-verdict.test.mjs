// End-to-end: is B really slower than A? Two strobe-sim servers that differ only in decode
// speed (B's tokens 20 % further apart) are run from the page; their artifacts, dropped back
// in, are compared, and the page's verdict says B's TPOT is significantly higher, sentence for
// sentence what `strobe-artifact compare --json` says of the same files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { ARTIFACT_CLI } from './artifact-tools.mjs';

const env = browserAndSite();

/** Runs 32 requests against a strobe-sim whose decode interval is `intervalMs`. */
async function runAgainst(intervalMs, name) {
  const sim = await startSim(['--seed', '21', '--decode-interval-ms', String(intervalMs)]);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '32',
      concurrency: '4',
      context_tokens: '256',
      max_tokens: '48',
      thinking_mode: 'disabled',
    });
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, name);
    assert.equal(artifact.completed, 32, JSON.stringify(artifact.failures));
    assert.deepEqual(errors, []);
    await page.close();
    return path;
  } finally {
    await sim.stop();
  }
}

test('a 20 % slower decode is a significant TPOT difference, in the page as in the CLI', async () => {
  const a = await runAgainst(10, 'verdict-a');
  const b = await runAgainst(12, 'verdict-b');
  const cli = JSON.parse(execFileSync(ARTIFACT_CLI, ['compare', '--json', a, b], { encoding: 'utf8' }));
  assert.equal(cli.metrics.tpot_ms.significant, true, JSON.stringify(cli.metrics.tpot_ms));
  assert.ok(cli.metrics.tpot_ms.ratio_of_medians > 1.1, JSON.stringify(cli.metrics.tpot_ms));

  const { page, errors } = await env.open();
  await page.getByTestId('artifact-input').setInputFiles([a, b]);
  await page.getByTestId('compare-runs').waitFor();
  const verdicts = page.getByTestId('verdicts');
  await verdicts.waitFor();
  assert.equal(await verdicts.getByTestId('verdict-pair').count(), 1);
  const lines = verdicts.getByTestId('verdict-metric');
  assert.equal(await lines.count(), 4);
  for (const [key, entry] of Object.entries(cli.metrics)) {
    const line = verdicts.locator(`[data-testid=verdict-metric][data-metric=${key}]`);
    assert.equal(await line.getAttribute('data-significant'), String(entry.significant), key);
    assert.equal((await line.textContent()).trim(), entry.sentence, `${key}: the page says what the CLI says`);
  }
  assert.match(
    await verdicts.locator('[data-metric=tpot_ms]').textContent(),
    /^B's TPOT is \d+ % higher \(p [<=] /,
  );
  assert.deepEqual(errors, []);
  await page.close();
});
