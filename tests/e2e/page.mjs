// Driving the built app in a page: open it with settings in its link, press Run, wait for the
// run to end, and take the downloaded artifact. Shared by the end-to-end tests.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { collectPageErrors, launchBrowser } from './browser.mjs';
import { serveStatic } from './static-server.mjs';
import { readArtifact } from './artifact-tools.mjs';

const DIST = process.env.STROBE_DIST ?? 'dist';

/**
 * One headless browser and the built site (dist/, or STROBE_DIST) for a test file: started
 * before its tests and closed after them. The returned holder's `browser` and `site` are set
 * once the tests run; `run(settings, options)` is {@link runFromPage} on them, `open(settings)`
 * {@link openApp}.
 */
export function browserAndSite() {
  const env = {
    browser: null,
    site: null,
    run: (settings, options) => runFromPage(env.browser, env.site.url, settings, options),
    open: (settings, options) => openApp(env.browser, env.site.url, settings, options),
  };
  before(async () => {
    mkdirSync('test-results', { recursive: true });
    env.browser = await launchBrowser();
    env.site = await serveStatic({ root: DIST });
  });
  after(async () => {
    await env.browser?.close();
    await env.site?.close();
  });
  return env;
}

/**
 * A new page on the app at `siteUrl`, with `settings` (if any) in its link, once the app says it
 * is ready: `{ page, errors }`, `errors` collecting the page's console errors as they come.
 * The library the app keeps in the browser (IndexedDB) is emptied first, so each test starts
 * with the library a first visit has; `{ keepLibrary: true }` opens it as it was left.
 */
export async function openApp(browser, siteUrl, settings = {}, { keepLibrary = false } = {}) {
  if (!keepLibrary) await emptyKeptLibrary(browser, siteUrl);
  const page = await browser.newPage();
  const errors = collectPageErrors(page);
  const query = new URLSearchParams(settings).toString();
  await page.goto(query ? `${siteUrl}?${query}` : siteUrl);
  await page.getByTestId('app-ready').waitFor();
  return { page, errors };
}

/**
 * Deletes the library the app keeps for `siteUrl`'s origin, from a page of that origin opened
 * for it alone (the browser's own requests for that page, such as its icon, stay out of the
 * app page's console).
 */
export async function emptyKeptLibrary(browser, siteUrl) {
  const page = await browser.newPage();
  try {
    await page.goto(new URL('public/example-artifact.json', siteUrl).href);
    await page.evaluate(
      () =>
        new Promise((resolve, reject) => {
          const request = indexedDB.deleteDatabase('strobe');
          request.onsuccess = () => resolve();
          request.onerror = () => reject(request.error);
        }),
    );
  } finally {
    await page.close();
  }
}

/**
 * Opens the app at `siteUrl` with `settings` in its link, presses Run and waits for the end.
 * `cancelAfterDone`: press Cancel once that many requests are done; `liveCharts`: tick the live
 * charts toggle first and wait for them to draw during the run. `measure`, when given, is
 * called with the span from pressing Run to the run's end (quiet-host.mjs).
 */
export async function runFromPage(browser, siteUrl, settings, { cancelAfterDone = null, liveCharts = false, measure = (start) => start() } = {}) {
  const { page, errors } = await openApp(browser, siteUrl, settings);
  const status = page.getByTestId('status');
  assert.equal(await status.getAttribute('data-state'), 'idle', 'a link never starts a run');
  if (liveCharts) await page.getByTestId('live-charts-toggle').check();
  await measure(() => runToTheEnd(page, { cancelAfterDone, liveCharts }));
  return { page, errors };
}

/** Presses Run and waits for the end (the part of {@link runFromPage} a timing test measures). */
async function runToTheEnd(page, { cancelAfterDone, liveCharts }) {
  await page.getByTestId('run').click();
  if (liveCharts) {
    // The live charts draw while requests are still in flight.
    await page.getByTestId('live-chart-ttft').locator('canvas').first().waitFor({ timeout: 30_000 });
    await page.getByTestId('live-chart-timeline').locator('canvas').first().waitFor();
  }
  if (cancelAfterDone !== null) {
    await page.waitForFunction(
      (n) => {
        const text = document.querySelector('[data-testid=live-counts]')?.textContent ?? '';
        const [done] = text.split('/').map((part) => Number(part.trim()));
        return done >= n;
      },
      cancelAfterDone,
      { timeout: 60_000 },
    );
    await page.getByTestId('cancel').click();
  }
  await waitForRunEnd(page, 120_000);
}

/** Waits until the run view says the run ended: finished, in error, or cancelled before it measured. */
export async function waitForRunEnd(page, timeoutMs) {
  await page.waitForFunction(
    () => ['finished', 'error', 'cancelled'].includes(document.querySelector('[data-testid=status]')?.dataset.state),
    null,
    { timeout: timeoutMs },
  );
}

/** Clicks Download (optionally redacting the endpoint) and keeps the file in test-results/. */
export async function downloadArtifact(page, name, { redact = false } = {}) {
  if (redact) await page.getByTestId('redact-base-url').check();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').click()]);
  const path = `test-results/${name}.json`;
  copyFileSync(await download.path(), path);
  return { path, suggested: download.suggestedFilename(), artifact: readArtifact(path) };
}

/**
 * Holds every request for the app's JavaScript glue (`strobe-<hash>.js`) on `page` until
 * `release()`: a measurement worker cannot say it is ready before it has imported the glue (the
 * page has its own copy already, so only a new worker asks for it), so a Cancel pressed while it
 * is held lands while the worker is still starting. The network is slow; the app is the one
 * built. `held` resolves when the first such request arrives.
 */
export async function holdWorkerGlue(page) {
  let heard;
  const held = new Promise((resolve) => (heard = resolve));
  const routes = [];
  const release = () => routes.splice(0).forEach((route) => route.continue().catch(() => {}));
  await page.route(/strobe-[0-9a-f]+\.js$/, (route) => {
    routes.push(route);
    heard();
  });
  return { held, release };
}
