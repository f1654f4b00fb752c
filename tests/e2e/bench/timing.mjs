// Timing-fidelity benchmark: how far strobe's clock readings in the browser land from the moments
// the server itself says it sent the bytes, and up to what event rate that error stays under 1 ms.
//
// How: after one unreported warm-up run, for each rung of a ladder of decode intervals, start a
// fresh strobe-sim (no load slowdown, a fast 10 ms prefill so decode sets the pace), open the built
// app in headless Chromium with the run in its link (driven over a bare DevTools pipe, so no
// DevTools instrumentation runs inside the measurement: ../bare-browser.mjs), press Run, download
// the artifact, and join
// every row to the simulator's truth log by its canary marker. For each row and metric the error
// is the client's absolute moment (run start + started_at_ms + the metric) minus the server's
// stamp of the same moment:
//   ttfo → first_reasoning_byte_sent (else first_content_byte_sent)
//   ttft → first_content_byte_sent
//   e2e  → last_byte_sent
// Both clocks are this machine's wall clock, so the difference is the client's measurement error
// plus the loopback delivery time, and on a busy machine the time either process sat descheduled
// (the JSON keeps the load average around every run). The event rate of a rung is measured, not
// assumed: SSE events the server wrote (from the truth log) over the run's wall time on its clock.
//
// Beside it, the duration error: the client's TTFT and E2E minus the server's own durations from
// receiving the request, the upstream part of it (fetch() → the server's receipt), and the same
// error of strobe's times from the wire (measured − client_queue_ms).
// Per rung and metric it reports p50, p95 and max of |client − server| (nearest-rank) and the
// signed median (bias), for all requests and for the steady state (without the requests sent as
// the run starts), then the highest measured event rate at which p95 (and p50) of every metric
// stays under 1 ms. It is a measurement, not a test: it never judges the numbers, but exits
// non-zero when a run does not complete. Output: Markdown tables on stdout and every number, with
// the environment, in test-results/bench-timing.json.
//
// Usage (from anywhere; needs dist/ and target/release/strobe-sim, see scripts/bench-timing.sh):
//   node tests/e2e/bench/timing.mjs [--quick] [--repeat N] [--prefill-tok-s N] [--measurement worker|main] [--out FILE]
// --quick runs two rungs (~15 s); --repeat runs the ladder N (≤ 5) times and pools each rung's rows.
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBareBrowser } from '../bare-browser.mjs';
import { parseRepeat, parseMeasurement, summarize, environment, watchHost, stealText } from './common.mjs';
import { stampMs, artifactErrors } from '../truth.mjs';
import { startSim } from '../sim.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = process.env.STROBE_DIST ?? 'dist';
const FIDELITY_BAR_MS = 1;
const METRICS = ['ttfo', 'ttft', 'e2e'];

/** Decode intervals (ms between tokens per stream); at concurrency 4 about 250 to 8,000 events/s. */
const LADDER_MS = [16, 8, 4, 2, 1, 0.5];
const QUICK_LADDER_MS = [8, 1];
const CONCURRENCY = 4;
const CONTEXT_TOKENS = 1024;
const MAX_TOKENS = 128;
/** Fixed-length answers (marker + this many words + 8 reasoning tokens) so every stream is ~109 events. */
const RESPONSE_WORDS = 100;
const REASONING_TOKENS = 8;
const TOKENS_PER_REQUEST = REASONING_TOKENS + 1 + RESPONSE_WORDS;
/** Slow rungs keep 24 requests; faster ones send more so each run streams for a few seconds. */
const BASE_REQUESTS = 24;
const MAX_REQUESTS = 192;
const RUN_SLACK_MS = 30_000;
/** One ladder takes 35–45 s on 2 cores, so five stay within a few minutes. */
const MAX_REPEAT = 5;
/**
 * Prefill runs one request at a time. At the simulator's default 20,000 tok/s a 1,024-token prompt
 * takes 50 ms, which would cap the fast rungs near 2,300 events/s; 100,000 tok/s (10 ms, a fast GPU)
 * keeps decode in charge while leaving the realistic gap between sending a request and its first
 * token. With no gap at all the first token lands while the page is still busy with the request
 * before, and TTFO measures the page's own work rather than its clock.
 */
const DEFAULT_PREFILL_TOK_S = 100_000;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '1' },
      out: { type: 'string' },
      'prefill-tok-s': { type: 'string', default: String(DEFAULT_PREFILL_TOK_S) },
      measurement: { type: 'string', default: 'worker' },
    },
  });
  const repeat = parseRepeat(values.repeat, MAX_REPEAT);
  // A given --out is relative to where the command was typed; the default lives in the repository.
  const out = values.out ? resolve(values.out) : resolve(REPO_ROOT, 'test-results/bench-timing.json');
  const prefillTokS = Number(values['prefill-tok-s']);
  if (!(prefillTokS > 0)) throw new Error(`--prefill-tok-s must be a positive number, got ${values['prefill-tok-s']}`);
  return {
    ladder: values.quick ? QUICK_LADDER_MS : LADDER_MS, repeat, out, quick: values.quick, prefillTokS,
    measurement: parseMeasurement(values.measurement),
  };
}

/** The simulator flags and page settings of one rung. */
function planRung(decodeIntervalMs, prefillTokS, requests = requestsFor(decodeIntervalMs)) {
  const simArgs = [
    '--decode-interval-ms', String(decodeIntervalMs),
    '--decode-slowdown-per-seq', '0',
    '--reasoning-tokens', String(REASONING_TOKENS),
    '--prefill-tok-s', String(prefillTokS),
    '--seed', '7',
  ];
  const settings = {
    requests: String(requests),
    concurrency: String(CONCURRENCY),
    context_tokens: String(CONTEXT_TOKENS),
    max_tokens: String(MAX_TOKENS),
    response_words: String(RESPONSE_WORDS),
    request_canaries: 'true',
    thinking_mode: 'enabled',
  };
  const expectedMs = Math.ceil(requests / CONCURRENCY) * TOKENS_PER_REQUEST * decodeIntervalMs;
  return { decodeIntervalMs, requests, simArgs, settings, timeoutMs: expectedMs + RUN_SLACK_MS };
}

function requestsFor(decodeIntervalMs) {
  const scaled = Math.round((BASE_REQUESTS * 4) / decodeIntervalMs);
  return Math.min(MAX_REQUESTS, Math.max(BASE_REQUESTS, scaled));
}

/** One run of one rung against a fresh simulator: the artifact, the truth records, the machine load. */
async function runRung(browser, siteUrl, rung, measurement) {
  const sim = await startSim(rung.simArgs);
  try {
    const runEnded = watchHost();
    const settings = { ...rung.settings, base_url: sim.baseUrls[0], measurement };
    const { artifact, pageErrors } = await browser.run(siteUrl, settings, rung.timeoutMs);
    const host = runEnded();
    const truth = await sim.truth();
    if (artifact.completed !== rung.requests) {
      const first = artifact.failures?.[0]?.error_message ?? 'no failure recorded';
      throw new Error(`${artifact.completed} of ${rung.requests} requests completed; the first failure: ${first}`);
    }
    return { artifact, records: truth.records, pageErrors, host };
  } finally {
    await sim.stop();
  }
}

/** SSE events the server wrote (role, reasoning, content, finish, usage, [DONE]) per second of run. */
function eventRate(records) {
  const events = records.reduce((sum, record) => sum + sseEventsSent(record), 0);
  const firstMs = Math.min(...records.map((record) => stampMs(record.times.received)));
  const lastMs = Math.max(...records.map((record) => stampMs(record.times.last_byte_sent)));
  const wallMs = lastMs - firstMs;
  return { events, wall_ms: wallMs, events_per_s: events / (wallMs / 1000) };
}

function sseEventsSent(record) {
  const roleAndFinish = 2;
  return roleAndFinish + record.reasoning_tokens_sent + record.content_tokens_sent
    + (record.usage ? 1 : 0) + (record.done_sent ? 1 : 0);
}

/**
 * The rows each verdict looks at. The first `CONCURRENCY` requests go out together as the run
 * starts, while the page is still setting up its live view; steady state leaves them out so that
 * start-up work and sustained event load can be told apart.
 */
const VIEWS = {
  all_requests: () => true,
  steady_state: (row) => row.request_index >= CONCURRENCY,
};

function summarizeRows(rows) {
  return Object.fromEntries(METRICS.map((metric) => [metric, summarize(rows.map((row) => row[metric]))]));
}

/**
 * The duration error's parts (truth.mjs, durationErrors): whole TTFT and E2E error against the
 * server's own durations, upstream, and the whole error of the times from the wire.
 */
const DURATION_PARTS = ['ttft_whole', 'e2e_whole', 'upstream', 'ttft_wire', 'e2e_wire', 'client_queue'];

function summarizeDurations(rows) {
  return Object.fromEntries(DURATION_PARTS.map((part) => {
    const values = rows.map((row) => row[part]).filter(Number.isFinite);
    return [part, values.length > 0 ? summarize(values) : null];
  }));
}

/** Pools the runs of one rung: rows from every repeat, events and wall time summed. */
function summarizeRung(rung, runs) {
  const rows = runs.flatMap((run) => run.rows);
  const events = runs.reduce((sum, run) => sum + run.rate.events, 0);
  const wallMs = runs.reduce((sum, run) => sum + run.rate.wall_ms, 0);
  return {
    decode_interval_ms: rung.decodeIntervalMs,
    requests_per_run: rung.requests,
    runs: runs.length,
    events_per_s: events / (wallMs / 1000),
    views: Object.fromEntries(Object.entries(VIEWS).map(([view, keep]) => [view, summarizeRows(rows.filter(keep))])),
    durations: summarizeDurations(rows),
  };
}

function durationTable(summaries) {
  const lines = [
    '| decode interval (ms) | TTFT whole p50 / p95 | E2E whole p50 / p95 | upstream p50 / p95 '
      + '| TTFT from the wire p50 / p95 | E2E from the wire p50 / p95 | client_queue_ms p50 / p95 |',
    '|---:|---|---|---|---|---|---|',
  ];
  const cell = (summary) => (summary ? `${ms(summary.p50_abs_ms)} / ${ms(summary.p95_abs_ms)}` : '–');
  for (const summary of summaries) {
    lines.push(`| ${summary.decode_interval_ms} | ${DURATION_PARTS.map((part) => cell(summary.durations[part])).join(' | ')} |`);
  }
  return lines.join('\n');
}

function allUnder(summary, view, statistic) {
  return METRICS.every((metric) => summary.views[view][metric][statistic] < FIDELITY_BAR_MS);
}

/** The highest measured rate among rungs whose `statistic` is under the bar for every metric. */
function highestRateUnderBar(summaries, view, statistic) {
  const passing = summaries.filter((summary) => allUnder(summary, view, statistic));
  if (passing.length === 0) return null;
  const best = passing.reduce((a, b) => (b.events_per_s > a.events_per_s ? b : a));
  const slowerOverBar = summaries
    .filter((summary) => summary.events_per_s < best.events_per_s && !allUnder(summary, view, statistic))
    .map((summary) => summary.decode_interval_ms);
  return {
    events_per_s: best.events_per_s,
    decode_interval_ms: best.decode_interval_ms,
    slower_rungs_over_bar: slowerOverBar,
  };
}

function verdicts(summaries) {
  return Object.fromEntries(Object.keys(VIEWS).map((view) => [view, {
    p95: highestRateUnderBar(summaries, view, 'p95_abs_ms'),
    p50: highestRateUnderBar(summaries, view, 'p50_abs_ms'),
  }]));
}

const ms = (value) => value.toFixed(3);

function markdownTable(summaries, view) {
  const lines = [
    '| decode interval (ms) | requests | SSE events/s | TTFO \\|err\\| p50 / p95 / max (ms) '
      + '| TTFT \\|err\\| p50 / p95 / max (ms) | E2E \\|err\\| p50 / p95 / max (ms) | bias TTFO / TTFT / E2E (ms) |',
    '|---:|---:|---:|---|---|---|---|',
  ];
  for (const summary of summaries) {
    const metrics = summary.views[view];
    const cells = METRICS.map((metric) => {
      const m = metrics[metric];
      return `${ms(m.p50_abs_ms)} / ${ms(m.p95_abs_ms)} / ${ms(m.max_abs_ms)}`;
    });
    const bias = METRICS.map((metric) => ms(metrics[metric].median_signed_ms)).join(' / ');
    const requests = summary.runs > 1 ? `${summary.runs} × ${summary.requests_per_run}` : summary.requests_per_run;
    const rate = Math.round(summary.events_per_s);
    lines.push(`| ${summary.decode_interval_ms} | ${requests} | ${rate} | ${cells.join(' | ')} | ${bias} |`);
  }
  return lines.join('\n');
}

function verdictLine(statistic, verdict) {
  const label = `Highest event rate with ${statistic} |err| < ${FIDELITY_BAR_MS} ms for TTFO, TTFT and E2E`;
  if (!verdict) return `${label}: none (no rung stayed under ${FIDELITY_BAR_MS} ms)`;
  const caveat = verdict.slower_rungs_over_bar.length
    ? ` (but the slower rungs at ${verdict.slower_rungs_over_bar.join(', ')} ms did not)`
    : '';
  const rate = Math.round(verdict.events_per_s);
  return `${label}: ${rate} events/s (decode interval ${verdict.decode_interval_ms} ms)${caveat}`;
}

const VIEW_TITLES = {
  all_requests: 'All requests',
  steady_state: `Steady state (without the first ${CONCURRENCY} requests of each run, sent as the page starts the run)`,
};

function printReport(summaries, verdictsByView, env) {
  for (const view of Object.keys(VIEWS)) {
    console.log(`### ${VIEW_TITLES[view]}\n`);
    console.log(markdownTable(summaries, view));
    console.log('');
    console.log(verdictLine('p95', verdictsByView[view].p95));
    console.log(verdictLine('p50', verdictsByView[view].p50));
    console.log('');
  }
  console.log('### Duration error against the server\'s own durations (all requests, ms)\n');
  console.log(durationTable(summaries));
  console.log('');
  const loads = (list) => list.map((load) => load.toFixed(2)).join(' ');
  console.log(`${env.chromium}; ${env.cpu_count} CPUs (${env.cpu_model}); `
    + `load average ${loads(env.load_average_at_start)} at start, ${loads(env.load_average_at_end)} at end; ${env.date}`);
}

/** Runs the ladder `repeat` times; a failed run is recorded and the rest still run. */
async function runLadder(browser, siteUrl, { ladder, repeat, prefillTokS, measurement }) {
  const runsByRung = new Map(ladder.map((interval) => [interval, []]));
  const failures = [];
  for (let round = 1; round <= repeat; round += 1) {
    for (const interval of ladder) {
      const rung = planRung(interval, prefillTokS);
      process.stderr.write(`round ${round}/${repeat}, decode interval ${interval} ms, ${rung.requests} requests… `);
      try {
        const { artifact, records, pageErrors, host } = await runRung(browser, siteUrl, rung, measurement);
        const rows = artifactErrors(artifact, records);
        const rate = eventRate(records);
        runsByRung.get(interval).push({
          round, rate, ...host, page_errors: pageErrors, rows,
          client_sse: artifact.client?.sse ?? null, wall_clock_ms: artifact.wall_clock_ms,
        });
        process.stderr.write(`${Math.round(rate.events_per_s)} events/s, load average ${host.load_1m[1].toFixed(2)}${stealText(host.host_cpu)}\n`);
      } catch (err) {
        failures.push({ round, decode_interval_ms: interval, error: String(err?.message ?? err) });
        process.stderr.write(`FAILED: ${err?.message ?? err}\n`);
      }
    }
  }
  return { runsByRung, failures };
}

/** Warms the browser (wasm compile, JIT, connection code paths) with one short run that is not reported. */
async function warmUp(browser, siteUrl, prefillTokS, measurement) {
  process.stderr.write('warm-up run (not reported)… ');
  await runRung(browser, siteUrl, planRung(4, prefillTokS, 8), measurement);
  process.stderr.write('done\n');
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.chdir(REPO_ROOT);
  const env = environment();
  const browser = await launchBareBrowser();
  const site = await serveStatic({ root: DIST });
  let ladderResult;
  try {
    await warmUp(browser, site.url, options.prefillTokS, options.measurement);
    ladderResult = await runLadder(browser, site.url, options);
  } finally {
    await browser.close();
    await site.close();
  }
  const { runsByRung, failures } = ladderResult;
  const summaries = options.ladder
    .filter((interval) => runsByRung.get(interval).length > 0)
    .map((interval) => summarizeRung(planRung(interval, options.prefillTokS), runsByRung.get(interval)));
  const verdictsByView = verdicts(summaries);
  env.load_average_at_end = loadavg();
  printReport(summaries, verdictsByView, env);

  const report = {
    benchmark: 'strobe timing fidelity',
    fidelity_bar_ms: FIDELITY_BAR_MS,
    error_definition: 'client absolute moment − server stamp, ms (unix clock on both sides); '
      + 'p50/p95/max are nearest-rank of |error|, median_signed_ms is the bias',
    duration_error_definition: 'client TTFT/E2E − the server\'s received → first content byte / last '
      + 'byte; upstream = server received − client fetch() call; *_wire = the same of measured − client_queue_ms',
    options: {
      quick: options.quick, repeat: options.repeat, ladder_decode_interval_ms: options.ladder,
      measurement: options.measurement,
    },
    setup: {
      concurrency: CONCURRENCY, max_tokens: MAX_TOKENS, response_words: RESPONSE_WORDS,
      reasoning_tokens: REASONING_TOKENS, context_tokens: CONTEXT_TOKENS, request_canaries: true,
      sim_args: planRung(options.ladder[0], options.prefillTokS).simArgs,
    },
    environment: env,
    highest_rate_under_bar: verdictsByView,
    rungs: summaries,
    runs: Object.fromEntries([...runsByRung].map(([interval, runs]) => [String(interval), runs])),
    failures,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 1)}\n`);
  console.log(`Every number: ${options.out}`);
  if (failures.length > 0) {
    console.error(`${failures.length} run(s) did not complete:`);
    for (const { round, decode_interval_ms: interval, error } of failures) {
      console.error(`  round ${round}, ${interval} ms: ${error}`);
    }
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err?.stack ?? err);
  process.exitCode = 2;
});
