// Size benchmark: what a first visit to the built page downloads and how soon it is usable.
//
// It opens the release build (dist/, or STROBE_DIST) in headless Chromium and records every
// request the first visit makes (a browser with a new profile each time: nothing cached),
// then weighs each requested file as a host would send it: its bytes on disk, gzipped (level
// 9, as `gzip -9`) and brotli-compressed (quality 11), both by node's zlib. It also times the
// first usable render: navigation start → the app's `app-ready` marker in the DOM, read by a
// MutationObserver in the page (optionally on a throttled network, `--throttle`, by Chromium's
// network emulation), the median of `--repeat N` visits. Then it weighs the parts of the split
// wasm the visit did not fetch (each loads the first time it is used).
//
// Usage: node tests/e2e/bench/size.mjs [--repeat N] [--throttle] [--json FILE]
// (scripts/bench-size.sh builds what is missing and adds the wasm's largest contributors)
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { launchBrowser } from '../browser.mjs';
import { serveStatic } from '../static-server.mjs';

const DIST = process.env.STROBE_DIST ?? 'dist';
const { values: flags } = parseArgs({
  options: {
    repeat: { type: 'string', default: '5' },
    throttle: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const REPEAT = Math.max(1, Math.min(20, Number(flags.repeat) || 5));
// An ordinary office or home connection: 20 Mbit/s down, 5 up, 40 ms round trip.
const THROTTLE = { offline: false, latency: 40, downloadThroughput: (20e6 / 8), uploadThroughput: (5e6 / 8) };

/** The median of numbers. */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** A file of the build as a host sends it. */
function weigh(path) {
  const bytes = readFileSync(path);
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }).length,
  };
}

const site = await serveStatic({ root: DIST });
const renders = [];
let files = null;
try {
  for (let visit = 0; visit < REPEAT; visit += 1) {
    // A browser of its own per visit: a new profile, so nothing is cached.
    const context = await launchBrowser();
    const page = await context.newPage();
    if (flags.throttle) {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', THROTTLE);
    }
    const requested = new Set();
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === new URL(site.url).origin) requested.add(decodeURIComponent(url.pathname));
    });
    await page.addInitScript(() => {
      const seen = () => {
        if (!window.strobeReadyAt && document.querySelector('[data-testid="app-ready"]')) {
          window.strobeReadyAt = performance.now();
        }
      };
      new MutationObserver(seen).observe(document, { childList: true, subtree: true });
    });
    await page.goto(site.url);
    await page.getByTestId('app-ready').waitFor();
    renders.push(await page.evaluate(() => window.strobeReadyAt));
    if (!files) {
      files = [...requested]
        .map((path) => (path.endsWith('/') ? `${path}index.html` : path))
        .filter((path) => {
          try {
            return statSync(join(DIST, path)).isFile();
          } catch {
            return false;
          }
        })
        .sort()
        .map((path) => ({ path, ...weigh(join(DIST, path)) }));
    }
    await context.close();
  }
} finally {
  await site.close();
}

const total = files.reduce(
  (sum, file) => ({ raw: sum.raw + file.raw, gzip: sum.gzip + file.gzip, brotli: sum.brotli + file.brotli }),
  { raw: 0, gzip: 0, brotli: 0 },
);
const kb = (bytes) => (bytes / 1024).toFixed(1).padStart(8);
console.log(`first visit to ${DIST}/ (${files.length} files):`);
console.log(`${'file'.padEnd(44)} ${'raw KiB'.padStart(8)} ${'gzip KiB'.padStart(8)} ${'br KiB'.padStart(8)}`);
for (const file of files) {
  console.log(`${file.path.padEnd(44)} ${kb(file.raw)} ${kb(file.gzip)} ${kb(file.brotli)}`);
}
console.log(`${'total'.padEnd(44)} ${kb(total.raw)} ${kb(total.gzip)} ${kb(total.brotli)}`);
// The parts of the split wasm a first visit does not fetch: each loads the first time it is used
// (the results side, a run's code, the workers', the live charts; scripts/split-wasm.mjs).
const fetched = new Set(files.map((file) => file.path));
const later = readdirSync(DIST)
  .filter((name) => name.endsWith('.wasm') && !fetched.has(`/${name}`))
  .sort()
  .map((name) => ({ path: `/${name}`, ...weigh(join(DIST, name)) }));
const laterTotal = later.reduce(
  (sum, file) => ({ raw: sum.raw + file.raw, gzip: sum.gzip + file.gzip, brotli: sum.brotli + file.brotli }),
  { raw: 0, gzip: 0, brotli: 0 },
);
if (later.length > 0) {
  console.log(`loaded on use, not on a first visit (${later.length} parts of the wasm):`);
  for (const file of later) {
    console.log(`${file.path.padEnd(44)} ${kb(file.raw)} ${kb(file.gzip)} ${kb(file.brotli)}`);
  }
  console.log(`${'total'.padEnd(44)} ${kb(laterTotal.raw)} ${kb(laterTotal.gzip)} ${kb(laterTotal.brotli)}`);
}
const network = flags.throttle ? 'throttled to 20/5 Mbit/s, 40 ms RTT' : 'loopback';
console.log(
  `first usable render (navigation → app-ready), ${network}: median ${median(renders).toFixed(0)} ms ` +
    `of ${REPEAT} (min ${Math.min(...renders).toFixed(0)}, max ${Math.max(...renders).toFixed(0)})`,
);
if (flags.json) {
  writeFileSync(flags.json, JSON.stringify({ files, total, later, later_total: laterTotal, render_ms: renders, network }, null, 2));
}
