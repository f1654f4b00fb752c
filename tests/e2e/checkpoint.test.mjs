// End-to-end: checkpoints of a run in progress. While a run against a slow strobe-sim measures,
// the page keeps its finished requests in the browser's library every few seconds; a page
// closed mid-run leaves them, and a new page on the same profile lists them as a partial run,
// labelled, with its rows. A run that ends normally takes its checkpoint's place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, openApp, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const UNFINISHED = /^not finished when the page saved this checkpoint of the run/;

/** Every batch of files the app keeps (read from one of its own pages, once it opened them). */
async function keptRecords(page) {
  return page.evaluate(
    () =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('strobe');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          if (!db.objectStoreNames.contains('library')) {
            db.close();
            resolve([]);
            return;
          }
          const records = [];
          const cursor = db.transaction('library').objectStore('library').openCursor();
          cursor.onerror = () => reject(cursor.error);
          cursor.onsuccess = () => {
            const at = cursor.result;
            if (!at) {
              db.close();
              resolve(records);
              return;
            }
            const files = at.value.files.map((file) => ({ name: file.name, text: new TextDecoder().decode(file.bytes) }));
            records.push({ key: at.key, files });
            at.continue();
          };
        };
      }),
  );
}

/** The kept artifacts that are checkpoints, parsed. */
async function checkpoints(page) {
  return (await keptRecords(page))
    .map((record) => ({ key: record.key, artifact: JSON.parse(record.files[0].text) }))
    .filter(({ artifact }) => artifact.client?.checkpoint);
}

async function rowCount(page, n) {
  await page.waitForFunction((count) => document.querySelectorAll('[data-testid=library-row]').length === count, n);
}

test('a page closed mid-run leaves its finished requests as a labelled partial run', async () => {
  // About a second a request, two at a time: 40 requests take about 20 s.
  const sim = await startSim(['--seed', '51', '--decode-interval-ms', '60']);
  try {
    const settings = { base_url: sim.baseUrls[0], requests: '40', concurrency: '2', context_tokens: '256', max_tokens: '16' };
    const { page } = await env.open(settings);
    await page.getByTestId('run').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'running');
    // Wait for a checkpoint that holds a few requests.
    let saved = [];
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      saved = await checkpoints(page);
      if (saved.length > 0 && saved[0].artifact.client.checkpoint.finished_requests >= 3) break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.equal(saved.length, 1, 'one checkpoint, saved in place');
    const seen = saved[0].artifact.client.checkpoint.finished_requests;
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'running', 'still running');
    assert.equal(await page.getByTestId('library-row').count(), 0, 'the page lists it only when it ends');
    // The tab goes away mid-run.
    await page.close();

    const { page: next, errors } = await openApp(env.browser, env.site.url, {}, { keepLibrary: true });
    await rowCount(next, 1);
    const row = next.getByTestId('library-row');
    assert.equal(await row.getAttribute('data-partial'), 'true');
    const status = await row.getByTestId('artifact-status').textContent();
    const match = status.match(/^Partial run \(the tab closed during the run, (\d+) of 40 requests\): .*, (\d+) of them as rows/);
    assert.ok(match, status);
    const finished = Number(match[1]);
    assert.ok(finished >= seen && finished < 40, `${finished} requests (${seen} seen before the close)`);
    assert.ok(Number(match[2]) >= 1, 'its rows are there');
    await next.getByTestId('single-run').waitFor();
    assert.match(await next.getByTestId('client-notes').textContent(), /A checkpoint, not a finished run/);
    // The artifact says it is partial, truthfully.
    const [kept] = await checkpoints(next);
    const artifact = kept.artifact;
    assert.equal(artifact.requests, 40);
    assert.equal(artifact.client.checkpoint.finished_requests, finished);
    assert.equal(artifact.client.checkpoint.run_failed, null);
    assert.equal(artifact.request_timings.length, artifact.completed);
    assert.equal(artifact.completed + artifact.failed, 40);
    assert.equal(artifact.performance_eligible, false);
    const unfinished = artifact.failures.filter((failure) => UNFINISHED.test(failure.error_message));
    assert.equal(unfinished.length, 40 - finished);
    assert.ok(unfinished.every((failure) => failure.error_type === 'AbortError'));
    assert.deepEqual(errors, []);
    await next.close();
  } finally {
    await sim.stop();
  }
});

test('a run that ends takes its checkpoint\'s place', async () => {
  const sim = await startSim(['--seed', '52', '--decode-interval-ms', '40']);
  try {
    const settings = { base_url: sim.baseUrls[0], requests: '14', concurrency: '1', context_tokens: '256', max_tokens: '16' };
    const { page, errors } = await env.open(settings);
    await page.getByTestId('run').click();
    let saved = [];
    const deadline = Date.now() + 60_000;
    while (saved.length === 0 && Date.now() < deadline) {
      saved = await checkpoints(page);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(saved.length, 1, 'a checkpoint was saved during the run');
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    await rowCount(page, 1);
    await page.waitForFunction(() => document.querySelector('[data-testid=artifact-kept]')?.dataset.kept === 'true');
    const records = await keptRecords(page);
    assert.equal(records.length, 1, 'the run replaced its checkpoint');
    assert.equal(records[0].key, saved[0].key, 'under the same key');
    const artifact = JSON.parse(records[0].files[0].text);
    assert.equal(artifact.client.checkpoint, undefined);
    assert.equal(artifact.completed, 14);
    assert.equal(await page.getByTestId('library-row').getAttribute('data-partial'), 'false');
    await page.reload();
    await page.getByTestId('app-ready').waitFor();
    await rowCount(page, 1);
    assert.equal(await page.getByTestId('library-row').getAttribute('data-partial'), 'false');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});
