// A headless Chromium driven over a bare DevTools pipe, for runs whose timing is measured.
//
// Playwright enables DevTools' Network domain on every page and worker it attaches to, and the
// browser then reports every request and every chunk of every response body over the protocol,
// from the very threads strobe measures on. A user's browser has no DevTools attached. Measured
// here (c = 16 through 3 ports, 64 requests, strobe in its worker; median |error| / p95 against
// strobe-sim's truth): through Playwright TTFO 0.5–0.8 / 2.6–6.9 ms and TTFT 0.5–0.6 / 1.4–2.2
// ms; through this pipe 0.3 / 1.2–2.5 and 0.3 / 0.5–0.7; through this pipe with the Network
// domain enabled on the page and its worker, as Playwright does, 0.4–0.5 / 3.0–7.6 and
// 0.5 / 1.2–2.1. So a timing run goes through this driver: it enables only `Runtime` on the
// page (to report uncaught errors and `console.error`), never attaches to workers, and reads
// results with `Runtime.evaluate`. Everything else the tests do (clicks, screenshots, file
// inputs) stays with Playwright (browser.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_FLAGS } from './browser.mjs';

/** How long the app may take to say it is ready after its page is opened. */
const APP_READY_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

/**
 * Launches Chromium (the same binary and flags as browser.mjs, a fresh profile) with
 * `--remote-debugging-pipe`. Returns `{ openApp, close }`.
 */
export async function launchBareBrowser() {
  const profile = mkdtempSync(join(tmpdir(), 'strobe-bare-'));
  const downloads = mkdtempSync(join(tmpdir(), 'strobe-bare-downloads-'));
  const child = spawn(CHROMIUM, [
    '--headless',
    ...CHROMIUM_FLAGS,
    `--user-data-dir=${profile}`,
    '--remote-debugging-pipe',
    'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const protocol = new PipeProtocol(child);
  try {
    await protocol.send('Browser.getVersion');
    await protocol.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: downloads, eventsEnabled: true });
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`Chromium did not start over its DevTools pipe: ${err.message}. Its last words: ${protocol.stderrTail()}`);
  }
  return {
    openApp: (siteUrl, settings = {}) => openApp(protocol, downloads, siteUrl, settings),
    async close() {
      await protocol.send('Browser.close').catch(() => {});
      await protocol.exited(5_000);
      rmSync(profile, { recursive: true, force: true });
      rmSync(downloads, { recursive: true, force: true });
    },
  };
}

/** Commands and events over the pipe: JSON messages, each ended by a NUL byte. */
class PipeProtocol {
  constructor(child) {
    this.child = child;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.stderr = '';
    this.exit = new Promise((resolve) => child.once('exit', resolve));
    child.stdio[2].on('data', (data) => { this.stderr = (this.stderr + data).slice(-2_000); });
    let buffered = '';
    child.stdio[4].on('data', (data) => {
      buffered += data.toString('utf8');
      let end;
      while ((end = buffered.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        this.receive(message);
      }
    });
    this.exit.then(() => {
      for (const { reject, method } of this.pending.values()) reject(new Error(`Chromium exited during ${method}`));
      this.pending.clear();
    });
  }

  receive(message) {
    const waiting = message.id !== undefined ? this.pending.get(message.id) : undefined;
    if (waiting) {
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(`${waiting.method}: ${message.error.message}`));
      else waiting.resolve(message.result);
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  send(method, params = {}, sessionId = undefined) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject, method });
      this.child.stdio[3].write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  /** Calls `listener(message)` for every event until the returned function is called. */
  on(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits up to `timeoutMs` for Chromium to exit, then kills it. */
  async exited(timeoutMs) {
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.exit;
    clearTimeout(timer);
  }

  stderrTail() {
    return this.stderr.trim().split('\n').slice(-3).join(' | ') || '(nothing)';
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A new tab on the app with `settings` in its link, once the app says it is ready. */
async function openApp(protocol, downloads, siteUrl, settings) {
  const { targetId } = await protocol.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await protocol.send('Target.attachToTarget', { targetId, flatten: true });
  const send = (method, params) => protocol.send(method, params, sessionId);
  const errors = [];
  const stopListening = protocol.on((message) => {
    if (message.sessionId !== sessionId) return;
    if (message.method === 'Runtime.exceptionThrown') {
      const details = message.params.exceptionDetails;
      errors.push(`pageerror: ${details.exception?.description ?? details.text}`);
    } else if (message.method === 'Runtime.consoleAPICalled' && message.params.type === 'error') {
      errors.push(`console.error: ${message.params.args.map((arg) => arg.value ?? arg.description ?? '').join(' ')}`);
    }
  });
  await send('Runtime.enable');
  const query = new URLSearchParams(settings).toString();
  await send('Page.navigate', { url: query ? `${siteUrl}?${query}` : siteUrl });

  /** `fn(arg)` evaluated in the page (an async function is awaited); its JSON-able result. */
  const evaluate = async (fn, arg) => {
    const result = await send('Runtime.evaluate', {
      expression: `(${fn})(${JSON.stringify(arg ?? null)})`,
      awaitPromise: true,
      returnByValue: true,
    });
    if (result.exceptionDetails) {
      const details = result.exceptionDetails;
      throw new Error(`in the page: ${details.exception?.description ?? details.text}`);
    }
    return result.result.value;
  };

  const readySince = Date.now();
  for (;;) {
    // The first evaluations may land in the blank page or in a context the navigation tears down.
    const ready = await evaluate(() => Boolean(document.querySelector('[data-testid=app-ready]'))).catch(() => false);
    if (ready) break;
    if (Date.now() - readySince > APP_READY_TIMEOUT_MS) {
      throw new Error(`the app did not say it was ready within ${APP_READY_TIMEOUT_MS / 1000} s; page errors: ${errors.join('; ') || 'none'}`);
    }
    await sleep(POLL_MS);
  }

  return {
    errors,
    evaluate,
    /**
     * Presses Run, waits up to `timeoutMs` for the run to end, presses Download and returns the
     * downloaded artifact. Throws with the status line when the run did not finish.
     */
    async runAndDownload(timeoutMs) {
      await evaluate(() => document.querySelector('[data-testid=run]').click());
      const until = Date.now() + timeoutMs;
      let state;
      for (;;) {
        state = await evaluate(() => document.querySelector('[data-testid=status]')?.dataset.state);
        if (state === 'finished' || state === 'error') break;
        if (Date.now() > until) throw new Error(`the run did not end within ${timeoutMs / 1000} s (state ${state})`);
        await sleep(POLL_MS * 4);
      }
      if (state !== 'finished') {
        const status = await evaluate(() => document.querySelector('[data-testid=status]')?.textContent);
        throw new Error(`the page ended in state ${state}: ${status}`);
      }
      const file = await download(protocol, downloads, () => evaluate(() => document.querySelector('[data-testid=download]').click()));
      return { artifact: JSON.parse(readFileSync(file, 'utf8')), pageErrors: errors };
    },
    async close() {
      stopListening();
      await protocol.send('Target.closeTarget', { targetId }).catch(() => {});
    },
  };
}

/** Runs `start` (which clicks a download link) and returns the path of the finished download. */
async function download(protocol, downloads, start) {
  let stop = () => {};
  let timer;
  const finished = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('no download finished within 30 s')), 30_000);
    let guid = null;
    stop = protocol.on((message) => {
      if (message.method === 'Browser.downloadWillBegin' && guid === null) guid = message.params.guid;
      if (message.method === 'Browser.downloadProgress' && message.params.guid === guid) {
        if (message.params.state === 'completed') resolve(join(downloads, guid));
        if (message.params.state === 'canceled') reject(new Error('the browser cancelled the download'));
      }
    });
  });
  try {
    await start();
    return await finished;
  } finally {
    clearTimeout(timer);
    stop();
  }
}
