// End-to-end: the build on real static hosts. Debian's nginx serves dist/ with the server block
// of docs/operate/hosting/nginx.conf and the headers the build wrote (strobe-headers.conf:
// COOP/COEP and a Content-Security-Policy): the page is cross-origin isolated, breaks no rule of
// its policy, and runs. A plain static server that sends no headers at all (as GitHub Pages) gets
// isolation from the build's own service worker after one reload: the page's requests bypass it, a
// dedicated worker's pass it (Chromium's static routing does not cover workers), and the
// artifact and the results say which.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { browserAndSite, downloadArtifact, openApp, waitForRunEnd } from './page.mjs';
import { serveStatic } from './static-server.mjs';
import { startSim, unusedPort } from './sim.mjs';
import { startNginx } from './nginx.mjs';

const env = browserAndSite();
const DIST = resolve(process.env.STROBE_DIST ?? 'dist');

/** nginx with docs/operate/hosting/nginx.conf's server block, serving the build on a free port. */
async function startHost() {
  const port = await unusedPort();
  const server = readFileSync('docs/operate/hosting/nginx.conf', 'utf8')
    .replaceAll('/srv/strobe/dist', DIST)
    .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`);
  const nginx = await startNginx('nginx', server);
  return { url: `http://127.0.0.1:${port}/`, stop: nginx.stop };
}

/** Presses Run with a small plan against `baseUrl` and returns the downloaded artifact. */
async function smallRun(page, baseUrl, name, settings = {}) {
  await page.goto(`${page.url().split('?')[0]}?${new URLSearchParams({
    base_url: baseUrl, requests: '8', concurrency: '2', context_tokens: '128', max_tokens: '16',
    ...settings,
  })}`);
  await page.getByTestId('app-ready').waitFor();
  await page.getByTestId('run').click();
  await waitForRunEnd(page, 60_000);
  assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
  return (await downloadArtifact(page, name)).artifact;
}

test('nginx with the documented block and the build headers serves an isolated page that runs', async () => {
  const headers = readFileSync(`${DIST}/_headers`, 'utf8');
  const include = readFileSync(`${DIST}/strobe-headers.conf`, 'utf8');
  const csp = include.match(/Content-Security-Policy "([^"]+)"/)[1];
  assert.ok(headers.includes(`Content-Security-Policy: ${csp}`), 'both files carry one policy');
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval' 'sha256-[A-Za-z0-9+/=]+'/);

  const nginx = await startHost();
  const sim = await startSim(['--seed', '51']);
  try {
    const response = await fetch(nginx.url);
    assert.equal(response.headers.get('cross-origin-embedder-policy'), 'require-corp');
    assert.equal(response.headers.get('content-security-policy'), csp);
    assert.equal((await fetch(`${nginx.url}${readFileSync(`${DIST}/index.html`, 'utf8').match(/'\.\/(strobe-[0-9a-f]+_bg\.wasm)'/)[1]}`)).headers.get('content-type'), 'application/wasm');

    const { page, errors } = await openApp(env.browser, nginx.url);
    const violations = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    assert.equal(await page.evaluate(() => window.crossOriginIsolated), true);
    const artifact = await smallRun(page, sim.baseUrls[0], 'hosting-nginx');
    assert.equal(artifact.completed, 8, JSON.stringify(artifact.failures));
    assert.equal(artifact.client.cross_origin_isolated, true);
    assert.equal(artifact.client.measurement_thread, 'worker', 'the policy lets the worker start');
    // ECharts draws under the policy too.
    await page.getByTestId('chart-hist-ttft').locator('canvas').first().waitFor();
    assert.deepEqual(violations, []);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
    await nginx.stop();
  }
});

test('a host that sends no headers gets isolation from a service worker, and the artifact says so', async () => {
  const bare = await serveStatic({ root: DIST, isolate: false });
  const sim = await startSim(['--seed', '52']);
  try {
    const page = await env.browser.newPage();
    await page.goto(bare.url);
    // The first load registers the worker and reloads once it controls the page.
    await page.waitForFunction(() => window.crossOriginIsolated === true, null, { timeout: 20_000 });
    await page.getByTestId('app-ready').waitFor();
    assert.equal(await page.evaluate(() => Boolean(navigator.serviceWorker.controller)), true);
    const [worker] = page.context().serviceWorkers();
    assert.ok(worker, 'the isolation service worker runs');
    const otherOrigin = () => worker.evaluate(() => self.otherOriginFetchEvents);

    // Measured on the page: every request to the endpoint went straight to the network.
    const main = await smallRun(page, sim.baseUrls[0], 'hosting-sw-main', { measurement: 'main' });
    assert.equal(main.completed, 8, JSON.stringify(main.failures));
    assert.equal(main.client.cross_origin_isolated, true);
    assert.equal(main.client.isolation_service_worker, true);
    assert.equal(await otherOrigin(), 0, "the page's requests bypass the service worker");
    assert.match(await page.getByTestId('client-notes').first().textContent(), /bypass it by static routing/);

    // Measured in the worker: its requests pass the fetch event, and the results say so.
    const inWorker = await smallRun(page, sim.baseUrls[0], 'hosting-sw-worker');
    assert.equal(inWorker.completed, 8, JSON.stringify(inWorker.failures));
    assert.equal(inWorker.client.measurement_thread, 'worker');
    assert.equal(inWorker.client.isolation_service_worker, true);
    assert.ok((await otherOrigin()) > 0, "Chromium's static routing does not cover a dedicated worker");
    assert.match(await page.getByTestId('client-notes').first().textContent(), /passed its fetch event/);
    await page.close();
  } finally {
    await sim.stop();
    await bare.close();
  }
});
