// Browser benchmark: how long the built page takes, in headless Chromium, from picking a
// 10,000-row artifact to every chart drawn — reading the file, validating and loading it in
// wasm, building the chart options and ECharts drawing them. The artifact is the one the
// native benchmark (`cargo bench --bench load_10k`) synthesizes through the real pipeline.
//
// Usage: node tests/e2e/bench/load-10k.mjs [--repeat N]   (scripts/bench-load.sh builds what is missing)
import { existsSync, statSync } from 'node:fs';
import { serveStatic } from '../static-server.mjs';
import { launchBrowser, collectPageErrors } from '../browser.mjs';

const ARTIFACT = process.env.STROBE_BENCH_ARTIFACT ?? 'target/bench-dump/bench-10k.json';
const repeatIndex = process.argv.indexOf('--repeat');
const REPEAT = repeatIndex > 0 ? Math.min(10, Number(process.argv[repeatIndex + 1]) || 3) : 3;

if (!existsSync(ARTIFACT)) {
  console.error(`${ARTIFACT} is missing: run STROBE_BENCH_DUMP=target/bench-dump cargo bench --bench load_10k`);
  process.exit(2);
}

const site = await serveStatic({ root: process.env.STROBE_DIST ?? 'dist' });
const browser = await launchBrowser();
const timings = [];
try {
  for (let run = 0; run < REPEAT; run += 1) {
    const page = await browser.newPage();
    const errors = collectPageErrors(page);
    await page.goto(site.url);
    await page.getByTestId('app-ready').waitFor();
    const started = performance.now();
    await page.getByTestId('artifact-input').setInputFiles(ARTIFACT);
    await page.getByTestId('single-run').waitFor({ timeout: 60_000 });
    const verdict = await page.getByTestId('verdict').first().textContent();
    // Every chart of the run has its canvas once ECharts has drawn it.
    await page.waitForFunction(() => {
      const charts = [...document.querySelectorAll('[data-testid^=chart-]')];
      return charts.length > 0 && charts.every((chart) => chart.querySelector('canvas'));
    }, null, { timeout: 60_000 });
    const elapsed = performance.now() - started;
    const charts = await page.locator('[data-testid^=chart-]').count();
    const stages = await page.evaluate(() => {
      const totals = {};
      for (const entry of performance.getEntriesByType('measure')) {
        if (entry.name.startsWith('strobe:')) totals[entry.name] = (totals[entry.name] ?? 0) + entry.duration;
      }
      return totals;
    });
    console.log('  in-page stages (ms):', Object.entries(stages).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', '));
    timings.push(elapsed);
    console.log(`run ${run + 1}: ${elapsed.toFixed(0)} ms (verdict ${verdict}, ${charts} charts)`);
    if (errors.length) console.log('page errors:', errors);
    await page.close();
  }
} finally {
  await browser.close();
  await site.close();
}
timings.sort((a, b) => a - b);
const mib = statSync(ARTIFACT).size / (1024 * 1024);
console.log(
  `\n10,000-row artifact (${mib.toFixed(1)} MiB): pick → all charts drawn, best ${timings[0].toFixed(0)} ms, ` +
    `median ${timings[Math.floor(timings.length / 2)].toFixed(0)} ms over ${timings.length} runs`,
);
