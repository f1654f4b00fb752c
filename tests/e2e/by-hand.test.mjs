// Faults a person met by hand (issue: a web layer as clear as the core), each acted out as they
// did it: type the API key and click Run at once in a 1400 × 1000 window; select two runs of
// different servers and look for a capacity curve; read the drop zone's sentence at 1440 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite } from './page.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();

test('typing the API key and then clicking Run starts the run with that one click', async () => {
  const sim = await startSim(['--seed', '21', '--decode-interval-ms', '2']);
  try {
    for (const [width, height] of [[1400, 1000], [1440, 900], [1280, 720]]) {
      const { page, errors } = await env.open({
        base_url: sim.baseUrls[0],
        requests: '2',
        concurrency: '1',
        context_tokens: '256',
        max_tokens: '16',
      });
      await page.setViewportSize({ width, height });
      await page.getByTestId('api-key').click();
      await page.keyboard.type('sk-by-hand');
      // One click, straight from the key field, as a person does it.
      await page.getByTestId('run').click();
      await page.waitForFunction(
        () => document.querySelector('[data-testid="status"]')?.dataset.state !== 'idle',
        null,
        { timeout: 5_000 },
      ).catch(() => {});
      const state = await page.getByTestId('status').getAttribute('data-state');
      assert.notEqual(state, 'idle', `at ${width} × ${height} the first click on Run was lost`);
      await page.waitForFunction(
        () => ['finished', 'error'].includes(document.querySelector('[data-testid="status"]')?.dataset.state),
        null,
        { timeout: 60_000 },
      );
      assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
      assert.deepEqual(errors, []);
      await page.close();
    }
  } finally {
    await sim.stop();
  }
});

/** The reference artifact as a run of `model` at `concurrency`, as a file to drop. */
function artifactFile(name, model, concurrency) {
  const artifact = JSON.parse(readFileSync('tests/fixtures/reference-artifact.json', 'utf8'));
  artifact.model = model;
  artifact.concurrency = concurrency;
  artifact.engine = 'vllm';
  return { name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(artifact, null, 2)) };
}

test('two runs of different servers are not drawn as one capacity curve', async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('artifact-input').setInputFiles([
    artifactFile('server-a-c1.json', 'model-a', 1),
    artifactFile('server-b-c4.json', 'model-b', 4),
  ]);
  await page.getByTestId('library-row').nth(1).waitFor();
  const verdicts = await page.getByTestId('verdict').allTextContents();
  assert.deepEqual(verdicts, ['valid', 'valid'], 'both runs are selected');
  await page.getByTestId('compare-table').waitFor();
  assert.equal(await page.getByTestId('capacity-view').count(), 0, 'no curve joins unrelated runs');
  // Two runs of one server at two loads are its curve, named by what they share.
  await page.getByTestId('artifact-input').setInputFiles([artifactFile('server-a-c4.json', 'model-a', 4)]);
  await page.getByTestId('library-row').nth(2).waitFor();
  const help = await page.getByTestId('capacity-view').locator('.capacity-help').textContent();
  assert.match(help, /^1 curve: selected runs of model-a on vllm \(concurrency\)\./);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the drop zone says its whole sentence at 1440 px', async () => {
  const { page, errors } = await env.open();
  await page.setViewportSize({ width: 1440, height: 900 });
  const text = page.getByTestId('drop-zone-text');
  const sentence = (await text.textContent()).trim();
  assert.match(sentence, /[.:]$/, `the sentence ends: ${JSON.stringify(sentence)}`);
  assert.doesNotMatch(sentence, /\bor$/, 'it does not stop on "or"');
  const clipped = await text.evaluate((element) => element.scrollWidth > element.clientWidth + 1);
  assert.equal(clipped, false, 'nothing of it is cut off');
  assert.deepEqual(errors, []);
  await page.close();
});
