// The README's screenshot: a finished run against strobe-sim in the built page, its results
// panel as the user sees it (summary, how it was measured, the charts), written to
// docs/images/results.png. Run by scripts/screenshot.sh after a release build, so the picture
// is of the current build; not a test (it asserts nothing beyond the run finishing).
import { mkdirSync } from 'node:fs';
import { launchBrowser } from './browser.mjs';
import { serveStatic } from './static-server.mjs';
import { startSim } from './sim.mjs';
import { runFromPage } from './page.mjs';

const OUT = process.argv[2] ?? 'docs/images/results.png';

const sim = await startSim(['--seed', '7'], { ports: 2 });
const site = await serveStatic({ root: process.env.STROBE_DIST ?? 'dist' });
const browser = await launchBrowser();
try {
  const { page } = await runFromPage(browser, site.url, {
    base_url: sim.baseUrls[0],
    pool: sim.baseUrls[1],
    requests: '48',
    concurrency: '8',
    context_tokens: '1024',
    max_tokens: '64',
    request_canaries: 'true',
  });
  await page.setViewportSize({ width: 1440, height: 1700 });
  const results = page.getByTestId('results-view');
  await page.getByTestId('single-run').waitFor();
  // Every chart of the selected run has drawn.
  await page.waitForFunction(() => {
    const figures = [...document.querySelectorAll('[data-testid=single-run] figure[data-drawn]')];
    return figures.length > 0 && figures.every((figure) => figure.dataset.drawn === 'true');
  }, null, { timeout: 60_000 });
  mkdirSync('docs/images', { recursive: true });
  // The top of the panel: the run's numbers, how it was measured and the first charts.
  await results.evaluate((element) => element.scrollIntoView({ block: 'start' }));
  const box = await results.boundingBox();
  const top = Math.max(0, box.y);
  const clip = { x: box.x, y: top, width: box.width, height: Math.min(box.height, 1400) };
  await page.screenshot({ path: OUT, clip });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await site.close();
  await sim.stop();
}
