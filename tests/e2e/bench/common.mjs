// What the shipped benchmarks share: the `--repeat` option, nearest-rank summaries, the
// machine facts every report carries, how busy the host was during each run. Runs go through
// the bare DevTools pipe of ../bare-browser.mjs (`browser.run`), so no DevTools
// instrumentation runs inside what is measured; rows are joined to strobe-sim's truth log by
// ../truth.mjs.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { CHROMIUM } from '../browser.mjs';
import { percentile } from './stats.mjs';

/** The `--repeat` option: a whole number from 1 to `max`, or an error that says so. */
export function parseRepeat(text, max) {
  const repeat = Number(text);
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > max) {
    throw new Error(`--repeat must be a whole number from 1 to ${max}, got ${text}`);
  }
  return repeat;
}

/** The `--measurement` option: `worker` or `main`, or an error that says so. */
export function parseMeasurement(text) {
  if (!['worker', 'main'].includes(text)) {
    throw new Error(`--measurement must be worker or main, got ${text}`);
  }
  return text;
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
    commit: measuredCommit(),
  };
}

/**
 * What was measured, by content: the SHA-256 (first 16 hex digits) of the app's wasm in `dist`
 * and of the simulator binary, null where either is missing. Two reports with the same
 * identity measured the same code whatever commit (a README change) they were taken at.
 */
export function buildIdentity(dist, simBinary) {
  const digest = (path) => {
    try {
      return createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
    } catch {
      return null;
    }
  };
  let wasm = null;
  try {
    const name = readdirSync(dist).find((file) => file.endsWith('_bg.wasm'));
    if (name) wasm = digest(join(dist, name));
  } catch {
    // No dist directory: nothing to name.
  }
  return { app_wasm_sha256: wasm, sim_sha256: digest(simBinary) };
}

/**
 * HEAD's short hash, with `+changes` when tracked files differ from it (the build measured may
 * then be neither HEAD nor another run's). `--report` pools by `buildIdentity` and falls back
 * to this only for reports that have no build hashes.
 */
function measuredCommit() {
  const head = commandOutput('git', ['rev-parse', '--short', 'HEAD']);
  const changes = commandOutput('git', ['status', '--porcelain', '--untracked-files=no']);
  return head && changes ? `${head}+changes` : head;
}

/**
 * The host's CPU time counters since boot (Linux `/proc/stat`, all CPUs: user, nice, system,
 * idle, iowait, irq, softirq, steal), or null where there are none.
 */
function hostCpuCounters() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const counters = fields.slice(1, 9).map(Number);
    return counters.length === 8 && counters.every(Number.isFinite) ? counters : null;
  } catch {
    return null;
  }
}

/**
 * How the host's CPU time went between two {@link hostCpuCounters} readings, in % of it:
 * `steal_pct`, time the hypervisor gave to other guests while this one wanted to run (on a
 * shared VM the noisy periods, when every client's errors grow, are the ones with steal), and
 * `busy_pct`, time this machine spent running anything. Null without both readings.
 */
function hostCpuShare(before, after) {
  if (!before || !after) return null;
  // A counter can step back between readings (iowait does, proc(5)): count no negative time.
  const spent = after.map((value, i) => Math.max(0, value - before[i]));
  const total = spent.reduce((sum, value) => sum + value, 0);
  if (total <= 0) return null;
  const [, , , idle, iowait, , , steal] = spent;
  const percent = (value) => Math.round((1000 * value) / total) / 10;
  return { steal_pct: percent(steal), busy_pct: percent(total - idle - iowait - steal) };
}

/**
 * Starts watching the host for one run; the returned function, called when the run ends, gives
 * `{ load_1m: [before, after], host_cpu }` (see {@link hostCpuShare}) for the run's record.
 */
export function watchHost() {
  const loadBefore = loadavg()[0];
  const cpuBefore = hostCpuCounters();
  return () => ({ load_1m: [loadBefore, loadavg()[0]], host_cpu: hostCpuShare(cpuBefore, hostCpuCounters()) });
}

/** A 100 ms stretch in which the host spent less than this share of its CPU time busy is quiet. */
const QUIET_BUSY_PCT = 15;
const QUIET_WINDOW_MS = 100;
/** The longest {@link settleHost} waits. */
const MOST_SETTLE_MS = 3000;

/**
 * Waits until the host is quiet (a {@link QUIET_WINDOW_MS} stretch under {@link QUIET_BUSY_PCT} %
 * busy) or {@link MOST_SETTLE_MS} have passed, and resolves to the milliseconds it waited. Run
 * before a measured run, so what the last run left behind (a closed page's renderer going away,
 * a simulator starting) is not inside this one. Without /proc/stat it resolves at once.
 */
export async function settleHost() {
  const started = performance.now();
  let before = hostCpuCounters();
  while (before && performance.now() - started < MOST_SETTLE_MS) {
    await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
    const after = hostCpuCounters();
    const share = hostCpuShare(before, after);
    if (!share || share.busy_pct < QUIET_BUSY_PCT) break;
    before = after;
  }
  return Math.round(performance.now() - started);
}

/**
 * " (host over the run: steal 3.1 %, busy 64.2 %)" from a {@link watchHost} reading, for a timing
 * test's output and failure message: a bar missed while the hypervisor took CPU time from this
 * machine reads differently from one missed on a quiet host. `more` phrases follow inside the
 * brackets. Nothing without a reading or a phrase.
 */
export function hostDuring({ host_cpu: host }, ...more) {
  const cpu = host ? [`steal ${host.steal_pct.toFixed(1)} %`, `busy ${host.busy_pct.toFixed(1)} %`] : [];
  const parts = [...cpu, ...more];
  return parts.length > 0 ? ` (host over the run: ${parts.join(', ')})` : '';
}

/** ", steal 1.2 %" for a progress line, or nothing without a reading. */
export function stealText(host) {
  return host ? `, steal ${host.steal_pct.toFixed(1)} %` : '';
}

/**
 * In the page: runs a self-contained client function (`source`, its text) in a dedicated
 * worker the page starts, on `args`, and resolves to its rows. The floor in a worker
 * (fidelity.mjs) and the upstream benchmark's worker variant both use it, so a client's reads
 * or sends go through a worker thread as strobe's do. Serialized into the page: it uses nothing
 * from outside its body.
 */
export function runInWorker({ source, args }) {
  return new Promise((resolve, reject) => {
    const script = `const client = ${source};\n`
      + 'onmessage = async (event) => {\n'
      + '  try { postMessage({ rows: await client(event.data) }); }\n'
      + '  catch (error) { postMessage({ error: String(error) }); }\n'
      + '};\n';
    const worker = new Worker(URL.createObjectURL(new Blob([script], { type: 'text/javascript' })));
    worker.onmessage = (event) => {
      worker.terminate();
      if (event.data.error) reject(new Error(event.data.error));
      else resolve(event.data.rows);
    };
    worker.onerror = (event) => reject(new Error(`the client's worker failed: ${event.message}`));
    worker.postMessage(args);
  });
}
