// End-to-end: a plan of 64 requests at concurrency 16, written by `strobe-artifact plan`, runs on
// a Locust master and two workers on this machine against strobe-sim; each worker sends its
// share of the requests from its share of the slots and records every read (docs/locust.md).
// Locust comes from PyPI into a virtualenv of its own (scripts/setup-locust.sh, once).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSim } from './sim.mjs';
import { ARTIFACT_CLI } from './artifact-tools.mjs';

let locust;
let sim;

before(async () => {
  locust = execFileSync('scripts/setup-locust.sh', { encoding: 'utf8', timeout: 600_000 }).trim();
  sim = await startSim(['--seed', '5', '--decode-interval-ms', '5']);
});
after(async () => {
  await sim?.stop();
});

/** A TCP port nobody listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `locust ARGS` with `env`; resolves to its exit code and output. */
function runLocust(args, env) {
  return new Promise((resolve) => {
    const child = spawn(locust, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

test('a plan runs on a Locust master and two workers, each its share, every read recorded', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'strobe-locust-'));
  const link = new URLSearchParams({
    base_url: sim.baseUrls[0],
    model: 'strobe-sim-1',
    engine: 'strobe-sim',
    requests: '64',
    concurrency: '16',
    context_tokens: '256',
    max_tokens: '16',
    request_canaries: 'true',
  }).toString();
  execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder]);
  const plan = JSON.parse(readFileSync(join(folder, 'plan.json'), 'utf8'));
  const records = join(folder, 'records');
  const env = { STROBE_PLAN: join(folder, 'plan.json'), STROBE_RECORDS: records, STROBE_WORKERS: '2' };
  const port = String(await freePort());
  const locustfile = join(folder, 'locustfile.py');
  const master = runLocust(
    ['-f', locustfile, '--headless', '--master', '--master-bind-host', '127.0.0.1', '--master-bind-port', port,
      '--expect-workers', '2', '-u', '2', '-r', '2', '--run-time', '120s'],
    env,
  );
  const workers = [0, 1].map(() =>
    runLocust(['-f', locustfile, '--worker', '--master-host', '127.0.0.1', '--master-port', port], env),
  );
  const ended = await master;
  assert.equal(ended.code, 0, ended.output.slice(-2000));
  await Promise.all(workers);

  // One file per worker process: a header line, then one record per request it sent.
  const files = readdirSync(records).filter((name) => name.endsWith('.jsonl')).sort();
  assert.equal(files.length, 2, files.join(', '));
  const seen = new Set();
  const slots = new Set();
  for (const name of files) {
    const [header, ...lines] = readFileSync(join(records, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(header.kind, 'strobe-locust-worker');
    assert.equal(header.workers, 2);
    assert.equal(header.plan_link, plan.link);
    assert.equal(lines.length, 32, `${name}: half the requests`);
    for (const record of lines) {
      assert.equal(record.index % 2, header.worker, 'requests are split by index');
      assert.equal(record.slot % 2, header.worker, 'slots are split too');
      assert.equal(record.status, 200, JSON.stringify(record).slice(0, 300));
      assert.ok(!seen.has(record.index), `index ${record.index} sent once`);
      seen.add(record.index);
      slots.add(record.slot);
      const stream = Buffer.concat(record.reads.map(([, data]) => Buffer.from(data, 'base64'))).toString('utf8');
      assert.match(stream, /data: \[DONE\]/);
      // The answer opens with this request's own canary: the body sent was the plan's.
      const content = stream
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)).choices?.[0]?.delta?.content ?? '')
        .join('');
      assert.ok(content.startsWith(plan.requests[record.index].canary_marker), content.slice(0, 80));
      const stamps = record.reads.map(([stamp]) => stamp);
      assert.ok(stamps.every((stamp, i) => i === 0 || stamp >= stamps[i - 1]), 'reads in time order');
      assert.ok(stamps[0] >= record.start_ns && record.end_ns >= stamps.at(-1));
    }
  }
  assert.equal(seen.size, 64);
  assert.equal(slots.size, 16, 'every slot of the plan was used');
  // The server saw exactly the plan's 64 requests.
  const truth = await sim.truth();
  assert.equal(truth.records.length, 64);
});
