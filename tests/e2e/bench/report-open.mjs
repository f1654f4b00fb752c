// Browser benchmark: how long a one-file report takes to open from disk in headless Chromium,
// offline, in a new page each time: navigation start → the document parsed (DOMContentLoaded),
// → its hover script ready (the charts answer the pointer), → the load event. The reports are
// the ones `cargo bench --bench report` writes with STROBE_BENCH_DUMP (1,000 and 10,000 rows).
//
// Usage: node tests/e2e/bench/report-open.mjs [--repeat N]   (scripts/bench-report.sh)
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { launchBrowser } from '../browser.mjs';
import { percentile } from './stats.mjs';

const DIR = process.env.STROBE_BENCH_DUMP ?? 'target/bench-dump';
const { values: flags } = parseArgs({ options: { repeat: { type: 'string', default: '5' } } });
const REPEAT = Math.max(1, Math.min(20, Number(flags.repeat) || 5));

const browser = await launchBrowser();
await browser.setOffline(true);
console.log('| rows | size | parsed | hover ready | load | requests |');
console.log('|---:|---:|---:|---:|---:|---:|');
try {
  for (const rows of [1000, 10000]) {
    const path = resolve(`${DIR}/report-${rows}.html`);
    if (!existsSync(path)) {
      console.error(`${path} is missing: run STROBE_BENCH_DUMP=${DIR} cargo bench --bench report`);
      process.exit(2);
    }
    const samples = { parsed: [], ready: [], load: [] };
    let requests = 0;
    for (let repeat = 0; repeat < REPEAT; repeat += 1) {
      const page = await browser.newPage();
      page.on('request', (request) => {
        if (!request.url().startsWith('file:')) requests += 1;
      });
      await page.goto(pathToFileURL(path).href, { waitUntil: 'load' });
      await page.waitForFunction(() => document.documentElement.dataset.hover === 'ready');
      const timing = await page.evaluate(() => {
        const [navigation] = performance.getEntriesByType('navigation');
        return {
          parsed: navigation.domContentLoadedEventEnd,
          ready: performance.getEntriesByName('strobe-report:hover-ready')[0]?.startTime ?? NaN,
          load: navigation.loadEventEnd,
        };
      });
      for (const key of Object.keys(samples)) samples[key].push(timing[key]);
      await page.close();
    }
    const median = (values) => percentile([...values].sort((a, b) => a - b), 50).toFixed(0);
    const megabytes = (statSync(path).size / 1e6).toFixed(2);
    console.log(
      `| ${rows.toLocaleString('en-US')} | ${megabytes} MB | ${median(samples.parsed)} ms | ` +
        `${median(samples.ready)} ms | ${median(samples.load)} ms | ${requests} |`,
    );
  }
  console.log(`\nmedians of ${REPEAT} opens each, file://, offline, a new page each time`);
} finally {
  await browser.close();
}
