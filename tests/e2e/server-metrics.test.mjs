// End-to-end: the server's own view. With server_metrics=auto the page scrapes strobe-sim's
// /metrics beside the run (a baseline before it, then every interval, a last one after it);
// the artifact's server_metrics block holds one sample per answered scrape, each with the
// values the simulator says it answered, on the run's clock within a few milliseconds of the
// simulator's receipt, and the results say and chart what the server saw. A server without
// metrics (nothing listening, or a 404), or one whose /metrics a page may not read (no CORS on
// it while /v1 has it), leaves the run whole, with a note that says why and what to do. The
// endpoint check tries the metrics URL first and says what it found (`metrics-check`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserAndSite, downloadArtifact, waitForRunEnd } from './page.mjs';
import { startSim } from './sim.mjs';
import { validateArtifact } from './artifact-tools.mjs';

const env = browserAndSite();

async function run(settings, name, inspect = null) {
  const { page, errors } = await env.open(settings);
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 120_000);
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
  const downloaded = await downloadArtifact(page, name);
  if (inspect) await inspect(page, downloaded.artifact);
  await page.close();
  return { ...downloaded, errors };
}

test('the page scrapes /metrics beside the run, each sample the state the server answered', async () => {
  const sim = await startSim(['--seed', '41']);
  try {
    const { path, artifact, errors } = await run(
      {
        base_url: sim.baseUrls[0],
        requests: '24',
        concurrency: '4',
        context_tokens: '512',
        max_tokens: '48',
        server_metrics: 'auto',
        server_metrics_interval_ms: '200',
      },
      'server-metrics',
      async (page, artifact) => {
        // The results say what the server saw, from the block's summary, and chart it on the
        // run's clock under the timeline.
        const { gauges } = artifact.server_metrics.summary;
        const line = await page.getByTestId('server-line').textContent();
        assert.match(line, /^server \(vllm\): peak queue \d+, peak running \d+, KV cache [\d.]+ % at peak/);
        assert.match(line, new RegExp(`peak queue ${gauges.waiting.max}, peak running ${gauges.running.max},`));
        assert.match(line, /client TTFT − server TTFT (p50|mean) -?[\d.]+ ms/);
        await page.getByTestId('chart-server').locator('canvas').first().waitFor();
        const check = page.getByTestId('metrics-check');
        assert.equal(await check.getAttribute('data-found'), 'true');
        assert.match(
          await check.textContent(),
          new RegExp(`^Server metrics: ${sim.origin}/metrics answers with \\d+ metrics in vLLM's names; each run scrapes it every 0.2 s`),
        );
      },
    );
    assert.equal(artifact.completed, 24, JSON.stringify(artifact.failures));
    assert.equal(validateArtifact(path).exitCode, 0);
    const block = artifact.server_metrics;
    assert.ok(block, 'the artifact has a server_metrics block');
    assert.equal(block.source, `${sim.origin}/metrics`);
    assert.equal(block.interval_ms, 200);
    assert.equal(block.family, 'vllm');
    assert.ok(block.samples.length >= 3, `${block.samples.length} samples`);
    const times = block.samples.map((sample) => sample.t_ms);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'samples in time order');
    assert.ok(times[0] < 0, 'a baseline before the measured run');
    const lastEnd = Math.max(...artifact.request_timings.map((row) => row.started_at_ms + row.e2e_ms));
    assert.ok(times.at(-1) >= lastEnd - 5, `a last scrape after the last request (${times.at(-1)} vs ${lastEnd})`);
    assert.ok(block.summary, 'a summary over the measured window');
    // Set beside the client's own figures of the same file.
    const beside = block.summary.beside_client;
    assert.equal(beside.ttft.client_p50_ms, artifact.metrics.ttft_p50_ms);
    assert.ok(Math.abs(beside.ttft.mean_gap_ms - (beside.ttft.client_mean_ms - beside.ttft.server_mean_ms)) < 1e-9);

    // Each sample is what the simulator answered to one of its scrapes, sent from the page
    // on the run's clock a little before the simulator read it.
    const answered = (await sim.truth()).scrapes.filter((scrape) => scrape.endpoint === 'metrics' && scrape.status === 200);
    // The first scrape is the endpoint check's, before the run's baseline; it is no sample.
    const [checked, ...scrapes] = answered;
    const startUnixMs = artifact.started_at_unix_ns / 1e6;
    assert.ok(checked.received.unix_ns / 1e6 - startUnixMs < times[0], "the check's scrape came before the baseline");
    assert.equal(scrapes.length, block.samples.length, 'one sample per answered scrape of the run');
    block.samples.forEach((sample, i) => {
      const truth = scrapes[i].metrics;
      assert.equal(sample.values['vllm:generation_tokens_total'], truth.generation_tokens, `sample ${i}`);
      assert.equal(sample.values['vllm:prompt_tokens_total'], truth.prompt_tokens, `sample ${i}`);
      assert.equal(sample.values['vllm:num_requests_running'], truth.num_requests_running, `sample ${i}`);
      const receivedMs = scrapes[i].received.unix_ns / 1e6 - startUnixMs;
      const lead = receivedMs - sample.t_ms;
      assert.ok(lead > -5 && lead < 100, `sample ${i}: sent at ${sample.t_ms} ms, received at ${receivedMs} ms`);
    });
    // The server generated every token the rows counted, and the last sample saw them all.
    const generated = artifact.request_timings.reduce((sum, row) => sum + row.output_tokens, 0);
    assert.ok(block.samples.at(-1).values['vllm:generation_tokens_total'] >= generated);
    assert.deepEqual(errors, []);
  } finally {
    await sim.stop();
  }
});

test('a server without metrics leaves the run whole, with a note that says why', async () => {
  const sim = await startSim(['--seed', '42']);
  try {
    const { path, artifact } = await run(
      {
        base_url: sim.baseUrls[0],
        requests: '8',
        concurrency: '2',
        context_tokens: '256',
        max_tokens: '16',
        // Nothing listens on port 9 of this machine.
        server_metrics: 'http://127.0.0.1:9/metrics',
        server_metrics_interval_ms: '100',
      },
      'server-metrics-absent',
      async (page) => {
        const check = page.getByTestId('metrics-check');
        assert.equal(await check.getAttribute('data-found'), 'false');
        assert.match(await check.textContent(), /^Server metrics: http:\/\/127\.0\.0\.1:9\/metrics: no answer the page could read: the server is down/);
      },
    );
    assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
    assert.equal(validateArtifact(path).exitCode, 0);
    const block = artifact.server_metrics;
    assert.deepEqual(block.samples, []);
    // The endpoint check found nothing there, so the run asked no more: one note says why.
    assert.equal(block.notes.length, 1, JSON.stringify(block.notes));
    assert.match(block.notes[0], /^not scraped: the endpoint check before the run found no answer the page could read: the server is down.*; the run went on without the server's view$/);
    assert.equal((await sim.truth()).scrapes.length, 0, 'nothing was asked of the simulator');
  } finally {
    await sim.stop();
  }
});

test('a /metrics the page may not read (no CORS on it, while /v1 has it) leaves the run whole and says how to let the page in', async () => {
  const sim = await startSim(['--seed', '43', '--metrics-cors', 'off']);
  try {
    const { path, artifact, errors } = await run(
      {
        base_url: sim.baseUrls[0],
        requests: '16',
        concurrency: '2',
        context_tokens: '256',
        max_tokens: '32',
        server_metrics: 'auto',
        server_metrics_interval_ms: '100',
      },
      'server-metrics-cors',
      async (page) => {
        const notes = await page.getByTestId('server-notes').locator('li').allTextContents();
        assert.ok(notes.some((note) => /does not let this page's origin read \/metrics \(CORS\)/.test(note)), notes.join('\n'));
        assert.match(await page.getByTestId('server-line').textContent(), /^server \(unknown\): no sample fell in the measured window/);
        // The endpoint check said so before the run: /models answered, /metrics could not be read.
        assert.match(
          await page.getByTestId('metrics-check').textContent(),
          /though the same server answered the run's requests: it does not let this page's origin read \/metrics \(CORS\).*Runs go on without the server's view\.$/,
        );
      },
    );
    assert.equal(artifact.completed, 16, JSON.stringify(artifact.failures));
    assert.equal(validateArtifact(path).exitCode, 0);
    const block = artifact.server_metrics;
    assert.equal(block.source, `${sim.origin}/metrics`);
    assert.deepEqual(block.samples, []);
    assert.equal(block.summary, undefined);
    // The same server answered the check's /models: not down, so CORS, and what to change.
    assert.equal(block.notes.length, 1, JSON.stringify(block.notes));
    const [blocked] = block.notes;
    assert.match(blocked, /^not scraped: the endpoint check before the run found no answer the page could read, though the same server answered the run's requests/);
    assert.match(blocked, /send Access-Control-Allow-Origin on \/metrics as it does on \/v1/);
    assert.match(blocked, /or set server_metrics to off; the run went on without the server's view$/);
    // The server answered the endpoint check's scrape; the browser kept the answer from the
    // page, and the run did not ask again.
    const scrapes = (await sim.truth()).scrapes.filter((scrape) => scrape.endpoint === 'metrics');
    assert.equal(scrapes.length, 1, JSON.stringify(scrapes.map((scrape) => scrape.status)));
    assert.equal(scrapes[0].status, 200);
    // The browser reports each blocked read itself; nothing else went wrong on the page.
    assert.deepEqual(errors.filter((error) => !/CORS|Failed to fetch|ERR_FAILED/.test(error)), []);
  } finally {
    await sim.stop();
  }
});

test('a server that answers 404 on /metrics leaves the run whole, with each engine\'s flag', async () => {
  const sim = await startSim(['--seed', '44']);
  try {
    const { path, artifact, errors } = await run(
      {
        base_url: sim.baseUrls[0],
        requests: '12',
        concurrency: '2',
        context_tokens: '256',
        max_tokens: '32',
        // strobe-sim answers 404, with CORS, on a path it does not serve.
        server_metrics: `${sim.origin}/no-metrics-here`,
        server_metrics_interval_ms: '100',
      },
      'server-metrics-404',
      async (page) => {
        const notes = await page.getByTestId('server-notes').locator('li').allTextContents();
        assert.ok(notes.some((note) => /^not scraped: .*HTTP 404: this server has no \/metrics here/.test(note)), notes.join('\n'));
        assert.match(
          await page.getByTestId('metrics-check').textContent(),
          new RegExp(`^Server metrics: ${sim.origin}/no-metrics-here: HTTP 404: this server has no /metrics here`),
        );
      },
    );
    assert.equal(artifact.completed, 12, JSON.stringify(artifact.failures));
    assert.equal(validateArtifact(path).exitCode, 0);
    const block = artifact.server_metrics;
    assert.deepEqual(block.samples, []);
    // The endpoint check's 404 does not mend by itself: the run sent no scrape, and its one
    // note says why and gives each engine's flag.
    assert.equal(block.notes.length, 1, JSON.stringify(block.notes));
    assert.match(block.notes[0], /^not scraped: the endpoint check before the run found HTTP 404: this server has no \/metrics here; vLLM serves it by default, SGLang needs --enable-metrics, llama-server --metrics/);
    assert.equal((await sim.truth()).scrapes.length, 0, 'no scrape reached the metrics route');
    // The browser's console has the check's one 404, no more.
    assert.equal(errors.filter((error) => /404/.test(error)).length, 1, errors.join('\n'));
    assert.deepEqual(errors.filter((error) => !/404/.test(error)), []);
  } finally {
    await sim.stop();
  }
});
