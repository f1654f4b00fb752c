// End-to-end: the API key and "Remember the key on this device", in headless Chromium. Ticked,
// the key is kept in the page's local storage and is back after a reload, never in the address
// bar; unticked, it is gone from storage. A browser that refuses to keep it (its storage full,
// or blocked for the site: Chromium's `setItem` then throws) gets a note saying the key is used
// for this visit only, instead of a tick that silently kept nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collectPageErrors } from './browser.mjs';
import { browserAndSite } from './page.mjs';

const env = browserAndSite();
const KEY = 'sk-remember-me-7f3a';
const STORED = () => localStorage.getItem('strobe.api_key');

test('a remembered key survives a reload and is forgotten when unticked', async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('api-key').fill(KEY);
  assert.equal(await page.evaluate(STORED), null, 'not kept until asked');
  await page.getByTestId('remember-key').check();
  assert.equal(await page.evaluate(STORED), KEY);
  assert.equal(await page.getByTestId('key-storage-note').count(), 0);

  await page.reload();
  await page.getByTestId('app-ready').waitFor();
  assert.equal(await page.getByTestId('api-key').inputValue(), KEY, 'back after a reload');
  assert.ok(await page.getByTestId('remember-key').isChecked());
  assert.ok(!page.url().includes(KEY), 'never in the address bar');

  await page.getByTestId('remember-key').uncheck();
  assert.equal(await page.evaluate(STORED), null, 'forgotten');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a browser that refuses to keep the key says so instead of pretending', async () => {
  const page = await env.browser.newPage();
  const errors = collectPageErrors(page);
  // What Chromium does when the site's storage is full: setItem throws QuotaExceededError.
  await page.addInitScript(() => {
    Storage.prototype.setItem = function () {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
  });
  await page.goto(env.site.url);
  await page.getByTestId('app-ready').waitFor();
  await page.getByTestId('api-key').fill(KEY);
  await page.getByTestId('remember-key').check();
  const note = page.getByTestId('key-storage-note');
  await note.waitFor();
  assert.match(await note.textContent(), /refused to keep the key \(.*quota.*\): it is used for this visit only/i);
  assert.ok(!(await note.textContent()).includes(KEY), 'the note never shows the key');
  assert.equal(await page.evaluate(STORED), null);
  // Unticking clears the note: nothing is asked of the storage any more.
  await page.getByTestId('remember-key').uncheck();
  assert.equal(await note.count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
