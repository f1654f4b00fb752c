// End-to-end: past six connections on a real server, the two ways docs/operate/hosting.md
// describes. Loopback aliases: strobe-sim listening on 0.0.0.0, the pool filled with 127.0.0.2,
// 127.0.0.3 by one click, carries 16 streams at once. HTTP/2: Debian's nginx with a self-signed
// certificate and docs/operate/hosting/nginx-h2-proxy.conf in front of strobe-sim carries 32
// streams over one origin (Chromium trusts the certificate for this test only), with h2 seen, no
// browser queueing suspected, and every row within the usual error of the truth log; the same
// proxy compressing the event stream, which then arrives in one piece, is caught, every row
// flagged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { browserAndSite, downloadArtifact, openApp, waitForRunEnd } from './page.mjs';
import { launchBrowser } from './browser.mjs';
import { startSim, unusedPort } from './sim.mjs';
import { artifactErrors, serverConcurrency } from './truth.mjs';
import { validateArtifact } from './artifact-tools.mjs';
import { nginxDir, startNginx } from './nginx.mjs';
import { judgeOnAQuietHost, timingBar } from './quiet-host.mjs';

const env = browserAndSite();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

test('loopback aliases fill the pool in one click and carry 16 streams at once', async () => {
  const sim = await startSim(['--host', '0.0.0.0', '--seed', '61', '--max-num-seqs', '32', '--decode-interval-ms', '40']);
  try {
    const port = new URL(sim.baseUrls[0]).port;
    const base = `http://127.0.0.1:${port}/v1`;
    const { page, errors } = await env.open({
      base_url: base,
      requests: '32',
      concurrency: '16',
      context_tokens: '512',
      max_tokens: '32',
    });
    await page.getByTestId('advanced-endpoint').locator('summary').click();
    await page.getByTestId('pool-aliases').click();
    assert.equal(
      await page.getByTestId('field-pool').inputValue(),
      `http://127.0.0.2:${port}/v1 http://127.0.0.3:${port}/v1`,
    );
    assert.equal(await page.getByTestId('connection-limit-warning').count(), 0);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    const { path, artifact } = await downloadArtifact(page, 'aliases-c16');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed, 32, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.transport.endpoints, 3);
    assert.equal(artifact.client.transport.connection_limit_suspected, false);
    // Measured requests carry a canary marker; the warm-up's do not.
    const measured = (await sim.truth()).records.filter((record) => record.marker);
    assert.equal(measured.length, 32);
    assert.equal(serverConcurrency(measured), 16, 'the server streamed 16 at once');
    assert.deepEqual(errors, []);
    await page.close();

    // A base URL that is not on this machine gets a message, not a pool.
    const { page: remote } = await env.open({ base_url: 'http://gpu-box:8000/v1', concurrency: '16' });
    await remote.getByTestId('advanced-endpoint').locator('summary').click();
    await remote.getByTestId('pool-aliases').click();
    assert.match(await remote.getByTestId('pool-aliases-error').textContent(), /127\.0\.0\.1 or localhost/);
    assert.equal(await remote.getByTestId('field-pool').inputValue(), '');
    await remote.close();
  } finally {
    await sim.stop();
  }
});

/**
 * nginx with docs/operate/hosting/nginx-h2-proxy.conf (a fresh self-signed certificate) in front of
 * `upstream`; `buffering` makes it buffer and compress the event stream, as a careless proxy
 * would.
 */
async function startProxy(upstream, { buffering = false } = {}) {
  const name = `h2-proxy${buffering ? '-buffering' : ''}`;
  const dir = nginxDir(name);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', `${dir}/key.pem`, '-out', `${dir}/cert.pem`,
  ], { stdio: 'ignore' });
  const port = await unusedPort();
  let server = readFileSync('docs/operate/hosting/nginx-h2-proxy.conf', 'utf8')
    .replace('listen 127.0.0.1:8443', `listen 127.0.0.1:${port}`)
    .replaceAll('/etc/strobe-proxy', dir)
    .replace('proxy_pass http://127.0.0.1:8000;', `proxy_pass ${upstream};`);
  // A careless proxy buffers and compresses the event stream, deaf to strobe-sim's
  // `X-Accel-Buffering: no`: each stream then arrives in one piece.
  if (buffering) {
    server = server.replace(
      'proxy_buffering off;',
      'proxy_buffering on;\n        proxy_ignore_headers X-Accel-Buffering;\n' +
        '        gzip on;\n        gzip_types text/event-stream;\n        gzip_min_length 0;',
    );
  }
  const nginx = await startNginx(name, server);
  return { base: `https://127.0.0.1:${port}/v1`, stop: nginx.stop };
}

/**
 * Opens the page in `browser` with `settings`, presses Run and waits for its end; `measure`
 * (quiet-host.mjs) is called with the span from Run to the end.
 */
async function runIn(browser, settings, measure = (start) => start()) {
  const { page, errors } = await openApp(browser, env.site.url, settings);
  await measure(async () => {
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
  });
  const status = page.getByTestId('status');
  const problem = `${await status.textContent()} ${await page.locator('.error-box').allTextContents()}`;
  assert.equal(await status.getAttribute('data-state'), 'finished', problem);
  return { page, errors };
}

test('HTTP/2 through nginx carries 32 streams over one origin within the usual error', async (t) => {
  // The error against the truth is a timing bar, judged on a quiet host (quiet-host.mjs).
  await judgeOnAQuietHost(t, h2Run);
});

/** One run of 32 streams through the HTTP/2 proxy, with every check. */
async function h2Run({ measure }) {
  const sim = await startSim(['--seed', '62', '--max-num-seqs', '64', '--decode-interval-ms', '40']);
  const proxy = await startProxy(new URL(sim.baseUrls[0]).origin);
  const browser = await launchBrowser(['--ignore-certificate-errors']);
  try {
    const { page, errors } = await runIn(browser, {
      base_url: proxy.base,
      requests: '64',
      concurrency: '32',
      context_tokens: '512',
      max_tokens: '32',
      request_canaries: 'true',
    }, measure);
    const { path, artifact } = await downloadArtifact(page, 'h2-proxy-c32');
    assert.equal(validateArtifact(path).exitCode, 0);
    assert.equal(artifact.completed, 64, JSON.stringify(artifact.failures));
    const { transport } = artifact.client;
    assert.deepEqual(transport.http_protocols_seen, ['h2']);
    assert.equal(transport.connection_limit_suspected, false);
    assert.equal(transport.endpoints, 1);
    const notH2 = artifact.request_timings.filter((row) => row.http_protocol !== 'h2');
    assert.deepEqual(
      notH2.map((row) => ({ index: row.request_index, protocol: row.http_protocol })),
      [],
      'every row names h2',
    );
    assert.equal(artifact.client.sse.buffered_streams, undefined, 'an unbuffered proxy streams');
    const { records } = await sim.truth();
    const measured = records.filter((record) => record.marker);
    assert.equal(measured.length, 64);
    assert.equal(serverConcurrency(measured), 32, 'the server streamed 32 at once');
    // The proxy adds its hop to every moment; the error stays small all the same.
    const ttft = artifactErrors(artifact, records).map((row) => row.ttft);
    console.log(`# TTFT − server first content byte (ms): p50 ${median(ttft).toFixed(2)}, max ${Math.max(...ttft).toFixed(2)}`);
    timingBar(median(ttft) < 5, `p50 ${median(ttft)} ms`);
    timingBar(ttft.every((error) => error > -1 && error < 50), JSON.stringify(ttft));
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await browser.close();
    await proxy.stop();
    await sim.stop();
  }
}

test('a proxy that holds streams back is caught: each arrives in one piece, flagged with the fix', async () => {
  const sim = await startSim(['--seed', '63', '--decode-interval-ms', '10']);
  const proxy = await startProxy(new URL(sim.baseUrls[0]).origin, { buffering: true });
  const browser = await launchBrowser(['--ignore-certificate-errors']);
  try {
    const { page, errors } = await runIn(browser, {
      base_url: proxy.base,
      requests: '4',
      concurrency: '2',
      context_tokens: '128',
      max_tokens: '24',
    });
    const { artifact } = await downloadArtifact(page, 'buffering-proxy');
    assert.equal(artifact.completed, 4, JSON.stringify(artifact.failures));
    assert.ok(artifact.request_timings.every((row) => row.buffered_stream === true), 'every row is flagged');
    assert.equal(artifact.client.sse.buffered_streams, 4);
    assert.match(await page.getByTestId('client-notes').first().textContent(), /4 requests received many events in one or two network reads.*proxy_buffering off/);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await browser.close();
    await proxy.stop();
    await sim.stop();
  }
});
