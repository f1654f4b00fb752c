// Browser benchmark: how long the built page takes to open with a library of 100 kept runs
// (docs/guide/results.md, "The library keeps what it holds"). One real run of --requests requests
// against strobe-sim gives the artifact; the page's own IndexedDB store then receives --runs
// copies of it, each a batch of its own under its own name, as the page keeps runs. Then, in a
// new page each time, navigation start → the library read back and every row listed, and → the
// charts of the run it selects (the newest) drawn; and the same page with an empty library, for
// what the library adds.
//
// Usage: node tests/e2e/bench/library-load.mjs [--runs N] [--requests N] [--repeat N]
// (scripts/bench-library.sh builds what is missing)
import { readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBrowser } from '../browser.mjs';
import { openApp, waitForRunEnd } from '../page.mjs';
import { startSim } from '../sim.mjs';
import { percentile } from './stats.mjs';

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '100' },
    requests: { type: 'string', default: '100' },
    repeat: { type: 'string', default: '5' },
  },
});
const RUNS = Math.max(1, Math.min(1000, Number(flags.runs) || 100));
const REQUESTS = Math.max(1, Math.min(10000, Number(flags.requests) || 100));
const REPEAT = Math.max(1, Math.min(20, Number(flags.repeat) || 5));

/** In a new page: navigation start → every row listed, and → the selected run's charts drawn. */
async function openTimed(browser, url, rows) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(
    (count) =>
      document.querySelector('[data-testid=drop-zone]')?.dataset.restored === 'true' &&
      document.querySelectorAll('[data-testid=library-row]').length === count,
    rows,
    { timeout: 120_000, polling: 'raf' },
  );
  const listed = await page.evaluate(() => performance.now());
  let drawn = NaN;
  if (rows > 0) {
    await page.waitForFunction(
      () => {
        const charts = [...document.querySelectorAll('[data-testid=single-run] [data-testid^=chart-]')];
        return charts.length > 0 && charts.every((chart) => chart.dataset.drawn === 'true');
      },
      null,
      { timeout: 120_000, polling: 'raf' },
    );
    drawn = await page.evaluate(() => performance.now());
  }
  const ready = await page.evaluate(
    () => performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd ?? NaN,
  );
  await page.close();
  return { listed, drawn, ready };
}

const median = (values) => percentile([...values].sort((a, b) => a - b), 50);
const ms = (value) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : '–');

const site = await serveStatic({ root: process.env.STROBE_DIST ?? 'dist' });
const browser = await launchBrowser();
const sim = await startSim(['--seed', '61', '--decode-interval-ms', '0', '--max-num-seqs', '64']);
const loadBefore = loadavg()[0];
try {
  // One real run: its artifact is every kept run's.
  const { page } = await openApp(browser, site.url, {
    base_url: sim.baseUrls[0],
    requests: String(REQUESTS),
    concurrency: '8',
    context_tokens: '256',
    max_tokens: '16',
  });
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 300_000);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').click()]);
  const path = await download.path();
  const text = readFileSync(path, 'utf8');
  const bytes = statSync(path).size;

  // An empty library first, for what the library adds.
  await page.getByTestId('library-clear').click();
  await page.waitForFunction(() => document.querySelectorAll('[data-testid=library-row]').length === 0);
  const empty = [];
  for (let repeat = 0; repeat < REPEAT; repeat += 1) empty.push(await openTimed(browser, site.url, 0));

  // The library as the page keeps it: one batch per run, each under its own name.
  await page.evaluate(
    ({ text, runs }) =>
      new Promise((resolve, reject) => {
        const open = indexedDB.open('strobe');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const transaction = db.transaction('library', 'readwrite');
          const store = transaction.objectStore('library');
          const bytes = new TextEncoder().encode(text);
          for (let run = 0; run < runs; run += 1) {
            const name = `bench-run-${String(run).padStart(3, '0')}.json`;
            store.add({ files: [{ name, bytes }], saved_unix_ms: Date.now() });
          }
          transaction.oncomplete = () => {
            db.close();
            resolve();
          };
          transaction.onerror = () => reject(transaction.error);
        };
      }),
    { text, runs: RUNS },
  );
  await page.close();
  const full = [];
  for (let repeat = 0; repeat < REPEAT; repeat += 1) full.push(await openTimed(browser, site.url, RUNS));

  console.log(
    `${RUNS} kept runs of ${REQUESTS} requests, ${(bytes / 1024).toFixed(1)} KB each ` +
      `(${((RUNS * bytes) / 1e6).toFixed(1)} MB in all); medians of ${REPEAT} opens, a new page each`,
  );
  console.log('| library | DOMContentLoaded | every row listed | selected run charted |');
  console.log('|---|---:|---:|---:|');
  const row = (label, samples) =>
    console.log(
      `| ${label} | ${ms(median(samples.map((s) => s.ready)))} | ${ms(median(samples.map((s) => s.listed)))} | ` +
        `${ms(median(samples.map((s) => s.drawn)))} |`,
    );
  row('empty', empty);
  row(`${RUNS} runs`, full);
  console.log(`load average ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after`);
} finally {
  await sim.stop();
  await browser.close();
  await site.close();
}
