// Smoke test: the release build mounts in headless Chromium, at the root and under a sub-path,
// cross-origin isolated, without ECharts until the first chart (then loaded from the build, under
// the sub-path too), and no error on the console; a first visit fetches only the main part of
// the split wasm, the others come when used; a build whose ECharts or wasm parts cannot be
// loaded says so and loses nothing else.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { serveStatic } from './static-server.mjs';
import { launchBrowser, collectPageErrors } from './browser.mjs';

const DIST = process.env.STROBE_DIST ?? 'dist';
// The build with the benchmark hooks (`--features bench-hooks`, scripts/check.sh builds it).
const BENCH_DIST = process.env.STROBE_BENCH_DIST ?? 'dist-bench';
let browser;

before(async () => {
  browser = await launchBrowser();
  mkdirSync('test-results', { recursive: true });
});
after(async () => {
  await browser?.close();
});

for (const basePath of ['/', '/team/tools/strobe/']) {
  test(`the built page mounts at ${basePath}`, async () => {
    const site = await serveStatic({ root: DIST, basePath });
    const page = await browser.newPage();
    const errors = collectPageErrors(page);
    try {
      await page.goto(site.url);
      await page.getByTestId('app-ready').waitFor({ timeout: 20_000 });
      assert.equal(await page.locator('h1.brand').textContent(), 'strobe');
      // A first visit draws no chart, so it does not download ECharts…
      assert.equal(await page.evaluate(() => typeof window.echarts), 'undefined', 'ECharts waits for a chart');
      const loadedScripts = () => page.evaluate(() => performance.getEntriesByType('resource')
        .map((entry) => new URL(entry.name).pathname).filter((path) => path.endsWith('.js')));
      assert.ok(!(await loadedScripts()).some((path) => path.endsWith('/echarts.min.js')), 'no request for ECharts');
      // …nor any part of the split wasm but the main one (scripts/split-wasm.mjs).
      const loadedWasm = () => page.evaluate(() => performance.getEntriesByType('resource')
        .map((entry) => new URL(entry.name).pathname).filter((path) => path.endsWith('.wasm')));
      const firstVisit = await loadedWasm();
      assert.equal(firstVisit.length, 1, `a first visit fetches only the main module: ${firstVisit}`);
      assert.match(firstVisit[0], /\/strobe-[0-9a-f]+_bg\.wasm$/);
      assert.equal(await page.evaluate(() => window.crossOriginIsolated), true, 'page is cross-origin isolated');
      assert.equal(
        await page.evaluate(() => typeof window.wasmBindings?.bench_read_path),
        'undefined',
        'the shipped build carries no benchmark hook',
      );
      if (basePath === '/') await page.screenshot({ path: 'test-results/smoke.png', fullPage: true });
      // The pointer on the drop zone starts fetching the results part, before any file is given.
      await page.getByTestId('drop-zone').hover();
      await page.waitForFunction((before) => performance.getEntriesByType('resource')
        .filter((entry) => entry.name.endsWith('.wasm')).length > before, firstVisit.length, { timeout: 10_000 });
      // And on Run, the part that runs.
      const beforeRun = (await loadedWasm()).length;
      await page.getByTestId('run').hover();
      await page.waitForFunction((before) => performance.getEntriesByType('resource')
        .filter((entry) => entry.name.endsWith('.wasm')).length > before, beforeRun, { timeout: 10_000 });
      // …which the first chart loads, from beside the page (under the sub-path too).
      await page.getByTestId('open-example').click();
      await page.waitForFunction(() => document.querySelector('[data-testid=chart-cdf-ttft]')?.dataset.drawn === 'true');
      assert.equal(await page.evaluate(() => typeof window.echarts?.init), 'function', 'ECharts is bundled');
      assert.ok((await loadedScripts()).includes(`${basePath}echarts.min.js`), 'ECharts came from the build');
      // The results part of the wasm came with the first file opened, from beside the page.
      const parts = (await loadedWasm()).filter((path) => !firstVisit.includes(path));
      assert.ok(parts.length > 0, 'opening a file fetched the results part');
      assert.ok(parts.every((path) => path.startsWith(basePath)), `parts from the build: ${parts}`);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await site.close();
    }
  });
}

test('a build whose ECharts cannot be loaded says so in each chart, and keeps the run', async () => {
  const site = await serveStatic({ root: DIST });
  const page = await browser.newPage();
  try {
    // The host answers 404 for ECharts, as a build copied without it would.
    await page.route('**/echarts.min.js', (route) => route.fulfill({ status: 404, body: 'not found' }));
    await page.goto(site.url);
    await page.getByTestId('app-ready').waitFor({ timeout: 20_000 });
    await page.getByTestId('open-example').click();
    await page.getByTestId('single-run').waitFor();
    const chart = page.getByTestId('chart-cdf-ttft');
    await chart.locator('.error-box').waitFor({ timeout: 10_000 });
    const reason = await chart.locator('.error-box').textContent();
    assert.match(reason, /echarts\.min\.js could not be loaded.*reload the page/, reason);
    // The run itself is there: its headline numbers and its row in the library.
    assert.equal(await page.getByTestId('library-row').count(), 1);
    assert.ok((await page.getByTestId('single-run').textContent()).length > 0);
  } finally {
    await page.close();
    await site.close();
  }
});

test('a part of the wasm the host cannot send is said, with what to do, and the page keeps going', async () => {
  const site = await serveStatic({ root: DIST });
  const page = await browser.newPage();
  try {
    // The host has only the main module: a site updated since the page was opened, whose old
    // parts are gone, answers so.
    await page.route(/\.wasm$/, (route) => (/\/strobe-[0-9a-f]+_bg\.wasm$/.test(route.request().url())
      ? route.continue()
      : route.fulfill({ status: 404, body: 'not found' })));
    await page.goto(site.url);
    await page.getByTestId('app-ready').waitFor({ timeout: 20_000 });
    await page.getByTestId('open-example').click();
    const note = page.getByTestId('library-note');
    await note.waitFor({ timeout: 10_000 });
    assert.match(await note.textContent(), /part of strobe's code could not be loaded.*reload the page/);
    // Run needs its own part: the status says why it did not start, and the page still answers.
    await page.getByTestId('run').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'error', null, { timeout: 10_000 });
    assert.match(await page.getByTestId('status').textContent(), /part of strobe's code could not be loaded.*reload the page/);
    await page.getByTestId('field-requests').fill('7');
    assert.equal(await page.getByTestId('field-requests').inputValue(), '7');
  } finally {
    await page.close();
    await site.close();
  }
});

// The read-path benchmark's hook (tests/e2e/bench/read-path.mjs): the app's own reading path
// over streams made in the page reads them to [DONE], and says why when a stream is not one.
test('the exported read path reads streams made in the page, and refuses broken ones', async () => {
  const site = await serveStatic({ root: BENCH_DIST });
  const page = await browser.newPage();
  const errors = collectPageErrors(page);
  try {
    await page.goto(site.url);
    await page.getByTestId('app-ready').waitFor({ timeout: 20_000 });
    const read = (events) => page.evaluate(async (texts) => {
      const chunks = texts.map((text) => new TextEncoder().encode(text));
      try {
        return { ms: await window.wasmBindings.bench_read_path(chunks, 12, 4) };
      } catch (error) {
        return { error: String(error) };
      }
    }, events);
    const chunk = (delta) => `data: {"choices":[{"index":0,"delta":${delta},"finish_reason":null}]}\n\n`;
    const complete = await read([chunk('{"content":"MARK"}'), chunk('{"content":" code"}'), 'data: [DONE]\n\n']);
    assert.equal(typeof complete.ms, 'number', JSON.stringify(complete));
    assert.ok(complete.ms > 0, `took ${complete.ms} ms`);
    const noDone = await read([chunk('{"content":"MARK"}')]);
    assert.match(noDone.error ?? '', /did not read to \[DONE\]/);
    const serverError = await read([chunk('{"content":"MARK"}'), 'data: {"error":{"message":"overloaded"}}\n\n']);
    assert.match(serverError.error ?? '', /overloaded/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await site.close();
  }
});
