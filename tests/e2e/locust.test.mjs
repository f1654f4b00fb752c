// End-to-end: plans written by `strobe-artifact plan` run on a Locust master and two workers on
// this machine against strobe-sim; each worker sends its share of the requests and records every
// read, `strobe-artifact import-locust` turns the records into one artifact, held against the
// simulator's truth log, and the same records dropped on the page read as that run
// (docs/operate/locust.md). A plan of a workload file carries its prompts: the simulator's truth
// log shows them arrive byte for byte, and the imported artifact has the `workload` block and no
// prompt. Locust comes from PyPI into a virtualenv of its own (scripts/setup-locust.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startSim } from './sim.mjs';
import { ARTIFACT_CLI, validateArtifact } from './artifact-tools.mjs';
import { browserAndSite } from './page.mjs';
import { artifactErrors, stampMs } from './truth.mjs';
import { percentile } from './bench/stats.mjs';

const env = browserAndSite();

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
  return runProcess(locust, args, env);
}

/** Runs `command ARGS` with `env` added; resolves to its exit code and output. */
function runProcess(command, args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/**
 * Writes the plan of `settings` (with the requests of `workload`, a file, if given) with
 * `strobe-artifact plan` and runs it against `server` on a fresh Locust master and `workers`
 * workers: `{ folder, plan, records }` (records: the folder the workers wrote).
 */
async function runPlanOnLocust(settings, workers = 2, { server = sim, workload } = {}) {
  const folder = mkdtempSync(join(tmpdir(), 'strobe-locust-'));
  const link = new URLSearchParams({ base_url: server.baseUrls[0], model: 'strobe-sim-1', engine: 'strobe-sim', ...settings }).toString();
  execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder, ...(workload ? ['--workload', workload] : [])], { stdio: 'pipe' });
  const plan = JSON.parse(readFileSync(join(folder, 'plan.json'), 'utf8'));
  const records = join(folder, 'records');
  const environment = { STROBE_PLAN: join(folder, 'plan.json'), STROBE_RECORDS: records, STROBE_WORKERS: String(workers) };
  const port = String(await freePort());
  const locustfile = join(folder, 'locustfile.py');
  const users = String(workers);
  const master = runLocust(
    ['-f', locustfile, '--headless', '--master', '--master-bind-host', '127.0.0.1', '--master-bind-port', port,
      '--expect-workers', users, '-u', users, '-r', users, '--run-time', '120s'],
    environment,
  );
  const started = Array.from({ length: workers }, () =>
    runLocust(['-f', locustfile, '--worker', '--master-host', '127.0.0.1', '--master-port', port], environment),
  );
  const ended = await master;
  assert.equal(ended.code, 0, ended.output.slice(-2000));
  for (const worker of await Promise.all(started)) assert.equal(worker.code, 0, worker.output.slice(-2000));
  return { folder, plan, records };
}

/** `strobe-artifact import-locust RECORDS` into FOLDER/artifact.json: the artifact and stderr. */
function importRecords(folder, records) {
  const child = spawnSyncText(ARTIFACT_CLI, ['import-locust', records]);
  assert.equal(child.status, 0, child.stderr);
  const path = join(folder, 'artifact.json');
  writeFileSync(path, child.stdout);
  const { exitCode, report } = validateArtifact(path);
  assert.equal(exitCode, 0, JSON.stringify(report?.violations ?? report));
  return { artifact: JSON.parse(child.stdout), stderr: child.stderr, path };
}

/** Runs `command ARGS` to its end: `{ status, stdout, stderr }`. */
function spawnSyncText(command, args) {
  const { status, stdout, stderr } = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status, stdout, stderr };
}

test('a plan runs on a Locust master and two workers, each its share, every read recorded', async (t) => {
  await sim.reset();
  const { folder, plan, records } = await runPlanOnLocust({
    requests: '64',
    concurrency: '16',
    context_tokens: '256',
    max_tokens: '16',
    request_canaries: 'true',
  });
  // One file per worker process: a header line, then one record per request it sent.
  const files = readdirSync(records).filter((name) => name.endsWith('.jsonl')).sort();
  assert.equal(files.length, 2, files.join(', '));
  const seen = new Set();
  const slots = new Set();
  const bodyEndNs = new Map();
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
      bodyEndNs.set(record.index, record.end_ns - record.start_ns);
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

  // Imported: one valid artifact, every request a row, read by strobe's own core.
  const { artifact } = importRecords(folder, records);
  assert.equal(artifact.completed, 64, JSON.stringify(artifact.failures).slice(0, 500));
  assert.equal(artifact.concurrency, 16);
  assert.match(artifact.timing_methodology.clock, /^client time\.perf_counter_ns per Locust worker; resolution 1e-06 ms; timeline on one host's monotonic clock/);
  assert.equal(artifact.client.name, 'locust');
  assert.ok(artifact.request_timings.every((row) => row.request_canary.passed));
  const block = artifact.client.distributed;
  assert.equal(block.engine, 'locust');
  assert.equal(block.engine_version, '2.47.0');
  assert.equal(block.workers, 2);
  assert.equal(block.hosts.length, 1);
  assert.match(block.clock_domain, /one host's monotonic clock/);
  assert.deepEqual(block.processes.map((process) => process.requests), [32, 32]);
  assert.ok(block.processes.every((process) => process.sync_round_trip_ms > 0), JSON.stringify(block.processes));
  const deltas = artifact.request_timings.reduce((sum, row) => sum + row.reasoning_chunks + row.content_chunks, 0);
  assert.equal(artifact.client.sse.events, deltas + 64 * 4, 'role, finish, usage and [DONE] besides each delta');

  // Held against the server's own log: every row is a request the server saw, and the timeline
  // is on the server's clock. Each request was read whole by the server after it was sent, and
  // each body's end was read after the server began its last write: a misplaced clock breaks
  // one of the two by its whole error (0.05 ms of slack for the processes' clock readings).
  // The last write is the chunked body's terminator, which the server writes after the event
  // carrying [DONE]: the row's E2E ends at the [DONE] read, which can come before that write
  // begins, so the body's end (the worker's read of the terminator, `end_ns`) is what the last
  // write is held to. Both ends are placed by the artifact's own timeline.
  const errors = artifactErrors(artifact, truth.records);
  assert.equal(errors.length, 64);
  const byMarker = new Map(truth.records.map((record) => [record.marker, record]));
  let doneBeforeLastWrite = 0;
  for (const [position, row] of artifact.request_timings.entries()) {
    const { upstream } = errors[position];
    assert.ok(upstream > -0.05, `request ${row.request_index} was received ${upstream} ms after it was sent`);
    const startUnixMs = artifact.started_at_unix_ns / 1e6 + row.started_at_ms;
    const bodyEndUnixMs = startUnixMs + bodyEndNs.get(row.request_index) / 1e6;
    assert.ok(bodyEndNs.get(row.request_index) / 1e6 > row.e2e_ms - 0.001, `request ${row.request_index}: the body ends after [DONE]`);
    const lastWrite = stampMs(byMarker.get(row.request_canary.marker).times.last_write_started);
    if (startUnixMs + row.e2e_ms < lastWrite) doneBeforeLastWrite += 1;
    assert.ok(bodyEndUnixMs - lastWrite > -0.05, `request ${row.request_index}'s body ended ${bodyEndUnixMs - lastWrite} ms after the last write began`);
  }

  t.diagnostic(`[DONE] read before the terminator's write began: ${doneBeforeLastWrite} of 64 rows`);

  // Reported as the browser's truth test reports its errors (client − server duration, p50 and
  // p90); the figures to quote come from scripts/bench-locust.sh, not from this test.
  for (const part of ['ttft_whole', 'e2e_whole', 'upstream']) {
    const sorted = errors.map((row) => row[part]).sort((a, b) => a - b);
    t.diagnostic(`${part}: p50 ${percentile(sorted, 50).toFixed(2)} ms, p90 ${percentile(sorted, 90).toFixed(2)} ms`);
  }

  // Dropped on the page together, the records are that run; one alone says what is missing.
  const { page, errors: pageErrors } = await env.open();
  const dropped = readdirSync(records).map((name) => join(records, name));
  await page.getByTestId('artifact-input').setInputFiles(dropped);
  const card = page.getByTestId('library-row').first();
  await card.waitFor();
  assert.equal(await card.getByTestId('verdict').textContent(), 'valid (sent by Locust 2.47.0)');
  await page.getByTestId('single-run').waitFor();
  const notes = await page.getByTestId('distributed-notes').textContent();
  assert.match(notes, /Sent by Locust 2\.47\.0 \(Python [0-9.]+\) from 2 worker processes on 1 host/);
  await page.getByTestId('chart-timeline').locator('canvas').first().waitFor();
  await page.screenshot({ path: 'test-results/locust-run.png', fullPage: true });
  await page.getByTestId('artifact-input').setInputFiles(dropped.slice(0, 1));
  await page.getByText(/no file of worker/).first().waitFor();
  assert.deepEqual(pageErrors, []);
});

function jsonLines(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

function sha256(path) {
  return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
}

test('a plan of a prompt file runs on Locust: its prompts arrive byte for byte, its artifact says which file', async () => {
  const PROMPTS = 'public/samples/prompts.jsonl';
  const server = await startSim(['--seed', '3', '--truth-prompts']);
  try {
    const file = jsonLines(PROMPTS);
    // Thinking off: strobe-sim reasons first otherwise, and a record asking for few tokens
    // would spend them all on reasoning.
    const { folder, plan, records } = await runPlanOnLocust(
      { requests: '100', concurrency: '4', thinking_mode: 'disabled' }, 2, { server, workload: PROMPTS },
    );
    assert.match(plan.prompts, /holds the prompts of prompts\.jsonl/);
    assert.equal(plan.requests.length, file.length);

    // What the server received: every prompt of the file, once, byte for byte, and nothing else,
    // each with its record's max_tokens.
    const truth = (await server.truth()).records;
    assert.equal(truth.length, file.length);
    const received = truth.map((record) => JSON.stringify(record.received)).sort();
    const expected = file.map((record) => JSON.stringify([{ role: 'user', content: record.prompt }])).sort();
    assert.deepEqual(received, expected);
    const asked = new Map(file.map((record) => [record.prompt, record.output_tokens]));
    for (const record of truth) assert.equal(record.max_tokens, asked.get(record.received[0].content));

    // The workers split it by session and copy the workload's shape, never a prompt.
    for (const name of readdirSync(records)) {
      const text = readFileSync(join(records, name), 'utf8');
      const header = JSON.parse(text.split('\n')[0]);
      assert.deepEqual(header.plan_workload, plan.workload);
      for (const record of file) assert.ok(!text.includes(record.prompt), `${name} holds a prompt`);
    }

    // Imported: a valid artifact whose workload block is the page's, and no prompt in it.
    const { artifact } = importRecords(folder, records);
    assert.equal(artifact.completed, file.length, JSON.stringify(artifact.failures).slice(0, 500));
    assert.equal(artifact.workload.source, 'file');
    assert.equal(artifact.workload.endpoint, 'chat');
    assert.deepEqual(artifact.workload.file, {
      format: 'prompt_columns', name: 'prompts.jsonl', bytes: readFileSync(PROMPTS).length, sha256: sha256(PROMPTS),
      records: file.length, usable_sessions: file.length, usable_turns: file.length, skipped: [], timed: false,
    });
    assert.equal(artifact.workload.sending.requests, file.length);
    assert.equal(artifact.workload.sending.sessions, file.length);
    assert.equal(artifact.workload.sending.marker_lines, false);
    assert.deepEqual(
      artifact.request_timings.map((row) => row.workload.record).sort((a, b) => a - b),
      file.map((_, index) => index),
    );
    const text = JSON.stringify(artifact);
    for (const record of file) assert.ok(!text.includes(record.prompt), 'no prompt in the artifact');
  } finally {
    await server.stop();
  }
});

/** The content each request's stream carried, by index, from the records in `folder`. */
function streamedContent(folder) {
  const content = new Map();
  for (const name of readdirSync(folder)) {
    const [, ...lines] = readFileSync(join(folder, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    for (const record of lines) {
      const stream = Buffer.concat(record.reads.map(([, data]) => Buffer.from(data, 'base64'))).toString('utf8');
      const text = stream
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)).choices?.[0]?.delta?.content ?? '')
        .join('');
      content.set(record.index, { text, record });
    }
  }
  return content;
}

test('conversations with live history run on Locust: each later turn carries the server\'s own replies', async () => {
  const CONVERSATIONS = 'public/samples/conversations.jsonl';
  const server = await startSim(['--seed', '7', '--truth-prompts']);
  try {
    const file = jsonLines(CONVERSATIONS);
    const { folder, plan, records } = await runPlanOnLocust(
      { concurrency: '8', thinking_mode: 'disabled' }, 2, { server, workload: CONVERSATIONS },
    );
    assert.ok(plan.live_history, 'a plan of live history');
    const turns = file.reduce((sum, session) => sum + session.turns.length, 0);
    assert.equal(plan.requests.length, turns);
    const indexOf = (session, turn) => plan.requests.find((r) => r.session === session && r.turn === turn).index;
    const streamed = streamedContent(records);
    const truth = (await server.truth()).records;
    assert.equal(truth.length, turns);
    for (const [s, session] of file.entries()) {
      for (const [k, turn] of session.turns.entries()) {
        // What turn k of session s must have carried: the file's turns and, after each, the
        // content the server streamed for it.
        const expected = [];
        for (let j = 0; j < k; j += 1) {
          expected.push({ role: 'user', content: session.turns[j].text });
          expected.push({ role: 'assistant', content: streamed.get(indexOf(s, j)).text });
        }
        expected.push({ role: 'user', content: turn.text });
        const found = truth.filter((record) => record.received.length === expected.length
          && record.received[0].content === session.turns[0].text && record.received.at(-1).content === turn.text);
        assert.equal(found.length, 1, `session ${s} turn ${k}`);
        assert.deepEqual(found[0].received, expected, `session ${s} turn ${k}`);
        assert.equal(found[0].max_tokens, turn.output_length);
        if (k > 0) {
          // Sent its delay after the previous turn's response ended, on the same worker's clock.
          const previous = streamed.get(indexOf(s, k - 1)).record;
          const current = streamed.get(indexOf(s, k)).record;
          const delayMs = plan.requests[indexOf(s, k)].delay_ms;
          assert.equal(delayMs, turn.delay ?? 0, 'the file\'s delay, else the think time (0)');
          assert.ok(current.start_ns - previous.end_ns >= delayMs * 1e6, `session ${s} turn ${k} waited its delay`);
        }
      }
    }
    const { artifact } = importRecords(folder, records);
    assert.equal(artifact.completed, turns, JSON.stringify(artifact.failures).slice(0, 500));
    assert.equal(artifact.workload.file.format, 'aiperf_multi_turn');
    assert.equal(artifact.workload.sending.history, 'live');
    assert.equal(artifact.workload.sending.sessions, file.length);
    for (const row of artifact.request_timings) {
      const request = plan.requests[row.request_index];
      assert.deepEqual([row.workload.session, row.workload.turn], [request.session, request.turn]);
    }
    const text = JSON.stringify(artifact);
    for (const session of file) for (const turn of session.turns) assert.ok(!text.includes(turn.text), 'no prompt in the artifact');
  } finally {
    await server.stop();
  }
});

test('a trace plan on Locust replays its records at their timestamps over the speed', async () => {
  const TRACE = 'public/samples/trace.jsonl';
  const server = await startSim(['--seed', '5', '--truth-prompts']);
  try {
    const file = jsonLines(TRACE);
    const { folder, plan, records } = await runPlanOnLocust(
      { requests: '1000', concurrency: '16', trace_speed: '4', thinking_mode: 'disabled' }, 2, { server, workload: TRACE },
    );
    assert.equal(plan.load.mode, 'rate');
    assert.deepEqual(plan.load.arrival_ms, file.map((record) => (record.timestamp - file[0].timestamp) / 4));
    const truth = (await server.truth()).records;
    assert.equal(truth.length, file.length);
    // Each prompt as the plan built it: input_length at 3 characters a token.
    const lengths = truth.map((record) => record.received[0].content.length).sort((a, b) => a - b);
    assert.deepEqual(lengths, file.map((record) => record.input_length * 3).sort((a, b) => a - b));
    const { artifact } = importRecords(folder, records);
    assert.equal(artifact.completed, file.length, JSON.stringify(artifact.failures).slice(0, 500));
    assert.equal(artifact.workload.file.format, 'mooncake_trace');
    assert.equal(artifact.workload.file.timed, true);
    assert.equal(artifact.workload.sending.trace_speed, 4);
    const block = artifact.client.distributed;
    for (const row of artifact.request_timings) {
      const start = block.processes[row.request_index % 2].started_ms;
      assert.ok(Math.abs(row.scheduled_ms - (start + plan.load.arrival_ms[row.request_index])) < 1e-6, `request ${row.request_index}`);
      assert.ok(row.dispatch_lag_ms >= 0, `request ${row.request_index} went out early`);
    }
  } finally {
    await server.stop();
  }
});

test('a rate plan on two workers keeps one schedule from one agreed start', async () => {
  await sim.reset();
  const { folder, plan, records } = await runPlanOnLocust({
    requests: '40',
    load: 'rate',
    rate: '20',
    arrivals: 'constant',
    concurrency: '16',
    context_tokens: '128',
    max_tokens: '16',
    request_canaries: 'true',
  });
  const { artifact } = importRecords(folder, records);
  assert.equal(artifact.completed, 40, JSON.stringify(artifact.failures).slice(0, 500));
  assert.ok(artifact.load, 'an open loop has its load block');
  const block = artifact.client.distributed;
  // The workers wait for the start the master names: they begin together, not when each
  // happened to be spawned, so the union of their sends follows the plan's one schedule.
  const starts = block.processes.map((process) => process.started_ms);
  assert.ok(Math.max(...starts) - Math.min(...starts) < 20, `worker starts ${starts.join(', ')} ms`);
  const arrivals = plan.load.arrival_ms;
  for (const row of artifact.request_timings) {
    const start = block.processes[row.request_index % 2].started_ms;
    assert.ok(Math.abs(row.scheduled_ms - (start + arrivals[row.request_index])) < 1e-6, `request ${row.request_index}`);
    assert.ok(row.dispatch_lag_ms >= 0, `request ${row.request_index} went out ${row.dispatch_lag_ms} ms before it was due`);
  }
  assert.equal((await sim.truth()).records.length, 40);
});


test('a kept-alive connection the server closed while idle is sent again on a fresh one', async () => {
  // A real HTTP server that closes each kept-alive connection 20 ms after its response, without
  // saying so (as uvicorn, vLLM's server, does after 5 s idle): a rate plan's gaps of 150 ms
  // find each connection closed.
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      response.end('data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n');
      response.on('finish', () => setTimeout(() => request.socket.end(), 20));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const folder = mkdtempSync(join(tmpdir(), 'strobe-locust-idle-'));
    const link = new URLSearchParams({
      base_url: `http://127.0.0.1:${server.address().port}/v1`, model: 'm', engine: 'vllm', requests: '3',
      load: 'rate', rate: '6.5', arrivals: 'constant', concurrency: '1', max_tokens: '16', request_canaries: 'false',
    }).toString();
    execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder]);
    const python = join(dirname(locust), 'python');
    const records = join(folder, 'records');
    // Asynchronously: the server runs in this process and must answer meanwhile.
    const worker = await runProcess(python, ['tests/e2e/bench/locust-worker.py', join(folder, 'plan.json'), records]);
    assert.equal(worker.code, 0, worker.output);
    const [name] = readdirSync(records);
    const [, ...lines] = readFileSync(join(records, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines.map((record) => record.status), [200, 200, 200]);
    assert.equal(lines[0].retried, undefined, 'the first request went out on the connection opened for it');
    for (const record of lines.slice(1)) {
      assert.match(record.retried ?? '', /ConnectionResetError|BrokenPipeError|RemoteDisconnected/, JSON.stringify(record));
    }
    const child = spawnSyncText(ARTIFACT_CLI, ['import-locust', records]);
    assert.equal(child.status, 0, child.stderr);
    const artifact = JSON.parse(child.stdout);
    assert.equal(artifact.completed, 3, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.distributed.retried_requests, 2);
    assert.match(child.stderr, /2 requests were sent again on a fresh connection/);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('an error body that echoes the API key reaches neither the records nor the artifact', async () => {
  const key = 'sk-strobe-locust-secret-1234';
  // A real server that refuses the key and, carelessly, says it back.
  const server = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(401, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ error: `invalid key: ${request.headers.authorization}` }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const folder = mkdtempSync(join(tmpdir(), 'strobe-locust-key-'));
    const link = new URLSearchParams({
      base_url: `http://127.0.0.1:${server.address().port}/v1`, model: 'm', engine: 'vllm', requests: '2',
      concurrency: '1', max_tokens: '16', request_canaries: 'false',
    }).toString();
    execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder]);
    const records = join(folder, 'records');
    const worker = await runProcess(join(dirname(locust), 'python'),
      ['tests/e2e/bench/locust-worker.py', join(folder, 'plan.json'), records], { STROBE_API_KEY: key });
    assert.equal(worker.code, 0, worker.output);
    const [name] = readdirSync(records);
    const text = readFileSync(join(records, name), 'utf8');
    const lines = text.trim().split('\n').slice(1).map((line) => JSON.parse(line));
    assert.deepEqual(lines.map((record) => record.status), [401, 401]);
    const bodies = lines.map((record) => Buffer.concat(record.reads.map(([, data]) => Buffer.from(data, 'base64'))).toString('utf8'));
    assert.ok(bodies.every((body) => body.includes('invalid key: Bearer [redacted]')), bodies.join(' | '));
    assert.ok(!text.includes(key) && !bodies.some((body) => body.includes(key)), 'the key is in the records');
    const child = spawnSyncText(ARTIFACT_CLI, ['import-locust', records]);
    assert.equal(child.status, 0, child.stderr);
    assert.ok(!child.stdout.includes(key), 'the key is in the artifact');
    const artifact = JSON.parse(child.stdout);
    assert.equal(artifact.failed, 2);
    assert.match(artifact.failures[0].error_message, /401/);
    assert.match(artifact.failures[0].error_message, /\[redacted\]/);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
