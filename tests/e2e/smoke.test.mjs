// Smoke test: the release build mounts in headless Chromium, at the root and under a sub-path,
// cross-origin isolated, with ECharts loaded and no error on the console.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { serveStatic } from './static-server.mjs';
import { launchBrowser, collectPageErrors } from './browser.mjs';

const DIST = process.env.STROBE_DIST ?? 'dist';
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
      assert.equal(await page.evaluate(() => typeof window.echarts?.init), 'function', 'ECharts is bundled');
      assert.equal(await page.evaluate(() => window.crossOriginIsolated), true, 'page is cross-origin isolated');
      if (basePath === '/') await page.screenshot({ path: 'test-results/smoke.png', fullPage: true });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
      await site.close();
    }
  });
}
