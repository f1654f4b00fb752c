// End-to-end: a link to a run. A run against strobe-sim behind an API key is shared with Copy
// link: the link is on the clipboard, carries the run deflated in its fragment (the key is
// nowhere in it), and opened in another browser it shows the same run read-only under a
// banner. A browser that refuses the clipboard shows the link in a field; a run too big for a
// link says so and saves the report instead; a hostile fragment gets a message, and nothing
// else on the page is lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { browserAndSite, openApp, waitForRunEnd } from './page.mjs';
import { collectPageErrors, launchBrowser } from './browser.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const KEY = 'sk-link-never-in-the-fragment-5c2e';
const REFERENCE = 'tests/fixtures/reference-artifact.json';

/** The single-run view's "Summary as Markdown": every headline number of the selected run. */
async function summaryMarkdown(page) {
  await page.getByTestId('single-run').waitFor();
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByTestId('single-run').getByTestId('export-markdown').click(),
  ]);
  return readFileSync(await download.path(), 'utf8');
}

/** What a link's fragment carries, decoded as a reader outside strobe would. */
function payloadOf(link) {
  const encoded = link.slice(link.indexOf('#run=') + '#run='.length);
  return JSON.parse(inflateRawSync(Buffer.from(encoded, 'base64url')).toString('utf8'));
}

const fragment = (bytes) => `#run=${deflateRawSync(bytes).toString('base64url')}`;

async function rowCount(page, n) {
  await page.waitForFunction((count) => document.querySelectorAll('[data-testid=library-row]').length === count, n);
}

test('a copied link opens the same run read-only in another browser, without the key', async () => {
  const sim = await startSim(['--seed', '41', '--api-key', KEY]);
  let link;
  let markdown;
  let artifactText;
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '10',
      concurrency: '2',
      context_tokens: '256',
      max_tokens: '16',
    });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(page.url()).origin,
    });
    await page.getByTestId('api-key').fill(KEY);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    markdown = await summaryMarkdown(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download').click()]);
    artifactText = readFileSync(await download.path(), 'utf8');

    await page.getByTestId('single-run').getByTestId('share-link').click();
    const outcome = page.getByTestId('share-outcome');
    await outcome.waitFor();
    assert.equal(await outcome.getAttribute('data-state'), 'copied', await outcome.textContent());
    link = await page.getByTestId('share-link-text').inputValue();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link, 'the link is on the clipboard');
    assert.ok(link.startsWith(`${new URL(page.url()).origin}/#run=`), link);
    assert.ok(link.length <= 32_768, `${link.length} characters`);
    assert.ok(!link.includes(KEY), 'no key in the link');
    assert.ok(!link.includes('base_url='), 'the form settings are not in it');
    const payload = payloadOf(link);
    assert.equal(payload.format, 'strobe-link/1');
    assert.equal(payload.text, artifactText, 'the link carries the artifact the download holds');
    assert.ok(!payload.text.includes(KEY));
    assert.notEqual(JSON.parse(payload.text).base_url, '[operator identity redacted]', 'the endpoint, unless redacted');

    // Redacted, the link carries the artifact as the redacted download writes it.
    await page.getByTestId('redact-link-base-url').check();
    await page.getByTestId('single-run').getByTestId('share-link').click();
    await page.waitForFunction(
      (first) => document.querySelector('[data-testid=share-link-text]')?.value !== first,
      link,
    );
    const redacted = payloadOf(await page.getByTestId('share-link-text').inputValue());
    assert.equal(JSON.parse(redacted.text).base_url, '[operator identity redacted]');
    const [redactedDownload] = await Promise.all([
      page.waitForEvent('download'),
      (async () => {
        await page.getByTestId('redact-base-url').check();
        await page.getByTestId('download').click();
      })(),
    ]);
    assert.equal(redacted.text, readFileSync(await redactedDownload.path(), 'utf8'), 'as the redacted download');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }

  // A teammate's browser: another profile, and the simulator is gone.
  const other = await launchBrowser();
  try {
    const page = await other.newPage();
    const errors = collectPageErrors(page);
    await page.goto(link);
    await page.getByTestId('app-ready').waitFor();
    const banner = page.getByTestId('shared-banner');
    await banner.waitFor();
    assert.equal(await banner.getAttribute('data-outcome'), 'opened');
    assert.match(await banner.textContent(), /came from a link/);
    await rowCount(page, 1);
    assert.equal(await summaryMarkdown(page), markdown, 'the same numbers as where it was measured');
    // It is kept like a dropped file, and opening the link again does not add it twice.
    await page.waitForFunction(() => document.querySelector('[data-testid=artifact-kept]')?.dataset.kept === 'true');
    await page.goto('about:blank');
    await page.goto(link);
    await page.getByTestId('shared-banner').waitFor();
    await rowCount(page, 1);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await other.close();
  }
});

test('a refused clipboard shows the link in a field, and a run too big for a link offers the report', async () => {
  const sim = await startSim(['--seed', '42', '--decode-interval-ms', '0', '--max-num-seqs', '64']);
  try {
    const { page, errors } = await env.open({
      base_url: sim.baseUrls[0],
      requests: '400',
      concurrency: '32',
      context_tokens: '256',
      max_tokens: '16',
    });
    // The browser refuses, as one without permission or focus does.
    await page.evaluate(() => {
      navigator.clipboard.writeText = () => Promise.reject(new DOMException('Write permission denied.', 'NotAllowedError'));
    });
    await page.getByTestId('artifact-input').setInputFiles([REFERENCE]);
    await page.getByTestId('single-run').getByTestId('share-link').click();
    const outcome = page.getByTestId('share-outcome');
    await outcome.waitFor();
    assert.equal(await outcome.getAttribute('data-state'), 'in-field');
    assert.match(await outcome.textContent(), /^Not copied: the browser did not let the page copy \(Write permission denied\.\)\. Copy the link from the field below/);
    const field = page.getByTestId('share-link-text');
    assert.ok(await field.isVisible(), 'the link is shown to copy by hand');
    const payload = payloadOf(await field.inputValue());
    assert.equal(payload.text, readFileSync(REFERENCE, 'utf8'));

    // 400 rows do not fit in a link.
    await page.getByTestId('remove-artifact').click();
    await rowCount(page, 0);
    await page.getByTestId('run').click();
    await waitForRunEnd(page, 120_000);
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    await page.getByTestId('single-run').getByTestId('share-link').click();
    const tooBig = page.getByTestId('share-too-big');
    await tooBig.waitFor();
    assert.match(await tooBig.textContent(), /too big for a link: it needs [\d,]+ characters, and a link carries at most 32,768/);
    assert.equal(await page.getByTestId('share-link-text').count(), 0);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('share-save-report').click()]);
    assert.match(download.suggestedFilename(), /^strobe-report-.*\.html$/);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});

test('a hostile fragment gets a message and the kept library stays', async () => {
  const { page, errors } = await env.open();
  await page.getByTestId('artifact-input').setInputFiles([REFERENCE]);
  await rowCount(page, 1);
  await page.waitForFunction(() => document.querySelector('[data-testid=artifact-kept]')?.dataset.kept === 'true');
  const site = new URL(page.url());
  const base = `${site.origin}${site.pathname}`;
  const cases = [
    ['not base64', '#run=not*base64!', /not readable text/],
    ['not deflate', `#run=${Buffer.alloc(64, 0xff).toString('base64url')}`, /cannot be unpacked/],
    ['a deflate bomb', fragment(Buffer.alloc(32 * 1024 * 1024)), /unpacks to more than 1,048,576 bytes/],
    ['not JSON', fragment(Buffer.from('{"format": "strobe-link/1", ')), /not the JSON strobe writes/],
    ['another format', fragment(Buffer.from(JSON.stringify({ format: 'strobe-link/9', name: 'a', text: '{}' }))), /does not read \(it reads strobe-link\/1\)/],
    [
      'no run',
      fragment(Buffer.from(JSON.stringify({ format: 'strobe-link/1', name: 'x.json', text: '{"hello": 1}' }))),
      /holds no run strobe can show/,
    ],
    [
      'a hostile name',
      fragment(
        Buffer.from(
          JSON.stringify({ format: 'strobe-link/1', name: '<img src=x onerror="window.__pwned=1">', text: '[1]' }),
        ),
      ),
      /<img src=x onerror/,
    ],
  ];
  for (const [what, hash, message] of cases) {
    await page.goto('about:blank');
    await page.goto(`${base}${hash}`);
    await page.getByTestId('app-ready').waitFor();
    const banner = page.getByTestId('shared-banner');
    await banner.waitFor();
    assert.equal(await banner.getAttribute('data-outcome'), 'refused', what);
    assert.match(await banner.textContent(), message, what);
    // What was kept is all still there, and nothing ran.
    await rowCount(page, 1);
    assert.equal((await page.getByTestId('artifact-label').textContent()).trim(), 'reference-artifact.json', what);
    assert.equal(await page.locator('.shared-banner img').count(), 0, what);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, what);
  }
  // A fragment that is no link (an anchor) is left alone.
  await page.goto('about:blank');
  await page.goto(`${base}#results`);
  await page.getByTestId('app-ready').waitFor();
  await rowCount(page, 1);
  assert.equal(await page.getByTestId('shared-banner').count(), 0);
  assert.deepEqual(errors, []);
  await page.close();
});
