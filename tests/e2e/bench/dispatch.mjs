// Dispatch benchmark: how closely strobe's open loop (load=rate) sends requests on their schedule,
// and up to what rate its dispatch lag stays under 2 ms at p95.
//
// How: for each rung of a ladder of rates, start a fresh strobe-sim on eight ports (so the pool
// keeps well under six connections per origin), answers as short as the canary allows and no
// decode wait, so the server is never the bottleneck; open the built app in headless Chromium
// over a bare DevTools pipe (../bare-browser.mjs), run `requests` at the rung's constant rate with
// a cap of 64 in flight, and join every row to the simulator's truth log by its canary marker.
// Per rung it reports, nearest-rank p50 / p95 / max:
//   dispatch lag   sent − due, as the page recorded it (row.dispatch_lag_ms)
//   server receipt the simulator's receipt − due (both Unix clocks of this machine): the lag plus
//                  the way from fetch() to the server
// with the rate achieved (sends over their span), late sends (> 5 ms) and sends the cap held back.
// It is a measurement, not a test: it never judges the numbers, but exits non-zero when a run
// does not complete. Output: a Markdown table on stdout, every number in
// test-results/bench-dispatch.json.
//
// Usage (needs dist/ and target/release/strobe-sim, see scripts/bench-dispatch.sh):
//   node tests/e2e/bench/dispatch.mjs [--quick] [--repeat N] [--measurement worker|main] [--out FILE]
// --quick runs 10, 100 and 1000 req/s only.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBareBrowser } from '../bare-browser.mjs';
import { parseRepeat, parseMeasurement, environment, watchHost, stealText, buildIdentity } from './common.mjs';
import { percentile } from './stats.mjs';
import { stampMs } from '../truth.mjs';
import { startSim, SIM_BINARY } from '../sim.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = process.env.STROBE_DIST ?? 'dist';
const LAG_BAR_MS = 2;
const LADDER = [10, 30, 100, 200, 400, 700, 1000];
const QUICK_LADDER = [10, 100, 1000];
/** Each rung schedules about this long, within the request bounds below. */
const SCHEDULE_S = 3;
const MIN_REQUESTS = 30;
const MAX_REQUESTS = 3000;
const PORTS = 8;
const CAP = 64;
const MAX_REPEAT = 5;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '1' },
      out: { type: 'string' },
      measurement: { type: 'string', default: 'worker' },
    },
  });
  return {
    ladder: values.quick ? QUICK_LADDER : LADDER,
    repeat: parseRepeat(values.repeat, MAX_REPEAT),
    out: values.out ? resolve(values.out) : resolve(REPO_ROOT, 'test-results/bench-dispatch.json'),
    quick: values.quick,
    measurement: parseMeasurement(values.measurement),
  };
}

function requestsAt(rate) {
  return Math.min(MAX_REQUESTS, Math.max(MIN_REQUESTS, Math.round(rate * SCHEDULE_S)));
}

/** One run at `rate` against a fresh simulator: lags, receipts and the artifact's load block. */
async function runRung(browser, siteUrl, rate, measurement) {
  const requests = requestsAt(rate);
  const sim = await startSim(
    ['--decode-interval-ms', '0', '--prefill-tok-s', '10000000', '--reasoning-tokens', '0', '--seed', '9'],
    { ports: PORTS },
  );
  try {
    const host = watchHost();
    const settings = {
      base_url: sim.baseUrls[0],
      pool: sim.baseUrls.slice(1).join(' '),
      requests: String(requests),
      concurrency: String(CAP),
      load: 'rate',
      rate: String(rate),
      arrivals: 'constant',
      context_tokens: '128',
      max_tokens: '16',
      request_canaries: 'true',
      measurement,
    };
    const { artifact, pageErrors } = await browser.run(siteUrl, settings, SCHEDULE_S * 1000 * 4 + 60_000);
    const during = host();
    if (artifact.completed !== requests) {
      const first = artifact.failures?.[0]?.error_message ?? 'no failure recorded';
      throw new Error(`${artifact.completed} of ${requests} requests completed; the first failure: ${first}`);
    }
    const truth = await sim.truth();
    const byMarker = new Map(truth.records.map((record) => [record.marker, record]));
    const runStartMs = artifact.started_at_unix_ns / 1e6;
    const rows = artifact.request_timings.map((row) => {
      const record = byMarker.get(row.request_canary?.marker);
      if (!record) throw new Error(`row ${row.request_index} has no truth record`);
      return {
        request_index: row.request_index,
        lag_ms: row.dispatch_lag_ms,
        receipt_ms: stampMs(record.times.received) - (runStartMs + row.scheduled_ms),
      };
    });
    return { requests, rows, load: artifact.load, page_errors: pageErrors, ...during };
  } finally {
    await sim.stop();
  }
}

function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50_ms: percentile(sorted, 50), p95_ms: percentile(sorted, 95), max_ms: sorted.at(-1) };
}

function summarizeRung(rate, runs) {
  const rows = runs.flatMap((run) => run.rows);
  const sum = (key) => runs.reduce((total, run) => total + (run.load[key] ?? 0), 0);
  return {
    rate,
    requests_per_run: runs[0].requests,
    runs: runs.length,
    achieved_rate: runs.reduce((total, run) => total + run.load.achieved_rate, 0) / runs.length,
    late_sends: sum('late_sends'),
    capped_sends: sum('capped_sends'),
    max_in_flight: Math.max(...runs.map((run) => run.load.max_in_flight)),
    dispatch_lag: spread(rows.map((row) => row.lag_ms)),
    // Which requests were latest: the first ones go out while the page is still starting.
    latest_sends: [...rows].sort((a, b) => b.lag_ms - a.lag_ms).slice(0, 5),
    server_receipt: spread(rows.map((row) => row.receipt_ms)),
  };
}

const ms = (value) => value.toFixed(2);

function printReport(summaries, env) {
  console.log('| offered (req/s) | requests | achieved (req/s) | dispatch lag p50 / p95 / max (ms) '
    + '| server receipt − due p50 / p95 / max (ms) | late (> 5 ms) | capped | most in flight |');
  console.log('|---:|---:|---:|---|---|---:|---:|---:|');
  for (const s of summaries) {
    const lag = s.dispatch_lag;
    const receipt = s.server_receipt;
    const requests = s.runs > 1 ? `${s.runs} × ${s.requests_per_run}` : s.requests_per_run;
    console.log(`| ${s.rate} | ${requests} | ${s.achieved_rate.toFixed(1)} | ${ms(lag.p50_ms)} / ${ms(lag.p95_ms)} / `
      + `${ms(lag.max_ms)} | ${ms(receipt.p50_ms)} / ${ms(receipt.p95_ms)} / ${ms(receipt.max_ms)} | ${s.late_sends} `
      + `| ${s.capped_sends} | ${s.max_in_flight} |`);
  }
  const passing = summaries.filter((s) => s.dispatch_lag.p95_ms < LAG_BAR_MS);
  const best = passing.length ? Math.max(...passing.map((s) => s.rate)) : null;
  console.log('');
  console.log(best === null
    ? `Highest rate with dispatch lag p95 < ${LAG_BAR_MS} ms: none`
    : `Highest rate with dispatch lag p95 < ${LAG_BAR_MS} ms: ${best} req/s`);
  const loads = (list) => list.map((load) => load.toFixed(2)).join(' ');
  console.log(`${env.chromium}; ${env.cpu_count} CPUs (${env.cpu_model}); `
    + `load average ${loads(env.load_average_at_start)} at start, ${loads(env.load_average_at_end)} at end; ${env.date}`);
  return best;
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.chdir(REPO_ROOT);
  const env = environment();
  const browser = await launchBareBrowser();
  const site = await serveStatic({ root: DIST });
  const runsByRate = new Map(options.ladder.map((rate) => [rate, []]));
  const failures = [];
  try {
    process.stderr.write('warm-up run (not reported)… ');
    await runRung(browser, site.url, 20, options.measurement);
    process.stderr.write('done\n');
    for (let round = 1; round <= options.repeat; round += 1) {
      for (const rate of options.ladder) {
        process.stderr.write(`round ${round}/${options.repeat}, ${rate} req/s, ${requestsAt(rate)} requests… `);
        try {
          const run = await runRung(browser, site.url, rate, options.measurement);
          runsByRate.get(rate).push(run);
          const lag = spread(run.rows.map((row) => row.lag_ms));
          process.stderr.write(`lag p95 ${ms(lag.p95_ms)} ms, load average ${run.load_1m[1].toFixed(2)}`
            + `${stealText(run.host_cpu)}\n`);
        } catch (err) {
          failures.push({ round, rate, error: String(err?.message ?? err) });
          process.stderr.write(`FAILED: ${err?.message ?? err}\n`);
        }
      }
    }
  } finally {
    await browser.close();
    await site.close();
  }
  const summaries = options.ladder
    .filter((rate) => runsByRate.get(rate).length > 0)
    .map((rate) => summarizeRung(rate, runsByRate.get(rate)));
  env.load_average_at_end = loadavg();
  const best = printReport(summaries, env);
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify({
    benchmark: 'strobe open-loop dispatch',
    lag_bar_ms: LAG_BAR_MS,
    definitions: {
      dispatch_lag: 'sent − due as the page recorded it (row.dispatch_lag_ms)',
      server_receipt: "the simulator's receipt − due, Unix clocks of one machine",
      percentiles: 'nearest rank',
    },
    options: { quick: options.quick, repeat: options.repeat, ladder: options.ladder, measurement: options.measurement },
    setup: { ports: PORTS, cap: CAP, schedule_s: SCHEDULE_S, arrivals: 'constant', max_tokens: 16 },
    build: buildIdentity(DIST, SIM_BINARY),
    environment: env,
    highest_rate_under_bar: best,
    rungs: summaries,
    failures,
  }, null, 2)}\n`);
  console.log(`\nEvery number: ${options.out}`);
  if (failures.length) process.exit(1);
}

await main();
