// Context calibration against strobe-sim, whose tokenizer is set to 1.5 characters per token
// (half strobe's estimate): off, a 1,024-token plan sends 2,048-token prompts and the results
// say so; on, two unmeasured probes measure the rate, every prompt lands on 1,024 of the
// server's tokens, the artifact records the fit, and a server whose answers carry no usage
// stops the run before anything is measured, with what to do (docs/guide/metrics.md, *Context
// calibration*).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();
let sim;
before(async () => {
  sim = await startSim(['--chars-per-token', '1.5']);
});
after(async () => {
  await sim?.stop();
});

const settings = (extra) => ({
  base_url: sim.baseUrls[0],
  requests: '8',
  concurrency: '4',
  context_tokens: '1024',
  max_tokens: '16',
  ...extra,
});

async function clientNotes(page) {
  return page.getByTestId('client-notes').locator('li').allTextContents();
}

test('off, prompts are sized at 3 characters per token and the results say it is off', async () => {
  const { page, errors } = await env.run(settings({}));
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
  const { artifact } = await downloadArtifact(page, 'calibration-off');
  assert.equal(artifact.client.context_calibration, undefined);
  for (const row of artifact.request_timings) {
    // 1,024 × 3 characters at 1.5 per token.
    assert.equal(row.prompt_tokens, 2048, `request ${row.request_index}`);
  }
  const notes = await clientNotes(page);
  assert.ok(notes.some((note) => /2\.00 server tokens per planned token.*Context calibration on/.test(note)), notes.join('\n'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('on, every prompt lands on its planned context in the server\'s tokens', async () => {
  await sim.reset();
  const { page, errors } = await env.run(settings({ context_calibration: 'true' }));
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
  assert.match(page.url(), /context_calibration=true/, 'the link carries the setting');
  const { path, artifact } = await downloadArtifact(page, 'calibration-on');
  const { exitCode, report } = validateArtifact(path);
  assert.equal(exitCode, 0, JSON.stringify(report));
  const calibration = artifact.client.context_calibration;
  assert.equal(calibration.estimated_chars_per_token, 3);
  assert.equal(calibration.probes.length, 2);
  assert.equal(calibration.probes[0].prompt_chars, 192);
  assert.ok(Math.abs(calibration.chars_per_token - 1.5) < 0.01, JSON.stringify(calibration));
  assert.ok(Math.abs(calibration.overhead_tokens) < 1.5, JSON.stringify(calibration));
  // The plan is what was asked; only the prompts are rescaled.
  assert.equal(artifact.context_tokens, 1024);
  assert.deepEqual(artifact.context_distribution, { 1024: 8 });
  assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
  for (const row of artifact.request_timings) {
    assert.equal(row.planned_context_tokens, 1024);
    assert.ok(Math.abs(row.prompt_tokens - 1024) <= 2, `request ${row.request_index}: ${row.prompt_tokens} prompt tokens`);
  }
  // The probes are no rows: the server saw them first, with max_tokens 1, before the warm-up.
  const { records } = await sim.truth();
  const probes = records.slice(0, 2);
  assert.deepEqual(probes.map((record) => record.max_tokens), [1, 1], JSON.stringify(probes));
  assert.deepEqual(probes.map((record) => record.prompt_tokens), calibration.probes.map((probe) => probe.prompt_tokens));
  const notes = await clientNotes(page);
  assert.ok(notes.some((note) => /own tokens \(context calibration\).*1\.50 characters per token/.test(note)), notes.join('\n'));
  assert.ok(!notes.some((note) => /server tokens per planned token/.test(note)), notes.join('\n'));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a server without usage stops a calibrated run before anything is measured', async () => {
  const { page } = await env.run(settings({ context_calibration: 'true', model: 'sim-fault-no-usage', engine: 'strobe-sim' }));
  const status = page.getByTestId('status');
  assert.equal(await status.getAttribute('data-state'), 'error');
  assert.match(await status.textContent(), /context calibration failed: the server's answer to probe 1 has no usage\.prompt_tokens.*Turn context_calibration off/s);
  assert.equal(await page.getByTestId('download').count(), 0, 'no artifact');
  await page.close();
});
