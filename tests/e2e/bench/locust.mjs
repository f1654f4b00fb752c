// Locust read-path benchmark: what one Locust worker process spends on each network read and
// each stream event, how many events a second it carries, and how true its TTFT is, at
// concurrency 1, 16 and 64 (docs/operate/locust.md, *What a worker costs*).
//
// How: strobe-sim (decode interval 2 ms, so one stream sends 500 events a second) on loopback;
// per case `strobe-artifact plan` writes the plan, tests/e2e/bench/locust-worker.py runs all of
// it in one Python process through the shipped locustfile's `run_share` (gevent-patched sockets,
// as under Locust) and reports the process's CPU time; `strobe-artifact import-locust` reads
// the records with strobe's core, and each row is joined to the simulator's truth log by its
// canary marker. Per case it reports reads and events, CPU µs per read and per event, the events
// per second the process carried and its CPU share, and the TTFT duration error (client TTFT −
// the server's receipt → first content byte) and the part of it before the server's receipt
// (the worker's send → the server's receipt), p50 and p90. It measures and never judges.
// Output: a Markdown table on stdout, every number in test-results/bench-locust.json.
//
// Usage (needs target/release/strobe-sim, target/debug/strobe-artifact and the Locust
// virtualenv, see scripts/bench-locust.sh):
//   node tests/e2e/bench/locust.mjs [--cases 1,16,64] [--repeat N] [--out FILE]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { environment, parseRepeat } from './common.mjs';
import { percentile } from './stats.mjs';
import { startSim } from '../sim.mjs';
import { artifactErrors } from '../truth.mjs';
import { ARTIFACT_CLI } from '../artifact-tools.mjs';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const WORKER = join(REPO_ROOT, 'tests/e2e/bench/locust-worker.py');
const DECODE_INTERVAL_MS = '2';
const MAX_TOKENS = 256;
/** Requests per case: enough streams for stable per-read figures, at least four per slot. */
const requestsFor = (concurrency) => Math.max(32, concurrency * 4);

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      cases: { type: 'string', default: '1,16,64' },
      repeat: { type: 'string', default: '1' },
      out: { type: 'string' },
    },
  });
  const cases = values.cases.split(',').map((text) => {
    const concurrency = Number(text);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
      throw new Error(`--cases takes concurrencies from 1 to 256, e.g. 1,16,64 (got ${text})`);
    }
    return concurrency;
  });
  return {
    cases,
    repeat: parseRepeat(values.repeat, 5),
    out: values.out ? resolve(values.out) : resolve(REPO_ROOT, 'test-results/bench-locust.json'),
  };
}

const locustPython = () => {
  const locust = execFileSync(join(REPO_ROOT, 'scripts/setup-locust.sh'), { encoding: 'utf8' }).trim();
  return join(dirname(locust), 'python');
};

async function runCase(python, sim, concurrency) {
  const folder = mkdtempSync(join(tmpdir(), 'strobe-bench-locust-'));
  const link = new URLSearchParams({
    base_url: sim.baseUrls[0],
    model: 'strobe-sim-1',
    engine: 'strobe-sim',
    requests: String(requestsFor(concurrency)),
    concurrency: String(concurrency),
    context_tokens: '256',
    max_tokens: String(MAX_TOKENS),
    request_canaries: 'true',
  }).toString();
  execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder]);
  await sim.reset();
  const records = join(folder, 'records');
  const cost = JSON.parse(execFileSync(python, [WORKER, join(folder, 'plan.json'), records], { encoding: 'utf8' }));
  const artifact = JSON.parse(execFileSync(ARTIFACT_CLI, ['import-locust', records], { encoding: 'utf8', maxBuffer: 1 << 28 }));
  if (artifact.completed !== artifact.requests) {
    throw new Error(`c = ${concurrency}: ${artifact.failed} of ${artifact.requests} requests failed: ${JSON.stringify(artifact.failures[0])}`);
  }
  const joined = artifactErrors(artifact, (await sim.truth()).records);
  const errors = joined.map((row) => row.ttft_whole).sort((a, b) => a - b);
  const upstream = joined.map((row) => row.upstream).sort((a, b) => a - b);
  const { reads, events } = artifact.client.sse;
  return {
    concurrency,
    requests: artifact.requests,
    reads,
    events,
    cpu_s: cost.cpu_s,
    wall_s: cost.wall_s,
    cpu_us_per_read: (cost.cpu_s * 1e6) / reads,
    cpu_us_per_event: (cost.cpu_s * 1e6) / events,
    events_per_s: events / cost.wall_s,
    cpu_share_pct: (100 * cost.cpu_s) / cost.wall_s,
    ttft_error_p50_ms: percentile(errors, 50),
    ttft_error_p90_ms: percentile(errors, 90),
    upstream_p50_ms: percentile(upstream, 50),
    upstream_p90_ms: percentile(upstream, 90),
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const python = locustPython();
  const sim = await startSim(['--seed', '11', '--decode-interval-ms', DECODE_INTERVAL_MS]);
  const runs = [];
  try {
    for (let repeat = 0; repeat < options.repeat; repeat += 1) {
      for (const concurrency of options.cases) {
        const run = await runCase(python, sim, concurrency);
        console.error(`c = ${concurrency}, run ${repeat + 1}: ${run.cpu_us_per_read.toFixed(1)} µs/read, TTFT error p50 ${run.ttft_error_p50_ms.toFixed(2)} ms`);
        runs.push(run);
      }
    }
  } finally {
    await sim.stop();
  }
  const rows = options.cases.map((concurrency) => {
    const of = runs.filter((run) => run.concurrency === concurrency);
    const pick = (key) => median(of.map((run) => run[key]));
    return { concurrency, runs: of.length, ...Object.fromEntries(Object.keys(of[0]).filter((key) => key !== 'concurrency').map((key) => [key, pick(key)])) };
  });
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, JSON.stringify({ environment: environment(), decode_interval_ms: Number(DECODE_INTERVAL_MS), max_tokens: MAX_TOKENS, rows, runs }, null, 2));
  console.log('| c | requests | reads | events | CPU µs/read | CPU µs/event | events/s | CPU share | TTFT error p50 / p90 | send → receipt p50 / p90 |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    console.log(
      `| ${row.concurrency} | ${row.requests} | ${row.reads} | ${row.events} | ${row.cpu_us_per_read.toFixed(1)} | ${row.cpu_us_per_event.toFixed(1)} | ${Math.round(row.events_per_s)} | ${row.cpu_share_pct.toFixed(0)} % | ${row.ttft_error_p50_ms.toFixed(2)} / ${row.ttft_error_p90_ms.toFixed(2)} ms | ${row.upstream_p50_ms.toFixed(2)} / ${row.upstream_p90_ms.toFixed(2)} ms |`,
    );
  }
  console.log(`\n(medians of ${options.repeat} run(s) per case; every number in ${options.out})`);
}

main().catch((error) => {
  console.error(error.message ?? error);
  process.exit(1);
});
