// What the shipped benchmarks share: driving one run of the built app and taking its artifact,
// joining strobe's rows to strobe-sim's truth log, nearest-rank summaries, and the machine facts
// every report carries.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { CHROMIUM } from '../browser.mjs';
import { openApp, waitForRunEnd } from '../page.mjs';

/** Opens the app with the run in its link, presses Run, waits for the end, returns the artifact. */
export async function runOnPage(browser, siteUrl, settings, timeoutMs) {
  const { page, errors } = await openApp(browser, siteUrl, settings);
  try {
    await page.getByTestId('run').click();
    await waitForRunEnd(page, timeoutMs);
    const status = page.getByTestId('status');
    const state = await status.getAttribute('data-state');
    if (state !== 'finished') throw new Error(`the page ended in state ${state}: ${await status.textContent()}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').click()]);
    const artifact = JSON.parse(readFileSync(await download.path(), 'utf8'));
    return { artifact, pageErrors: errors };
  } finally {
    await page.close();
  }
}

/** The `--repeat` option: a whole number from 1 to `max`, or an error that says so. */
export function parseRepeat(text, max) {
  const repeat = Number(text);
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > max) {
    throw new Error(`--repeat must be a whole number from 1 to ${max}, got ${text}`);
  }
  return repeat;
}

/** A truth-log stamp as Unix epoch ms (null when the moment did not happen). */
export function stampMs(stamp) {
  return stamp ? stamp.unix_ns / 1e6 : null;
}

/**
 * Client − server, in ms, of one request's three moments: `startUnixMs` is when the client
 * called fetch() (Unix ms), the durations are the client's TTFO, TTFT and E2E, and the server's
 * moments come from its truth record:
 *   ttfo → first_reasoning_byte_sent (else first_content_byte_sent)
 *   ttft → first_content_byte_sent
 *   e2e  → last_byte_sent
 */
export function momentErrors(startUnixMs, { ttfo, ttft, e2e }, record) {
  const { times } = record;
  return {
    ttfo: startUnixMs + ttfo - stampMs(times.first_reasoning_byte_sent ?? times.first_content_byte_sent),
    ttft: startUnixMs + ttft - stampMs(times.first_content_byte_sent),
    e2e: startUnixMs + e2e - stampMs(times.last_byte_sent),
  };
}

/** The errors of every row of a strobe artifact, joined to the truth log by canary marker. */
export function artifactErrors(artifact, records) {
  const byMarker = new Map(records.map((record) => [record.marker, record]));
  const runStartMs = artifact.started_at_unix_ns / 1e6;
  return artifact.request_timings.map((row) => {
    const record = byMarker.get(row.request_canary?.marker);
    if (!record) throw new Error(`row ${row.request_index} has no truth record (marker ${row.request_canary?.marker})`);
    const durations = { ttfo: row.time_to_first_output_ms, ttft: row.ttft_ms, e2e: row.e2e_ms };
    return { request_index: row.request_index, ...momentErrors(runStartMs + row.started_at_ms, durations, record) };
  });
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** p50, p95, max of |error| and the signed median, for one metric's errors. */
export function summarize(errorsMs) {
  const absolute = errorsMs.map(Math.abs).sort((a, b) => a - b);
  const signed = [...errorsMs].sort((a, b) => a - b);
  return {
    n: errorsMs.length,
    p50_abs_ms: percentile(absolute, 50),
    p95_abs_ms: percentile(absolute, 95),
    max_abs_ms: absolute.at(-1),
    median_signed_ms: percentile(signed, 50),
  };
}

/** A command's first line of output, or null when it cannot run. */
function commandOutput(command, args) {
  try {
    // Debian's chromium wrapper prints a harmless shell warning on stderr; only stdout matters.
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** The machine, browser and commit a report was measured on. */
export function environment() {
  return {
    date: new Date().toISOString(),
    chromium: commandOutput(CHROMIUM, ['--version']),
    node: process.version,
    cpu_count: cpus().length,
    cpu_model: cpus()[0]?.model ?? null,
    load_average_at_start: loadavg(),
    commit: commandOutput('git', ['rev-parse', '--short', 'HEAD']),
  };
}
