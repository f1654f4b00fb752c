// Fidelity benchmark: how true strobe's TTFO, TTFT and E2E are against strobe-sim's truth log at
// concurrency 1, 4 and 6 on one origin and 16 and 64 through an endpoint pool, with strobe
// measuring in its worker, on the page's main thread, and on the main thread with the page
// drawing nothing until the run ends (live_view=end), next to a minimal plain-JavaScript
// streaming client (the floor: what any browser client could do) over the same server in the
// same run.
//
// The browser is driven over a bare DevTools pipe (../bare-browser.mjs): Playwright's Network
// domain reports every response chunk from the measuring threads and doubled the errors here.
// Per case and client, a fresh strobe-sim is started with as many ports as the case needs
// (⌈c / 6⌉, so no origin carries more than the browser's six HTTP/1.1 connections), without a
// prefix cache; the four clients run one after another, each against its own simulator and
// with its own canary markers so every row joins its own truth record.
//
// The floor client warms its connections up the same way strobe does (a priming round of two
// tiny requests per connection, then a check round of one per connection, each all at once),
// so the comparison is of measuring, not of warm-up policy. Errors are the client's absolute
// moment minus the server's stamp of it, as
// in timing.mjs: both clocks are this machine's wall clock, so the error is measurement error
// plus loopback delivery plus any time either process sat descheduled.
//
// Reports per case and client: p50 / p95 / max of |error| for each metric, the signed median,
// then the duration error — the client's TTFT and E2E minus the server's own durations from
// receiving the request — split into upstream (fetch() → the server's receipt) and downstream,
// and for strobe the same error of its times from the wire (measured − client_queue_ms),
// and (strobe) rows that opened a new connection (a cold start inside a measured row). Then the
// comparisons the issue asks for: worker vs main thread (as drawn live, and quiet), and strobe
// (worker, and main quiet) vs the floor on the page, on the median over runs of each run's p95,
// with a verdict from a sign test over rounds that says whether a higher p95 is more than this
// machine's run-to-run noise (see compareP95).
// It measures and reports; it exits non-zero only when a run does not complete.
//
// Usage (needs dist/ and target/release/strobe-sim; see scripts/bench-fidelity.sh):
//   node tests/e2e/bench/fidelity.mjs [--quick | --cases 1,64] [--repeat N] [--floor-worker]
//     [--scraping [--scrape-interval MS]] [--out FILE]
//   node tests/e2e/bench/fidelity.mjs --report FILE [--report FILE…]   (recompute saved reports'
//     tables; several reports of one build are pooled, their rounds kept apart, for a sign test
//     over more rounds than one report holds)
// --quick runs c=4 and c=16 only; --cases runs the listed concurrencies of the five;
// --floor-worker adds a fifth client, the floor in a dedicated worker; --scraping runs instead
// strobe in its worker and on the main thread each with the server's /metrics scraped from the
// page (server_metrics=auto, every --scrape-interval ms, default 1,000) and without, and compares
// the two (docs/develop/accuracy.md, "Scraping the server's metrics"); --repeat pools N rounds
// of every case (the clients' order changes from round to round so each runs in each position
// alike, see roundOrder; before each run the benchmark waits, up to 3 s, for the host to go
// quiet after the last one).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBareBrowser } from '../bare-browser.mjs';
import { startSim, SIM_BINARY } from '../sim.mjs';
import { parseRepeat, summarize, environment, buildIdentity, watchHost, stealText, settleHost, runInWorker } from './common.mjs';
import { momentErrors, durationErrors, artifactErrors } from '../truth.mjs';
import { floorClient } from './floor.mjs';
import { compareP95, poolReports, roundOrder, NOISY_STEAL_PCT } from './verdict.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = process.env.STROBE_DIST ?? 'dist';
const METRICS = ['ttfo', 'ttft', 'e2e'];
const CONNECTIONS_PER_ORIGIN = 6;
/** Enough rounds to find five quiet ones (see `NOISY_STEAL_PCT`) in a noisy hour, and three whole
 * cycles of the four clients' orders (`roundOrder`: four rounds). */
const MAX_REPEAT = 12;

/** The cases: concurrency and requests per run. Ports follow from concurrency. */
const CASES = [
  { concurrency: 1, requests: 12 },
  { concurrency: 4, requests: 32 },
  { concurrency: 6, requests: 36 },
  { concurrency: 16, requests: 64 },
  { concurrency: 64, requests: 128 },
];
const QUICK_CASES = [4, 16];
/** strobe in its worker, strobe on the page's thread (drawing its live view, and with
 * `live_view=end`, drawing nothing until the end), the plain-JS floor on the page's thread, and
 * (with `--floor-worker`) the same floor in a dedicated worker of its own. */
const MAIN_END = 'main-end';
const CLIENTS = ['worker', 'main', MAIN_END, 'floor'];
const FLOOR_WORKER = 'floor-worker';
const isFloor = (client) => client === 'floor' || client === FLOOR_WORKER;
/** How each strobe client measures: the link's `measurement` and `live_view`. */
const STROBE_MODES = {
  worker: { measurement: 'worker', live_view: 'during' },
  main: { measurement: 'main', live_view: 'during' },
  [MAIN_END]: { measurement: 'main', live_view: 'end' },
};
/** With --scraping: the same two modes with the server's metrics scraped beside the run. */
const WORKER_SCRAPE = 'worker-scrape';
const MAIN_SCRAPE = 'main-scrape';
const SCRAPING_CLIENTS = ['worker', WORKER_SCRAPE, 'main', MAIN_SCRAPE];
const SCRAPED_MODE = { [WORKER_SCRAPE]: 'worker', [MAIN_SCRAPE]: 'main' };
const isScraping = (client) => client in SCRAPED_MODE;
/** The link settings of a strobe client: how it measures, and whether it scrapes /metrics. */
function strobeMode(client, scrapeIntervalMs) {
  if (isScraping(client)) {
    return {
      ...STROBE_MODES[SCRAPED_MODE[client]],
      server_metrics: 'auto',
      server_metrics_interval_ms: String(scrapeIntervalMs),
    };
  }
  return { ...STROBE_MODES[client], server_metrics: 'off' };
}
/** The scrape interval with --scraping: the page's default. */
const DEFAULT_SCRAPE_INTERVAL_MS = 1000;
/** Every client in a report, in table order (older reports lack main-end, most floor-worker,
 * and only --scraping reports have the scraping clients). */
const ALL_CLIENTS = [...CLIENTS, FLOOR_WORKER, WORKER_SCRAPE, MAIN_SCRAPE];

/** Per stream: 8 reasoning tokens, the marker, 24 words; one token every 20 ms. */
const DECODE_INTERVAL_MS = 20;
const REASONING_TOKENS = 8;
const RESPONSE_WORDS = 24;
const MAX_TOKENS = 64;
const CONTEXT_TOKENS = 1024;
/** strobe's prompts hold three characters per planned context token (core::prompt). */
const CONTEXT_CHARS_PER_TOKEN = 3;
/** A fast prefill (10 ms for 1,024 tokens) so decode sets the pace, as in timing.mjs. */
const PREFILL_TOK_S = 100_000;
const RUN_TIMEOUT_MS = 180_000;

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '1' },
      cases: { type: 'string' },
      out: { type: 'string' },
      report: { type: 'string', multiple: true },
      'floor-worker': { type: 'boolean', default: false },
      scraping: { type: 'boolean', default: false },
      'scrape-interval': { type: 'string' },
    },
  });
  const repeat = parseRepeat(values.repeat, MAX_REPEAT);
  const out = values.out ? resolve(values.out) : resolve(REPO_ROOT, 'test-results/bench-fidelity.json');
  const chosen = values.cases ? parseCases(values.cases) : values.quick ? QUICK_CASES : null;
  const cases = chosen ? CASES.filter((c) => chosen.includes(c.concurrency)) : CASES;
  const report = values.report ? values.report.map((path) => resolve(path)) : null;
  if (values['scrape-interval'] !== undefined && !values.scraping) {
    throw new Error('--scrape-interval is for --scraping runs');
  }
  if (values.scraping && values['floor-worker']) {
    throw new Error('--scraping compares strobe with and without scraping; run --floor-worker separately');
  }
  const scrapeIntervalMs = values['scrape-interval'] === undefined ? DEFAULT_SCRAPE_INTERVAL_MS : Number(values['scrape-interval']);
  if (!Number.isInteger(scrapeIntervalMs) || scrapeIntervalMs < 100 || scrapeIntervalMs > 60_000) {
    throw new Error(`--scrape-interval takes whole milliseconds from 100 to 60000 (the page's bounds); got ${values['scrape-interval']}`);
  }
  const clients = values.scraping ? SCRAPING_CLIENTS : values['floor-worker'] ? [...CLIENTS, FLOOR_WORKER] : CLIENTS;
  return { cases, repeat, out, quick: values.quick, report, clients, scraping: values.scraping, scrapeIntervalMs };
}

/** The `--cases` option: a comma list of the benchmark's concurrencies, or an error naming them. */
function parseCases(text) {
  const known = CASES.map((c) => c.concurrency);
  const chosen = text.split(',').map((part) => Number(part.trim()));
  const unknown = chosen.filter((c) => !known.includes(c));
  if (chosen.length === 0 || unknown.length > 0) {
    throw new Error(`--cases takes a comma list of ${known.join(', ')}; got ${text}`);
  }
  return chosen;
}

const portsFor = (concurrency) => Math.ceil(concurrency / CONNECTIONS_PER_ORIGIN);

function simArgs(concurrency, seed) {
  return [
    '--decode-interval-ms', String(DECODE_INTERVAL_MS),
    '--decode-slowdown-per-seq', '0',
    '--reasoning-tokens', String(REASONING_TOKENS),
    '--prefill-tok-s', String(PREFILL_TOK_S),
    '--max-num-seqs', String(Math.max(16, concurrency)),
    // No prefix cache: every request pays the same prefill whatever its prompt, so the three
    // clients (strobe's seeded contexts, the floor's repeated filler) give the server the same
    // work. With the cache, a run whose prompts were seen before skips prefill, its streams
    // start together and decode in step, and every read then arrives in bursts of c: measured
    // at c = 64, the second run against one simulator read a TTFO p95 error of 146–324 ms
    // where the first read 40–45 ms, whichever client it was.
    '--prefix-cache-blocks', '0',
    '--seed', String(seed),
  ];
}

/** strobe's link settings for a case; the first port is base_url, the others the pool. */
function strobeSettings(testCase, baseUrls, client, seed, scrapeIntervalMs) {
  const [base, ...pool] = baseUrls;
  return {
    base_url: base,
    ...(pool.length ? { pool: pool.join(' ') } : {}),
    requests: String(testCase.requests),
    concurrency: String(testCase.concurrency),
    context_tokens: String(CONTEXT_TOKENS),
    context_seed: String(seed),
    max_tokens: String(MAX_TOKENS),
    response_words: String(RESPONSE_WORDS),
    request_canaries: 'true',
    thinking_mode: 'enabled',
    ...strobeMode(client, scrapeIntervalMs),
  };
}

async function runFloor(browser, siteUrl, testCase, baseUrls, tag, inWorker) {
  const page = await browser.openApp(siteUrl);
  try {
    const args = {
      urls: baseUrls.map((base) => `${base}/chat/completions`),
      requests: testCase.requests,
      concurrency: testCase.concurrency,
      maxTokens: MAX_TOKENS,
      words: RESPONSE_WORDS,
      contextChars: CONTEXT_CHARS_PER_TOKEN * CONTEXT_TOKENS,
      tag,
    };
    const rows = inWorker
      ? await page.evaluate(runInWorker, { source: floorClient.toString(), args })
      : await page.evaluate(floorClient, args);
    return { rows, pageErrors: page.errors };
  } finally {
    await page.close();
  }
}

/** One client's run against the case's simulator: its per-row errors and what else it showed. */
async function runClient(browser, siteUrl, testCase, sim, client, seed, scrapeIntervalMs = DEFAULT_SCRAPE_INTERVAL_MS) {
  await sim.reset();
  const runEnded = watchHost();
  if (isFloor(client)) {
    const tag = `${testCase.concurrency}_${seed}`;
    const { rows, pageErrors } = await runFloor(browser, siteUrl, testCase, sim.baseUrls, tag, client === FLOOR_WORKER);
    const host = runEnded();
    const { records } = await sim.truth();
    const byMarker = new Map(records.map((record) => [record.marker, record]));
    const errors = rows.map((row) => {
      const record = byMarker.get(row.marker);
      if (!record) throw new Error(`floor request ${row.marker} has no truth record`);
      return { ...momentErrors(row.started_unix_ms, row, record), ...durationErrors(row.started_unix_ms, row, record) };
    });
    return { errors, new_connections: null, page_errors: pageErrors, ...host };
  }
  const settings = strobeSettings(testCase, sim.baseUrls, client, seed, scrapeIntervalMs);
  const { artifact, pageErrors } = await browser.run(siteUrl, settings, RUN_TIMEOUT_MS);
  const host = runEnded();
  if (artifact.completed !== testCase.requests) {
    const first = artifact.failures?.[0]?.error_message ?? 'no failure recorded';
    throw new Error(`${artifact.completed} of ${testCase.requests} requests completed; the first failure: ${first}`);
  }
  const { measurement, live_view: liveView } = strobeMode(client, scrapeIntervalMs);
  if (artifact.client?.measurement_thread !== measurement || artifact.client?.live_view !== liveView) {
    throw new Error(`asked to measure in ${measurement} with live view ${liveView}, the artifact says `
      + `${artifact.client?.measurement_thread} and ${artifact.client?.live_view}`);
  }
  // A scraping client whose run holds no samples compared nothing: say so rather than report it.
  const samples = artifact.server_metrics?.samples?.length ?? 0;
  if (isScraping(client) && samples === 0) {
    throw new Error(`scraping was on but the artifact holds no server_metrics samples: ${JSON.stringify(artifact.server_metrics?.notes ?? null)}`);
  }
  if (!isScraping(client) && artifact.server_metrics) {
    throw new Error('scraping was off but the artifact holds a server_metrics block');
  }
  const { records } = await sim.truth();
  return {
    scrapes: isScraping(client) ? samples : null,
    errors: artifactErrors(artifact, records),
    new_connections: artifact.request_timings.filter((row) => row.new_connection === true).length,
    queue_suspected: artifact.client.transport.connection_limit_suspected,
    max_in_flight_per_origin: artifact.client.transport.max_in_flight_per_origin,
    page_errors: pageErrors,
    ...host,
  };
}

function summarizeErrors(errors) {
  return Object.fromEntries(METRICS.map((metric) => [metric, summarize(errors.map((row) => row[metric]))]));
}

/**
 * The duration error and its parts (truth.mjs, durationErrors): the whole error of TTFT and E2E
 * against the server's own durations, upstream (fetch() → the server's receipt), downstream (the
 * moment error above), the same whole error of the times from the wire (strobe, when the
 * browser reported client_queue_ms), and client_queue_ms itself. Null where no row has the value
 * (the floor has no wire time; reports older than the duration error have none of them).
 */
const DURATION_PARTS = ['ttft_whole', 'e2e_whole', 'upstream', 'ttft', 'ttft_wire', 'e2e_wire', 'client_queue'];

function summarizeDurations(errors) {
  return Object.fromEntries(DURATION_PARTS.map((part) => {
    const values = errors.map((row) => row[part]).filter(Number.isFinite);
    return [part, values.length > 0 ? summarize(values) : null];
  }));
}

async function runCases(browser, siteUrl, { cases, repeat, clients, scrapeIntervalMs }) {
  const results = new Map(cases.map((testCase) => [testCase.concurrency, Object.fromEntries(clients.map((c) => [c, []]))]));
  const failures = [];
  for (let round = 1; round <= repeat; round += 1) {
    for (const testCase of cases) {
      const ports = portsFor(testCase.concurrency);
      // A balanced order (verdict.mjs, roundOrder): every client in every position alike.
      const order = roundOrder(clients, round);
      for (const [position, client] of order.entries()) {
        // A fresh simulator (fresh ports, so fresh origins in the browser) for every client's
        // run: nothing one run leaves behind on the server or in the browser's connection
        // pools can favour or handicap the next.
        const sim = await startSim(simArgs(testCase.concurrency, round), { ports });
        process.stderr.write(`round ${round}/${repeat}, c=${testCase.concurrency} (${ports} port(s)), ${client}… `);
        try {
          const settle_ms = await settleHost();
          const run = await runClient(browser, siteUrl, testCase, sim, client, 1000 * round + testCase.concurrency, scrapeIntervalMs);
          results.get(testCase.concurrency)[client].push({ round, position, settle_ms, ...run });
          const p95 = summarize(run.errors.map((row) => row.ttfo)).p95_abs_ms;
          process.stderr.write(`TTFO p95 ${p95.toFixed(2)} ms, load ${run.load_1m[1].toFixed(2)}${stealText(run.host_cpu)}\n`);
        } catch (err) {
          failures.push({ round, concurrency: testCase.concurrency, client, error: String(err?.message ?? err) });
          process.stderr.write(`FAILED: ${err?.message ?? err}\n`);
        } finally {
          await sim.stop();
        }
      }
    }
  }
  return { results, failures };
}

function caseSummary(testCase, byClient) {
  const clients = {};
  for (const client of ALL_CLIENTS) {
    const runs = byClient[client] ?? [];
    if (runs.length === 0) continue;
    const errors = runs.flatMap((run) => run.errors);
    clients[client] = {
      runs: runs.length,
      metrics: summarizeErrors(errors),
      durations: summarizeDurations(errors),
      new_connection_rows: isFloor(client) ? null : runs.reduce((sum, run) => sum + run.new_connections, 0),
      queue_suspected: isFloor(client) ? null : runs.some((run) => run.queue_suspected),
      max_in_flight_per_origin: isFloor(client) ? null : Math.max(...runs.map((run) => run.max_in_flight_per_origin)),
      scrapes_per_run: isScraping(client) ? runs.map((run) => run.scrapes) : null,
      host_steal_max_pct: mostSteal(runs),
    };
  }
  const compare = (a, b) => Object.fromEntries(METRICS.map((metric) => {
    if (!clients[a] || !clients[b]) return [metric, null];
    return [metric, compareP95(byClient[a], byClient[b], metric)];
  }));
  return {
    concurrency: testCase.concurrency,
    ports: portsFor(testCase.concurrency),
    requests_per_run: testCase.requests,
    clients,
    p95_worker_vs_main: compare('worker', 'main'),
    p95_worker_vs_floor: compare('worker', 'floor'),
    ...(clients[MAIN_END] ? {
      p95_worker_vs_main_end: compare('worker', MAIN_END),
      p95_main_end_vs_floor: compare(MAIN_END, 'floor'),
    } : {}),
    ...(clients[FLOOR_WORKER] ? { p95_worker_vs_floor_worker: compare('worker', FLOOR_WORKER) } : {}),
    ...(clients[WORKER_SCRAPE] ? { p95_worker_scrape_vs_worker: compare(WORKER_SCRAPE, 'worker') } : {}),
    ...(clients[MAIN_SCRAPE] ? { p95_main_scrape_vs_main: compare(MAIN_SCRAPE, 'main') } : {}),
  };
}

const ms = (value) => value.toFixed(2);

/** The highest host steal of a client's runs, or null when no run has a reading (older reports). */
function mostSteal(runs) {
  const steals = runs.map((run) => run.host_cpu?.steal_pct).filter(Number.isFinite);
  return steals.length > 0 ? Math.max(...steals) : null;
}

function markdownTable(summaries) {
  const lines = [
    '| c | ports | client | TTFO \\|err\\| p50 / p95 / max | TTFT \\|err\\| p50 / p95 / max | E2E \\|err\\| p50 / p95 / max | bias TTFO / TTFT / E2E | new-connection rows | host steal, worst run |',
    '|---:|---:|---|---|---|---|---|---:|---:|',
  ];
  for (const summary of summaries) {
    for (const [client, result] of Object.entries(summary.clients)) {
      const cells = METRICS.map((metric) => {
        const m = result.metrics[metric];
        return `${ms(m.p50_abs_ms)} / ${ms(m.p95_abs_ms)} / ${ms(m.max_abs_ms)}`;
      });
      const bias = METRICS.map((metric) => ms(result.metrics[metric].median_signed_ms)).join(' / ');
      const label = {
        floor: 'plain-JS floor',
        [FLOOR_WORKER]: 'plain-JS floor in a worker',
        [MAIN_END]: 'strobe main, live view end',
        [WORKER_SCRAPE]: 'strobe worker, scraping /metrics',
        [MAIN_SCRAPE]: 'strobe main, scraping /metrics',
      }[client] ?? `strobe ${client}`;
      const fresh = result.new_connection_rows ?? '–';
      const steal = result.host_steal_max_pct == null ? '–' : `${result.host_steal_max_pct.toFixed(1)} %`;
      lines.push(`| ${summary.concurrency} | ${summary.ports} | ${label} | ${cells.join(' | ')} | ${bias} | ${fresh} | ${steal} |`);
    }
  }
  return lines.join('\n');
}

/** The duration error table: whole, upstream, downstream, from the wire (p50 / p95 of |error|). */
function durationTable(summaries) {
  const lines = [
    '| c | client | TTFT whole p50 / p95 | E2E whole p50 / p95 | upstream p50 / p95 | TTFT downstream p50 / p95 '
      + '| TTFT from the wire p50 / p95 | E2E from the wire p50 / p95 | client_queue_ms p50 / p95 |',
    '|---:|---|---|---|---|---|---|---|---|',
  ];
  const cell = (summary) => (summary ? `${ms(summary.p50_abs_ms)} / ${ms(summary.p95_abs_ms)}` : '–');
  for (const summary of summaries) {
    for (const [client, result] of Object.entries(summary.clients)) {
      if (!result.durations) continue;
      const label = {
        floor: 'plain-JS floor',
        [FLOOR_WORKER]: 'plain-JS floor in a worker',
        [MAIN_END]: 'strobe main, live view end',
        [WORKER_SCRAPE]: 'strobe worker, scraping /metrics',
        [MAIN_SCRAPE]: 'strobe main, scraping /metrics',
      }[client] ?? `strobe ${client}`;
      const cells = DURATION_PARTS.map((part) => cell(result.durations[part]));
      lines.push(`| ${summary.concurrency} | ${label} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

function comparisonLines(summaries) {
  const lines = [];
  const words = { no_worse: 'no worse', within_noise: 'higher, within noise', worse: 'WORSE', too_few_runs: `too few quiet rounds for a verdict (five needed: --repeat up to ${MAX_REPEAT}, or pool saved reports of the build with --report A --report B)` };
  for (const summary of summaries) {
    const pairs = [
      ['worker vs main', summary.p95_worker_vs_main],
      ['worker vs main with live view end', summary.p95_worker_vs_main_end],
      ['worker vs floor', summary.p95_worker_vs_floor],
      ['main with live view end vs floor', summary.p95_main_end_vs_floor],
      ['worker vs floor in a worker', summary.p95_worker_vs_floor_worker],
      ['worker scraping /metrics vs worker not scraping', summary.p95_worker_scrape_vs_worker],
      ['main scraping /metrics vs main not scraping', summary.p95_main_scrape_vs_main],
    ].filter(([, comparison]) => comparison && Object.values(comparison).some((c) => c));
    for (const [title, comparison] of pairs) {
      const parts = METRICS.map((metric) => {
        const c = comparison[metric];
        if (!c) return `${metric}: n/a`;
        const [higher, rounds] = c.rounds_higher;
        if (rounds === 0) return `${metric}: no quiet round, ${words[c.verdict]}`;
        return `${metric} ${ms(c.median_p95_ms[0])} vs ${ms(c.median_p95_ms[1])} (median per-round difference ${ms(c.median_difference_ms)}, higher in ${higher} of ${rounds} rounds, p ${c.sign_test_p.toFixed(3)}): ${words[c.verdict]}`;
      });
      // Rounds are set aside per comparison (the same for its three metrics).
      const setAside = Object.values(comparison).find((c) => c)?.rounds_set_aside ?? [];
      const aside = setAside.length > 0 ? ` (round${setAside.length > 1 ? 's' : ''} ${setAside.join(', ')} set aside: host steal ≥ ${NOISY_STEAL_PCT} %)` : '';
      lines.push(`- c=${summary.concurrency}, median of the runs' p95, ${title}${aside}: ${parts.join('; ')}`);
    }
  }
  return lines.join('\n');
}

/** A saved report, or an error that says which file and what is wrong with it. */
function readReport(path) {
  let saved;
  try {
    saved = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`--report ${path}: not a readable JSON file (${error.message})`);
  }
  if (typeof saved?.runs !== 'object' || saved.runs === null) {
    throw new Error(`--report ${path}: not a fidelity report (no "runs"); give a file the benchmark wrote with --out`);
  }
  return saved;
}

/** The tables and comparisons of saved reports, recomputed from their runs (nothing is measured). */
function reprint(paths) {
  let pooled;
  try {
    pooled = poolReports(paths.map((path) => ({ path, saved: readReport(path) })));
  } catch (error) {
    console.error(error.message);
    process.exitCode = 2;
    return;
  }
  const { runs, build } = pooled;
  const summaries = CASES.filter((testCase) => runs[String(testCase.concurrency)])
    .map((testCase) => caseSummary(testCase, runs[String(testCase.concurrency)]));
  const from = paths.length === 1 ? paths[0] : `${paths.length} reports of one build (${build}), pooled (${paths.join(', ')})`;
  console.log(`### Timing error against the server's truth (ms), from ${from}\n`);
  console.log(markdownTable(summaries));
  console.log('\n### Duration error against the server\'s own durations (ms)\n');
  console.log(durationTable(summaries));
  console.log('\n### p95 comparisons\n');
  console.log(comparisonLines(summaries));
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.chdir(REPO_ROOT);
  if (options.report) {
    reprint(options.report);
    return;
  }
  const env = { ...environment(), build: buildIdentity(DIST, SIM_BINARY) };
  const browser = await launchBareBrowser();
  const site = await serveStatic({ root: DIST });
  let outcome;
  try {
    // One unreported run so wasm compilation and first-use code paths are not in any case.
    process.stderr.write('warm-up run (not reported)… ');
    const sim = await startSim(simArgs(4, 0));
    try {
      await runClient(browser, site.url, { concurrency: 4, requests: 8 }, sim, 'worker', 0);
    } finally {
      await sim.stop();
    }
    process.stderr.write('done\n');
    outcome = await runCases(browser, site.url, options);
  } finally {
    await browser.close();
    await site.close();
  }
  const { results, failures } = outcome;
  const summaries = options.cases.map((testCase) => caseSummary(testCase, results.get(testCase.concurrency)));
  env.load_average_at_end = loadavg();
  console.log('### Timing error against the server\'s truth (ms)\n');
  console.log(markdownTable(summaries));
  console.log('\n### Duration error against the server\'s own durations (ms)\n');
  console.log(durationTable(summaries));
  console.log('\n### p95 comparisons\n');
  console.log(comparisonLines(summaries));
  const loads = (list) => list.map((load) => load.toFixed(2)).join(' ');
  console.log(`\n${env.chromium}; ${env.cpu_count} CPUs (${env.cpu_model}); load average `
    + `${loads(env.load_average_at_start)} at start, ${loads(env.load_average_at_end)} at end; ${env.date}`);
  const report = {
    benchmark: 'strobe fidelity: worker vs main thread (live view during, and end) vs a plain-JS floor client',
    error_definition: 'client absolute moment − server stamp, ms (unix clock on both sides); '
      + 'p50/p95/max are nearest-rank of |error|, median_signed_ms is the bias',
    duration_error_definition: 'durations: client TTFT/E2E − the server\'s received → first content '
      + 'byte / last byte; upstream = server received − client fetch() call; ttft (downstream) = the '
      + 'moment error; *_wire = the same whole error of measured − client_queue_ms',
    setup: {
      decode_interval_ms: DECODE_INTERVAL_MS, reasoning_tokens: REASONING_TOKENS, response_words: RESPONSE_WORDS,
      max_tokens: MAX_TOKENS, context_tokens: CONTEXT_TOKENS, prefill_tok_s: PREFILL_TOK_S,
      connections_per_origin: CONNECTIONS_PER_ORIGIN, repeat: options.repeat,
      ...(options.scraping ? { scrape_interval_ms: options.scrapeIntervalMs } : {}),
    },
    environment: env,
    cases: summaries,
    runs: Object.fromEntries([...results].map(([concurrency, byClient]) => [String(concurrency), byClient])),
    failures,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 1)}\n`);
  console.log(`Every number: ${options.out}`);
  if (failures.length > 0) {
    console.error(`${failures.length} run(s) did not complete:`);
    for (const { round, concurrency, client, error } of failures) console.error(`  round ${round}, c=${concurrency}, ${client}: ${error}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err?.stack ?? err);
  process.exitCode = 2;
});
