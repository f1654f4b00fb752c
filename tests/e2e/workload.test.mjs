// End-to-end: the user's own traffic. A workload file chosen in the form goes to strobe-sim as
// the file gives it — each prompt byte for byte (the simulator's truth log keeps what it
// received), with the record's output length as max_tokens — a Mooncake-style trace replays at
// its timestamps over the completions API with its shared blocks hitting the prefix cache,
// conversations play as sessions carrying the server's own replies, a file larger than a run is
// read off the page's thread with a progress bar (a shuffle sending the records Python's shuffle
// draws), and a broken file is refused with the line to fix before anything is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

const PROMPTS = 'public/samples/prompts.jsonl';
// The warm-up's requests (unmeasured, before the run) carry this prompt.
const WARMUP_PROMPT = 'Reply with one word.';
const TRACE = 'public/samples/trace.jsonl';
const CONVERSATIONS = 'public/samples/conversations.jsonl';

function jsonLines(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
}

function sha256(path) {
  return `sha256:${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
}

/** Opens the app on `sim`, chooses `file` in the workload input, waits for its summary. */
async function withWorkload(sim, file, settings = {}) {
  const { page, errors } = await env.open({ base_url: sim.baseUrls[0], concurrency: '4', ...settings });
  await page.getByTestId('workload-file').setInputFiles(file);
  const summary = page.getByTestId('workload-summary');
  await page.waitForFunction(
    () => ['ready', 'refused'].includes(document.querySelector('[data-testid=workload-summary]')?.dataset.state),
  );
  return { page, errors, summary };
}

test('a prompt file arrives as given, each record with its own output length, and the artifact names the file', async () => {
  const sim = await startSim(['--seed', '3', '--truth-prompts']);
  try {
    const records = jsonLines(PROMPTS);
    // Thinking off: strobe-sim reasons first otherwise, and a record asking for few tokens
    // would spend them all on reasoning (a real outcome, failed as such; not this test's).
    const { page, errors, summary } = await withWorkload(sim, PROMPTS, { thinking_mode: 'disabled' });
    assert.equal(await summary.getAttribute('data-state'), 'ready');
    assert.match(await summary.textContent(), new RegExp(`${records.length} `));
    assert.equal(await page.getByTestId('field-requests').inputValue(), String(records.length), 'requests: all of them');
    assert.equal(await page.getByTestId('field-request_canaries').isChecked(), false, 'canaries off: the text as given');
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'workload-prompts');
    const { exitCode, report } = validateArtifact(path);
    assert.equal(exitCode, 0, JSON.stringify(report));

    // What the server received: every prompt of the file, once, byte for byte, and nothing else.
    const truth = (await sim.truth()).records.filter(
      (record) => record.api === 'chat' && record.received?.[0]?.content !== WARMUP_PROMPT,
    );
    assert.equal(truth.length, records.length);
    const received = truth.map((record) => JSON.stringify(record.received)).sort();
    const expected = records.map((record) => JSON.stringify([{ role: 'user', content: record.prompt }])).sort();
    assert.deepEqual(received, expected);
    const asked = new Map(records.map((record) => [record.prompt, record.output_tokens]));
    for (const record of truth) {
      assert.equal(record.max_tokens, asked.get(record.received[0].content), 'max_tokens is the record\'s');
    }

    // The artifact: which file, how it was sent, each row's record; never a prompt.
    assert.equal(artifact.completed, records.length, JSON.stringify(artifact.failures));
    assert.equal(artifact.workload.source, 'file');
    assert.equal(artifact.workload.endpoint, 'chat');
    assert.equal(artifact.workload.file.format, 'prompt_columns');
    assert.equal(artifact.workload.file.name, 'prompts.jsonl');
    assert.equal(artifact.workload.file.sha256, sha256(PROMPTS));
    assert.equal(artifact.workload.sending.requests, records.length);
    assert.equal(artifact.workload.sending.marker_lines, false);
    assert.deepEqual(
      artifact.request_timings.map((row) => row.workload.record).sort((a, b) => a - b),
      records.map((_, index) => index),
    );
    const text = JSON.stringify(artifact);
    for (const record of records) assert.ok(!text.includes(record.prompt), 'no prompt in the artifact');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a trace replays at its timestamps over the completions API, its shared blocks hitting the cache', async () => {
  const sim = await startSim(['--seed', '5', '--truth-prompts']);
  try {
    const records = jsonLines(TRACE);
    const speed = 4;
    const { page, errors, summary } = await withWorkload(sim, TRACE, {
      endpoint: 'completions',
      trace_speed: String(speed),
      concurrency: '16',
    });
    assert.equal(await summary.getAttribute('data-state'), 'ready');
    assert.match(await summary.textContent(), /Mooncake trace/);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'workload-trace');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed, records.length, JSON.stringify(artifact.failures));
    assert.equal(artifact.workload.endpoint, 'completions');
    assert.equal(artifact.workload.file.format, 'mooncake_trace');
    assert.equal(artifact.workload.file.timed, true);
    assert.equal(artifact.workload.sending.trace_speed, speed);

    // Each request was due at its timestamp over the speed, and went out within the lag shown.
    const first = records[0].timestamp;
    for (const row of artifact.request_timings) {
      const record = records[row.workload.record];
      assert.ok(Math.abs(row.scheduled_ms - (record.timestamp - first) / speed) < 1e-6, `record ${row.workload.record}`);
      assert.ok(row.dispatch_lag_ms >= 0 && row.dispatch_lag_ms < 250, `lag ${row.dispatch_lag_ms}`);
    }

    // The server got prompt strings of the trace's sizes; records sharing leading hash ids
    // share those bytes, and the simulator's prefix cache saw it.
    const truth = (await sim.truth()).records.filter(
      (record) => record.api === 'completions' && record.received !== WARMUP_PROMPT,
    );
    assert.equal(truth.length, records.length);
    for (const record of truth) assert.equal(typeof record.received, 'string');
    // Each record has its own request: a prompt of input_length × 3 characters with
    // output_length as max_tokens (two records may share a length; each takes one).
    const unmatched = [...truth];
    const sentFor = records.map((record) => {
      const at = unmatched.findIndex(
        (sent) => sent.received.length === record.input_length * 3 && sent.max_tokens === record.output_length,
      );
      assert.ok(at >= 0, `a request of ${record.input_length * 3} characters and max_tokens ${record.output_length}`);
      return unmatched.splice(at, 1)[0];
    });
    const block = 512 * 3;
    const firstId = records[0].hash_ids[0];
    const sharing = records.flatMap((record, index) => (record.hash_ids[0] === firstId ? [sentFor[index]] : []));
    assert.ok(sharing.length > 1);
    const prefixes = new Set(sharing.map((sent) => sent.received.slice(0, block)));
    assert.equal(prefixes.size, 1, 'records that share their first hash id share its bytes');
    const other = records.findIndex((record) => record.hash_ids[0] !== firstId);
    assert.notEqual(sentFor[other].received.slice(0, block), sharing[0].received.slice(0, block));
    assert.ok(truth.some((record) => record.cached_tokens > 0), 'the shared blocks hit the prefix cache');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('conversations play as sessions: live history, their delays, their header, concurrency counting sessions', async () => {
  const sim = await startSim(['--seed', '7', '--truth-prompts']);
  try {
    const sessions = jsonLines(CONVERSATIONS);
    const turns = sessions.reduce((sum, session) => sum + session.turns.length, 0);
    const thinkMs = 300;
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      thinking_mode: 'disabled',
      concurrency: '3',
      session_header: 'X-Session-ID',
      think_time_ms: String(thinkMs),
    });
    // Dropped on the form, as a person drags it from their file manager.
    const drop = await page.evaluateHandle(
      ({ text, name }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], name, { type: 'application/jsonl' }));
        return transfer;
      },
      { text: readFileSync(CONVERSATIONS, 'utf8'), name: 'conversations.jsonl' },
    );
    await page.getByTestId('run-form').dispatchEvent('dragover', { dataTransfer: drop });
    await page.getByTestId('run-form').dispatchEvent('drop', { dataTransfer: drop });
    const summary = page.getByTestId('workload-summary');
    await page.waitForFunction(
      () => ['ready', 'refused'].includes(document.querySelector('[data-testid=workload-summary]')?.dataset.state),
    );
    assert.equal(await summary.getAttribute('data-state'), 'ready', await summary.textContent());
    assert.match(await summary.textContent(), /8 sessions/);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 180_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { path, artifact } = await downloadArtifact(page, 'workload-sessions');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed, turns, JSON.stringify(artifact.failures));

    // What the server received, per session (its header names it), in the order it arrived.
    const truth = (await sim.truth()).records.filter(
      (record) => record.api === 'chat' && record.received?.[0]?.content !== WARMUP_PROMPT,
    );
    assert.equal(truth.length, turns);
    const bySession = new Map();
    for (const record of truth) {
      const id = record.client_headers['x-session-id'];
      assert.ok(id, 'every turn carries the session header');
      if (!bySession.has(id)) bySession.set(id, []);
      bySession.get(id).push(record);
    }
    assert.equal(bySession.size, sessions.length);
    for (const session of sessions) {
      const sent = bySession.get(session.session_id);
      assert.equal(sent.length, session.turns.length, session.session_id);
      sent.sort((a, b) => a.times.received.monotonic_ms - b.times.received.monotonic_ms);
      // Turn k carries every earlier turn's text and the server's own reply to it.
      let history = [];
      session.turns.forEach((turn, k) => {
        const expected = [...history, { role: 'user', content: turn.text }];
        assert.deepEqual(sent[k].received, expected, `${session.session_id} turn ${k}`);
        assert.equal(sent[k].max_tokens, turn.output_length);
        assert.ok(sent[k].content.length > 0, 'a reply to carry');
        history = [...expected, { role: 'assistant', content: sent[k].content }];
        if (k === 0) return;
        // It went out no earlier than its delay (or the think time) after the reply before it
        // ended, on the simulator's one clock; and not seconds later.
        const wait = sent[k].times.received.monotonic_ms - sent[k - 1].times.last_byte_sent.monotonic_ms;
        const due = turn.delay ?? thinkMs;
        assert.ok(wait >= due - 1, `${session.session_id} turn ${k}: ${wait} ms after the reply, due ${due}`);
        assert.ok(wait < due + 2000, `${session.session_id} turn ${k}: ${wait} ms after the reply, due ${due}`);
      });
    }
    // Concurrency counts sessions: at most 3 were under way at any moment.
    const spans = [...bySession.values()].map((sent) => [
      Math.min(...sent.map((r) => r.times.received.monotonic_ms)),
      Math.max(...sent.map((r) => r.times.last_byte_sent.monotonic_ms)),
    ]);
    const most = Math.max(...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length));
    assert.ok(most <= 3, `${most} sessions at once`);
    assert.ok(most >= 2, 'sessions overlapped');

    // Rows name their session and turn; the artifact holds no prompt and no reply.
    const positions = artifact.request_timings.map((row) => `${row.workload.session}/${row.workload.turn}`).sort();
    const planned = sessions.flatMap((session, s) => session.turns.map((_, t) => `${s}/${t}`)).sort();
    assert.deepEqual(positions, planned);
    const text = JSON.stringify(artifact);
    for (const session of sessions) for (const turn of session.turns) assert.ok(!text.includes(turn.text));
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a broken workload file is refused with the line to fix, and Run sends nothing', async () => {
  const sim = await startSim(['--seed', '1', '--truth-prompts']);
  try {
    mkdirSync('test-results', { recursive: true });
    const broken = 'test-results/broken-workload.json';
    writeFileSync(broken, '[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]},\n {"conversations": [}\n]');
    const { page, summary } = await withWorkload(sim, broken);
    assert.equal(await summary.getAttribute('data-state'), 'refused');
    assert.match(await summary.textContent(), /line 2/);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 60_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'error');
    assert.match(await page.getByTestId('status').textContent(), /clear the workload/);
    assert.equal((await sim.truth()).records.length, 0, 'nothing was sent');
    // Clearing it brings the synthetic prompts back.
    await page.getByTestId('workload-clear').click();
    assert.equal(await summary.getAttribute('data-state'), 'none');
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a file larger than a run is read off the page with a progress bar; a shuffle sends what it draws', async () => {
  const sim = await startSim(['--seed', '4', '--truth-prompts']);
  try {
    // 12,000 prompts of about 7 KB (over 80 MB): more sessions than a run sends (10,000), and
    // long enough to read that the page reports progress on the way.
    mkdirSync('test-results', { recursive: true });
    const big = 'test-results/big-prompts.jsonl';
    const filler = 'lorem ipsum dolor sit amet '.repeat(260);
    const prompts = Array.from({ length: 12_000 }, (_, i) => `prompt ${i}: ${filler}`);
    writeFileSync(big, prompts.map((prompt) => JSON.stringify({ prompt, output_tokens: 2 })).join('\n'));
    const size = statSync(big).size;
    const sendSix = async (settings) => {
      await sim.reset();
      const { page, errors } = await env.open({ base_url: sim.baseUrls[0], concurrency: '3', thinking_mode: 'disabled', ...settings });
      // Every state and progress value the picker shows, as it shows them.
      await page.evaluate(() => {
        window.seen = [];
        new MutationObserver(() => {
          const summary = document.querySelector('[data-testid=workload-summary]');
          const bar = document.querySelector('[data-testid=workload-progress]');
          window.seen.push({ state: summary?.dataset.state, value: Number(bar?.getAttribute('value') ?? -1), max: Number(bar?.getAttribute('max') ?? -1) });
        }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
      });
      await page.getByTestId('workload-file').setInputFiles(big);
      await page.waitForFunction(() => document.querySelector('[data-testid=workload-summary]')?.dataset.state === 'ready', null, { timeout: 120_000 });
      const summary = await page.getByTestId('workload-summary').textContent();
      assert.match(summary, /12,000 records/);
      const seen = await page.evaluate(() => window.seen);
      assert.ok(seen.some((entry) => entry.state === 'loading' && entry.max === size), 'a progress bar of the file\'s size');
      assert.ok(seen.some((entry) => entry.state === 'loading' && entry.value > 0 && entry.value < entry.max), JSON.stringify(seen.slice(0, 20)));
      await page.getByTestId('field-requests').fill('6');
      await page.getByTestId('run').click();
      await waitForRunEnd(page, 120_000);
      assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
      const { artifact } = await downloadArtifact(page, `workload-big-${settings.workload_order ?? 'file'}`);
      assert.equal(artifact.workload.file.usable_sessions, 12_000);
      const truth = (await sim.truth()).records.filter(
        (record) => record.api === 'chat' && record.received?.[0]?.content !== WARMUP_PROMPT,
      );
      assert.deepEqual(errors, []);
      await page.close();
      return {
        received: truth.map((record) => record.received[0].content).sort(),
        records: artifact.request_timings.map((row) => row.workload.record).sort((a, b) => a - b),
      };
    };
    const inOrder = await sendSix({});
    assert.deepEqual(inOrder.records, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual(inOrder.received, prompts.slice(0, 6).sort());
    // Shuffled: the records Python's random.Random(5).shuffle puts first among all 12,000
    // (strobe keeps only the 10,000 a run could send, read again for the order).
    const drawn = JSON.parse(
      execFileSync('python3', ['-c', 'import random; x = list(range(12000)); random.Random(5).shuffle(x); print(x[:6])']).toString(),
    );
    const shuffled = await sendSix({ workload_order: 'shuffle', workload_seed: '5' });
    assert.deepEqual(shuffled.records, [...drawn].sort((a, b) => a - b));
    assert.deepEqual(shuffled.received, drawn.map((index) => prompts[index]).sort());
  } finally {
    await sim.stop();
  }
});

test('a link\'s workload_url and the sample buttons are fetched and read; a missing one says so', async () => {
  const ready = (page) =>
    page.waitForFunction(() => ['ready', 'refused'].includes(document.querySelector('[data-testid=workload-summary]')?.dataset.state));
  const linked = `${env.site.url}public/samples/prompts.jsonl`;
  const { page, errors } = await env.open({ workload_url: linked });
  await ready(page);
  const summary = page.getByTestId('workload-summary');
  assert.equal(await summary.getAttribute('data-state'), 'ready');
  assert.match(await summary.textContent(), new RegExp(`^prompts \\(JSON\\): ${jsonLines(PROMPTS).length} records`));
  await page.getByTestId('workload-sample-trace').click();
  await page.waitForFunction(() => /Mooncake/.test(document.querySelector('[data-testid=workload-summary]')?.textContent));
  assert.equal(await summary.getAttribute('data-state'), 'ready');
  assert.deepEqual(errors, []);
  await page.close();

  const { page: missing } = await env.open({ workload_url: `${env.site.url}public/samples/nothing-here.jsonl` });
  await ready(missing);
  const refused = missing.getByTestId('workload-summary');
  assert.equal(await refused.getAttribute('data-state'), 'refused');
  assert.match(await refused.textContent(), /answered HTTP 404: check the address/);
  await missing.close();
});
