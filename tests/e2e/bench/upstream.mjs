// Upstream benchmark: where the time between a browser's fetch() call and the server's receipt
// of the request goes, and what changes it. The half of the timing error the server never sees
// (docs/develop/accuracy.md, *Upstream: fetch() to the wire*).
//
// For each variant of the send — the way strobe sends (a JSON string body, two headers, on the
// page's thread), then one change at a time: `priority: "high"`, `keepalive: true`, the
// `Request` built before the clock is read, the body as bytes, an `Authorization` header, a body
// ten times longer, three other streams in flight, and the send from a dedicated worker — a page
// of the built app sends sequential streaming requests (max_tokens 2) to a fresh strobe-sim after
// a warm-up of its own, and each request is joined to the simulator's truth record by its
// marker. Per request it keeps:
//   upstream      = the server's `received` stamp − the fetch() call (both this machine's wall clock)
//   request_start = Resource Timing `requestStart` − the fetch() call (what strobe records as
//                   client_queue_ms), the browser's own view of the same wait
// and reports p50 / p95 per variant, rounds interleaved (every variant once per round, the order
// rotating) so drift of the host touches them alike. It measures and reports; it exits non-zero
// only when a run fails.
//
// Usage (needs dist/ and target/release/strobe-sim; see scripts/bench-upstream.sh):
//   node tests/e2e/bench/upstream.mjs [--quick] [--repeat N] [--out FILE]
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBareBrowser } from '../bare-browser.mjs';
import { startSim } from '../sim.mjs';
import { stampMs } from '../truth.mjs';
import { parseRepeat, environment, watchHost, stealText, settleHost, runInWorker } from './common.mjs';
import { percentile } from './stats.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = process.env.STROBE_DIST ?? 'dist';
const MAX_REPEAT = 10;
const REQUESTS = 30;
const QUICK_REQUESTS = 8;
/** strobe's default prompt of the fidelity benchmark: 1,024 planned tokens × 3 characters. */
const PROMPT_CHARS = 3072;

/** The variants: what each changes against `baseline`, strobe's own way of sending. */
const VARIANTS = {
  baseline: {},
  priority_high: { priority: 'high' },
  keepalive: { keepalive: true },
  request_built_ahead: { requestAhead: true },
  body_as_bytes: { bytes: true },
  authorization_header: { authorization: true },
  body_10x: { promptChars: PROMPT_CHARS * 10 },
  three_in_flight: { inFlight: 3 },
  worker: { worker: true },
};

/**
 * The in-page client (serialized into the page or a worker: it uses nothing from outside its
 * body). Warms one connection per slot up, then sends `requests` requests one after another
 * (with `inFlight` more long streams kept going beside them, on their own connections) and
 * returns, per measured request, its marker, its fetch() call as Unix ms and Resource Timing's
 * requestStart − fetch() call.
 */
async function upstreamClient({ url, requests, tag, options }) {
  const promptChars = options.promptChars ?? 3072;
  const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  if (options.authorization) headers.Authorization = 'Bearer benchmark-key';
  const body = (marker, maxTokens) => JSON.stringify({
    model: 'strobe-sim-1',
    messages: [{ role: 'user', content: `${'lorem ipsum dolor sit amet '.repeat(Math.ceil(promptChars / 27)).slice(0, promptChars - 60)}\nBegin with the exact marker ${marker} then stop.` }],
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  const drain = async (response) => {
    const reader = response.body.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) return;
    }
  };
  const init = (text) => ({
    method: 'POST',
    headers,
    body: options.bytes ? new TextEncoder().encode(text) : text,
    ...(options.priority ? { priority: options.priority } : {}),
    ...(options.keepalive ? { keepalive: true } : {}),
  });
  const slots = 1 + (options.inFlight ?? 0);
  // Warm-up: two per connection at once, as strobe's priming round, then one per connection.
  for (const perSlot of [2, 1]) {
    await Promise.all(Array.from({ length: perSlot * slots }, (_, k) => fetch(url, init(body(`WARM_${tag}_${perSlot}_${k}`, 1))).then(drain)));
  }
  let running = true;
  const background = Array.from({ length: options.inFlight ?? 0 }, async (_, k) => {
    let n = 0;
    while (running) {
      n += 1;
      await fetch(url, init(body(`BUSY_${tag}_${k}_${n}`, 40))).then(drain);
    }
  });
  performance.clearResourceTimings();
  performance.setResourceTimingBufferSize(10_000);
  const rows = [];
  for (let index = 0; index < requests; index += 1) {
    const marker = `UP_${tag}_${String(index).padStart(4, '0')}`;
    const text = body(marker, 2);
    const request = options.requestAhead ? new Request(url, init(text)) : null;
    const args = options.requestAhead ? [request] : [url, init(text)];
    const startedUnixMs = performance.timeOrigin + performance.now();
    const t0 = performance.now();
    const response = await fetch(...args);
    await drain(response);
    rows.push({ marker, started_unix_ms: startedUnixMs, t0 });
  }
  running = false;
  await Promise.all(background);
  // The measured requests' entries, each the first one that starts at or after its fetch() call.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const entries = performance.getEntriesByName(url).filter((entry) => entry.requestStart > 0);
  for (const row of rows) {
    const entry = entries.find((candidate) => candidate.startTime >= row.t0 && candidate.startTime - row.t0 < 50);
    row.request_start_ms = entry ? entry.requestStart - row.t0 : null;
    delete row.t0;
  }
  return rows;
}

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '3' },
      out: { type: 'string' },
    },
  });
  return {
    repeat: values.quick ? 1 : parseRepeat(values.repeat, MAX_REPEAT),
    requests: values.quick ? QUICK_REQUESTS : REQUESTS,
    quick: values.quick,
    out: values.out ? resolve(values.out) : resolve(REPO_ROOT, 'test-results/bench-upstream.json'),
  };
}

async function runVariant(browser, siteUrl, variant, round, requests) {
  const sim = await startSim(['--decode-interval-ms', '5', '--prefill-tok-s', '1000000', '--seed', String(round)]);
  const page = await browser.openApp(siteUrl);
  try {
    const options = VARIANTS[variant];
    const args = { url: `${sim.baseUrls[0]}/chat/completions`, requests, tag: `${variant}_${round}`, options };
    const ended = watchHost();
    const rows = options.worker
      ? await page.evaluate(runInWorker, { source: upstreamClient.toString(), args })
      : await page.evaluate(upstreamClient, args);
    const host = ended();
    const { records } = await sim.truth();
    const byMarker = new Map(records.map((record) => [record.marker, record]));
    const measured = rows.map((row) => {
      const record = byMarker.get(row.marker);
      if (!record) throw new Error(`${variant}: request ${row.marker} has no truth record`);
      return { upstream: stampMs(record.times.received) - row.started_unix_ms, request_start: row.request_start_ms };
    });
    return { rows: measured, page_errors: page.errors, ...host };
  } finally {
    await page.close();
    await sim.stop();
  }
}

const stat = (values, p) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length ? percentile(sorted, p) : null;
};
const ms = (value) => (value == null ? '–' : value.toFixed(2));

async function main() {
  const options = parseOptions(process.argv.slice(2));
  process.chdir(REPO_ROOT);
  const env = environment();
  const browser = await launchBareBrowser();
  const site = await serveStatic({ root: DIST });
  const names = Object.keys(VARIANTS);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  const failures = [];
  try {
    for (let round = 1; round <= options.repeat; round += 1) {
      // Every variant once per round, the order rotated from round to round.
      const order = names.map((_, k) => names[(k + round - 1) % names.length]);
      for (const variant of order) {
        process.stderr.write(`round ${round}/${options.repeat}, ${variant}… `);
        try {
          await settleHost();
          const run = await runVariant(browser, site.url, variant, round, options.requests);
          runs[variant].push({ round, ...run });
          process.stderr.write(`upstream p50 ${ms(stat(run.rows.map((row) => row.upstream), 50))} ms${stealText(run.host_cpu)}\n`);
        } catch (err) {
          failures.push({ round, variant, error: String(err?.message ?? err) });
          process.stderr.write(`FAILED: ${err?.message ?? err}\n`);
        }
      }
    }
  } finally {
    await browser.close();
    await site.close();
  }
  const summaries = names.map((variant) => {
    const rows = runs[variant].flatMap((run) => run.rows);
    const upstream = rows.map((row) => row.upstream);
    const requestStart = rows.map((row) => row.request_start);
    return {
      variant,
      requests: rows.length,
      upstream_p50_ms: stat(upstream, 50),
      upstream_p95_ms: stat(upstream, 95),
      request_start_p50_ms: stat(requestStart, 50),
      request_start_p95_ms: stat(requestStart, 95),
    };
  });
  const baseline = summaries.find((summary) => summary.variant === 'baseline');
  console.log('### Upstream: fetch() call to the server\'s receipt (ms)\n');
  console.log('| variant | requests | server receipt − fetch() p50 / p95 | requestStart − fetch() p50 / p95 | p50 against baseline |');
  console.log('|---|---:|---|---|---:|');
  for (const summary of summaries) {
    const delta = baseline?.upstream_p50_ms != null && summary.upstream_p50_ms != null
      ? `${summary.upstream_p50_ms - baseline.upstream_p50_ms >= 0 ? '+' : ''}${ms(summary.upstream_p50_ms - baseline.upstream_p50_ms)}`
      : '–';
    console.log(`| ${summary.variant} | ${summary.requests} | ${ms(summary.upstream_p50_ms)} / ${ms(summary.upstream_p95_ms)} `
      + `| ${ms(summary.request_start_p50_ms)} / ${ms(summary.request_start_p95_ms)} | ${delta} |`);
  }
  env.load_average_at_end = loadavg();
  const loads = (list) => list.map((load) => load.toFixed(2)).join(' ');
  console.log(`\n${env.chromium}; ${env.cpu_count} CPUs (${env.cpu_model}); load average `
    + `${loads(env.load_average_at_start)} at start, ${loads(env.load_average_at_end)} at end; ${env.date}`);
  const report = {
    benchmark: 'strobe upstream: fetch() call to the server receipt, per way of sending',
    definition: 'upstream = strobe-sim received stamp − fetch() call (Unix ms, both this machine\'s clock); '
      + 'request_start = Resource Timing requestStart − fetch() call; nearest-rank p50 / p95',
    setup: { requests_per_run: options.requests, prompt_chars: PROMPT_CHARS, repeat: options.repeat, variants: VARIANTS },
    environment: env,
    summaries,
    runs,
    failures,
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(report, null, 1)}\n`);
  console.log(`Every number: ${options.out}`);
  if (failures.length > 0) {
    console.error(`${failures.length} run(s) failed:`);
    for (const { round, variant, error } of failures) console.error(`  round ${round}, ${variant}: ${error}`);
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err?.stack ?? err);
  process.exitCode = 2;
});
