#!/usr/bin/env node
// How the page reads a large workload file: the built app (dist/, or STROBE_DIST) in headless
// Chromium, a ShareGPT-shaped file of N MB (default 500, written once by gen-sharegpt.mjs)
// chosen in the form's file input, timed until the page says what it found. It prints MB/s,
// the renderer's peak resident memory (the page and its workers live in that process; sampled
// from /proc every 50 ms, minus its memory before the file was chosen), and the longest stall
// of the page's thread (the largest gap between animation frames, and the longest task
// the browser reported). Never asserts, only measures.
//
//   node scripts/bench-workload-page.mjs [MB] [first|all]   (scripts/bench-workload.sh --page [MB] [TURNS])
//
// The second argument is the page's workload_turns (default first).
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { CHROMIUM, CHROMIUM_FLAGS } from '../tests/e2e/browser.mjs';
import { serveStatic } from '../tests/e2e/static-server.mjs';

const megabytes = Number(process.argv[2] ?? '500');
const turns = process.argv[3] ?? 'first';
const file = `target/bench-workload/sharegpt-${megabytes}mb.json`;
if (!existsSync(file)) {
  execFileSync('node', ['scripts/gen-sharegpt.mjs', '--mb', String(megabytes), '--out', file], {
    stdio: 'inherit',
  });
}
const size = statSync(file).size;

/** Resident memory (bytes) of the process `pid`, 0 when it is gone. */
function residentBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = status.match(/VmRSS:\s+(\d+) kB/);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const site = await serveStatic({ root: process.env.STROBE_DIST ?? 'dist' });
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
try {
  const page = await browser.newPage();
  // The page's thread: every gap between animation frames, and the browser's long tasks.
  await page.addInitScript(() => {
    window.strobeBench = { maxGap: 0, maxTask: 0, last: 0, on: false };
    const frame = (now) => {
      const bench = window.strobeBench;
      if (bench.on && bench.last) bench.maxGap = Math.max(bench.maxGap, now - bench.last);
      bench.last = now;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        if (window.strobeBench.on) {
          window.strobeBench.maxTask = Math.max(window.strobeBench.maxTask, entry.duration);
        }
      }
    }).observe({ type: 'longtask', buffered: false });
  });
  await page.goto(`${site.url}?workload_turns=${turns}`);
  await page.getByTestId('app-ready').waitFor();
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  const renderers = processInfo.filter((info) => info.type === 'renderer').map((info) => info.id);
  const resident = () => renderers.reduce((sum, pid) => sum + residentBytes(pid), 0);
  const before = resident();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, resident());
  }, 50);
  await page.evaluate(() => {
    window.strobeBench.on = true;
    window.strobeBench.last = 0;
  });
  const started = performance.now();
  await page.getByTestId('workload-file').setInputFiles(file);
  const summary = page.locator('[data-testid="workload-summary"][data-state="ready"], [data-testid="workload-summary"][data-state="refused"]');
  await summary.waitFor({ timeout: 30 * 60_000 });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const stalls = await page.evaluate(() => window.strobeBench);
  const state = await summary.getAttribute('data-state');
  console.log(`${file}: ${(size / 1e6).toFixed(1)} MB, workload_turns=${turns}, ${state}: ${await summary.textContent()}`);
  console.log(`  read in the page        ${seconds.toFixed(1)} s, ${(size / 1e6 / seconds).toFixed(1)} MB/s`);
  console.log(`  renderer peak resident  ${(peak / 1e6).toFixed(0)} MB (${((peak - before) / 1e6).toFixed(0)} MB above the ${(before / 1e6).toFixed(0)} MB before)`);
  console.log(`  page's longest stall    ${stalls.maxGap.toFixed(0)} ms between frames, longest task ${stalls.maxTask.toFixed(0)} ms`);
} finally {
  await browser.close();
  await site.close();
}
