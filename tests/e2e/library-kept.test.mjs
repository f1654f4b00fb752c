// End-to-end: the library stays. A run finished on the page and files dropped on it are kept
// in the browser (IndexedDB); after a reload they are there with the same numbers, Remove and
// Clear all forget them, and a browser whose storage is full says what to do and loses nothing
// of the run it just measured, nor anything it kept before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite, openApp, waitForRunEnd } from './page.mjs';
import { launchBrowser } from './browser.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const REFERENCE = 'tests/fixtures/reference-artifact.json';
const VLLM = 'tests/fixtures/peers/vllm/vllm-0.33.0-c1.json';

async function cardCount(page, n) {
  await page.waitForFunction((count) => document.querySelectorAll('[data-testid=library-row]').length === count, n);
}

/** The single-run view's "Summary as Markdown": every headline number of the selected run. */
async function summaryMarkdown(page) {
  await page.getByTestId('single-run').waitFor();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('single-run').getByTestId('export-markdown').click(),
  ]);
  return readFileSync(await download.path(), 'utf8');
}

async function runSmall(page) {
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 120_000);
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
}

test('a finished run and a dropped file are there after a reload, with the same numbers', async () => {
  const sim = await startSim(['--seed', '31']);
  try {
    const settings = { base_url: sim.baseUrls[0], requests: '8', concurrency: '2', context_tokens: '256', max_tokens: '16' };
    const { page, errors } = await env.open(settings);
    await runSmall(page);
    await cardCount(page, 1);
    await page.waitForFunction(() => document.querySelector('[data-testid=artifact-kept]')?.dataset.kept === 'true');
    assert.match(await page.getByTestId('artifact-kept').textContent(), /KB, kept in this browser/);
    const before = await summaryMarkdown(page);

    await page.reload();
    await page.getByTestId('app-ready').waitFor();
    await cardCount(page, 1);
    assert.equal(await page.getByTestId('artifact-kept').getAttribute('data-kept'), 'true');
    assert.equal(await summaryMarkdown(page), before, 'the kept run shows the numbers it showed');

    // A dropped file is kept too, and only the newest batch starts selected after a reload.
    await page.getByTestId('artifact-input').setInputFiles([REFERENCE]);
    await cardCount(page, 2);
    await page.waitForFunction(
      () => [...document.querySelectorAll('[data-testid=artifact-kept]')].every((kept) => kept.dataset.kept === 'true'),
    );
    await page.reload();
    await page.getByTestId('app-ready').waitFor();
    await cardCount(page, 2);
    const labels = await page.getByTestId('artifact-label').allTextContents();
    assert.ok(labels.includes('reference-artifact.json'), labels.join());
    const checked = await page.getByTestId('select-artifact').evaluateAll((boxes) => boxes.map((box) => box.checked));
    assert.equal(checked.filter(Boolean).length, 1, 'one run selected, not a comparison of everything kept');

    // Remove forgets one; Clear all forgets the rest.
    const reference = page.getByTestId('library-row').filter({ hasText: 'reference-artifact.json' });
    await reference.getByTestId('remove-artifact').click();
    await cardCount(page, 1);
    await page.reload();
    await page.getByTestId('app-ready').waitFor();
    await cardCount(page, 1);
    assert.ok(!(await page.getByTestId('artifact-label').allTextContents()).includes('reference-artifact.json'));
    await page.getByTestId('library-clear').click();
    await cardCount(page, 0);
    await page.reload();
    await page.getByTestId('app-ready').waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid=drop-zone]')?.dataset.restored === 'true');
    assert.equal(await page.getByTestId('library-row').count(), 0, 'nothing comes back after Clear all');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a full storage says what to do, and the run just measured stays in the library', async () => {
  const sim = await startSim(['--seed', '32']);
  // A profile of its own: Chromium applies a quota override to an origin whose storage this
  // browser has not used yet.
  const browser = await launchBrowser();
  try {
    const { page } = await openApp(browser, env.site.url, {
      base_url: sim.baseUrls[0],
      requests: '8',
      concurrency: '2',
      context_tokens: '256',
      max_tokens: '16',
    });
    // Chromium's own quota for this origin, set to less than one artifact.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin, quotaSize: 1024 });
    await runSmall(page);
    await cardCount(page, 1);
    const note = page.getByTestId('library-note');
    // The browser refuses the write once it has weighed it against the quota.
    await page.waitForFunction(
      () => /storage for this page is full/.test(document.querySelector('[data-testid=library-note]')?.textContent ?? ''),
      null,
      { timeout: 60_000 },
    );
    assert.ok(await note.isVisible(), 'the note is shown');
    assert.match(await note.textContent(), /storage for this page is full/);
    assert.match(await note.textContent(), /Remove, or Clear all/);
    assert.equal(await page.getByTestId('artifact-kept').getAttribute('data-kept'), 'false');
    assert.match(await page.getByTestId('artifact-kept').textContent(), /not kept/);
    // The run is still there to read and download.
    await page.getByTestId('single-run').waitFor();
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(page.url()).origin });
    await page.close();
  } finally {
    await browser.close();
    await sim.stop();
  }
});

test('a full storage loses nothing already kept', async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('artifact-input').setInputFiles([REFERENCE]);
  await cardCount(page, 1);
  await page.waitForFunction(() => document.querySelector('[data-testid=artifact-kept]')?.dataset.kept === 'true');
  // From now on every write is refused as a full storage refuses it.
  await page.evaluate(() => {
    const full = () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    IDBObjectStore.prototype.add = full;
    IDBObjectStore.prototype.put = full;
  });
  await page.getByTestId('artifact-input').setInputFiles([VLLM]);
  await cardCount(page, 2);
  const note = page.getByTestId('library-note');
  await note.waitFor();
  assert.match(await note.textContent(), /storage for this page is full, so this was not kept: remove runs you no longer need/);
  assert.match(await note.textContent(), /The quota has been exceeded/);
  const kept = await page.getByTestId('artifact-kept').evaluateAll((rows) => rows.map((row) => row.dataset.kept));
  assert.deepEqual(kept, ['true', 'false'], 'the new file is loaded, not kept');
  // Both stay to read now; after a reload, what was kept before is all there.
  await page.reload();
  await page.getByTestId('app-ready').waitFor();
  await page.waitForFunction(() => document.querySelector('[data-testid=drop-zone]')?.dataset.restored === 'true');
  await cardCount(page, 1);
  assert.equal((await page.getByTestId('artifact-label').textContent()).trim(), 'reference-artifact.json');
  assert.equal(await page.getByTestId('artifact-kept').getAttribute('data-kept'), 'true');
  assert.deepEqual(errors, []);
  await page.close();
});
