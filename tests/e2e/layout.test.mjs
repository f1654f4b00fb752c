// The first screen a new user sees (issue: a page understood at a glance): the settings most
// runs change up front, everything else in collapsed Advanced sections, help on focus rather
// than all at once, Run within reach without scrolling on a 1440×900 screen, and a finished
// run's headline numbers on that first screen too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite } from './page.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const ESSENTIALS = ['base_url', 'model', 'requests', 'concurrency', 'load', 'context_tokens', 'max_tokens'];

test('a first visit shows the essentials and Run without scrolling, the rest collapsed', async () => {
  const { page, errors } = await env.open();
  await page.setViewportSize({ width: 1440, height: 900 });
  for (const key of ESSENTIALS) {
    assert.ok(await page.getByTestId(`field-${key}`).isVisible(), `${key} is up front`);
  }
  const run = await page.getByTestId('run').boundingBox();
  assert.ok(run && run.y >= 0 && run.y + run.height <= 900, `Run at ${JSON.stringify(run)} is on the first screen`);
  assert.equal(await page.getByTestId('field-temperature').isVisible(), false, 'advanced fields start collapsed');

  // Help shows on focus, not all at once.
  const help = page.getByTestId('essentials').locator('label', { has: page.getByTestId('field-requests') }).locator('.field-help');
  assert.equal(await help.isVisible(), false);
  await page.getByTestId('field-requests').focus();
  assert.ok(await help.isVisible(), 'the focused field shows its help');
  assert.match(await help.textContent(), /\S/);

  // A section opens on a click, by keyboard too.
  const sampling = page.getByTestId('advanced-sampling');
  await sampling.locator('summary').focus();
  await page.keyboard.press('Enter');
  assert.ok(await page.getByTestId('field-temperature').isVisible(), 'Enter opens the section');
  await page.screenshot({ path: 'test-results/idle-page.png' });
  assert.deepEqual(errors, []);
  await page.close();
});

test('a link that sets advanced fields says so on their section, and an invalid one opens it', async () => {
  const { page, errors } = await env.open({ temperature: '0.5', top_p: '2', warmup: 'false' });
  const sampling = page.getByTestId('advanced-sampling');
  assert.match(await sampling.locator('summary').textContent(), /Sampling · 2 changed/);
  assert.equal(await sampling.getAttribute('open'), '', 'the invalid top_p keeps its section open');
  assert.match(await page.getByTestId('error-top_p').textContent(), /top_p/);
  const load = page.getByTestId('advanced-load');
  assert.match(await load.locator('summary').textContent(), /Load · 1 changed/);
  assert.equal(await load.getAttribute('open'), null, 'a changed, valid section stays closed');
  assert.ok(await page.getByTestId('run').isDisabled(), 'Run waits for the fix');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a finished run opens with its headline numbers on the first screen', async () => {
  const sim = await startSim(['--seed', '3', '--decode-interval-ms', '5']);
  try {
    const { page, errors } = await env.open({ base_url: sim.baseUrls[0], requests: '12', concurrency: '4', context_tokens: '512', max_tokens: '16' });
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.getByTestId('run').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'finished', null, { timeout: 60_000 });
    const requests = page.getByTestId('card-requests');
    assert.match(await requests.textContent(), /12 ok.*of 12/s);
    for (const id of ['ttft', 'tpot', 'e2e']) {
      assert.match(await page.getByTestId(`card-${id}`).textContent(), /p50\s*[0-9.]+ (µs|ms|s)p95 [0-9.]+ (µs|ms|s)/, id);
    }
    assert.match(await page.getByTestId('card-throughput').textContent(), /[0-9,.]+ tok\/s/);
    const box = await page.getByTestId('headline-cards').boundingBox();
    assert.ok(box && box.y + box.height <= 900, `the cards at ${JSON.stringify(box)} are on the first screen`);
    // With an SLO, a goodput card joins them.
    await page.getByTestId('slo-input').fill('ttft:10000');
    await page.getByTestId('card-goodput').waitFor();
    assert.match(await page.getByTestId('card-goodput').textContent(), /req\/s.*100\.0 % met the SLO \(12 of 12 requests\)/s);
    await page.screenshot({ path: 'test-results/finished-run.png' });
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('at 390 px the form comes first and nothing is wider than the window', async () => {
  const { page, errors } = await env.open();
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(await overflow() <= 0, `the idle page is ${await overflow()} px too wide`);
  const form = await page.getByTestId('run-view').boundingBox();
  const results = await page.getByTestId('results-view').boundingBox();
  assert.ok(form.y < results.y, 'the form is above the results');
  // A comparison of two runs, charts and tables included, fits too.
  const reference = JSON.parse(readFileSync('tests/fixtures/reference-artifact.json', 'utf8'));
  const other = { ...reference, concurrency: 4, run_id: 'benchmark-20261005T120000Z' };
  const file = (name, value) => ({ name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(value)) });
  await page.getByTestId('artifact-input').setInputFiles([file('reference.json', reference), file('other.json', other)]);
  await page.getByTestId('compare-runs').waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid^=chart-]')].every((chart) => chart.dataset.drawn === 'true'));
  assert.ok(await overflow() <= 0, `the comparison is ${await overflow()} px too wide`);
  await page.screenshot({ path: 'test-results/narrow-390.png', fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});
