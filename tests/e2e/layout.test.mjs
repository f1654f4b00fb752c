// The first screen a new user sees (issue: a page understood at a glance): the settings most
// runs change up front, everything else in collapsed Advanced sections, help on focus rather
// than all at once, and Run within reach without scrolling on a 1440×900 screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite } from './page.mjs';

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
