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
// page (to report uncaught errors and `console.error`), never attaches to workers (an error
// that stops the measurement worker reaches the page as the run's failure, which
// `runAndDownload` reports), and reads results with `Runtime.evaluate`. Everything else the
// tests do (clicks, screenshots, file inputs) stays with Playwright (browser.mjs).
//
// One page at a time: a download is taken as the next one the browser begins.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_FLAGS } from './browser.mjs';

/** How long Chromium may take to answer its first command. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** How long the app may take to say it is ready after its page is opened. */
const APP_READY_TIMEOUT_MS = 30_000;
/** How long a download may take to finish once its link is clicked. */
const DOWNLOAD_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

/**
 * Launches Chromium (the same binary and flags as browser.mjs, a fresh profile) with
 * `--remote-debugging-pipe`. Returns `{ openApp, run, close }`.
 */
export async function launchBareBrowser() {
  const profileDir = mkdtempSync(join(tmpdir(), 'strobe-bare-'));
  const downloadsDir = mkdtempSync(join(tmpdir(), 'strobe-bare-downloads-'));
  const removeDirs = () => {
    rmSync(profileDir, { recursive: true, force: true });
    rmSync(downloadsDir, { recursive: true, force: true });
  };
  const child = spawn(CHROMIUM, [
    '--headless',
    ...CHROMIUM_FLAGS,
    `--user-data-dir=${profileDir}`,
    '--remote-debugging-pipe',
    'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
  const protocol = new PipeProtocol(child);
  try {
    await withTimeout(protocol.send('Browser.getVersion'), LAUNCH_TIMEOUT_MS, 'no answer to its first command');
    await protocol.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: downloadsDir, eventsEnabled: true });
  } catch (err) {
    child.kill('SIGKILL');
    removeDirs();
    throw new Error(`Chromium (${CHROMIUM}) did not start over its DevTools pipe: ${err.message}. Its last words: ${protocol.stderrTail()}`);
  }
  const browser = {
    openApp: (siteUrl, settings = {}) => openApp(protocol, downloadsDir, siteUrl, settings),
    /**
     * One run: opens the app with `settings` in its link, presses Run, waits up to `timeoutMs`
     * for the end, downloads the artifact and closes the tab. `{ artifact, text, pageErrors }`
     * (`text`: the file exactly as downloaded). `measure`, when given, is called with the span
     * from pressing Run to the download (quiet-host.mjs), after the page has loaded.
     */
    async run(siteUrl, settings, timeoutMs, { measure = (start) => start() } = {}) {
      const page = await browser.openApp(siteUrl, settings);
      try {
        return await measure(() => page.runAndDownload(timeoutMs));
      } finally {
        await page.close();
      }
    },
    async close() {
      await protocol.send('Browser.close').catch(() => {});
      await protocol.exited(5_000);
      removeDirs();
    },
  };
  return browser;
}

/** `promise`, or a rejection saying `what` once `ms` have passed. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Commands and events over the pipe: JSON messages, each ended by a NUL byte. Once Chromium has
 * exited (or could not start), every command waiting and every later one is rejected at once
 * with the reason.
 */
class PipeProtocol {
  constructor(child) {
    this.child = child;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.stderr = '';
    this.closedReason = null;
    this.exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve(`Chromium exited (${signal ?? `code ${code}`})`));
      child.once('error', (err) => resolve(`Chromium could not run: ${err.message}`));
    });
    this.exit.then((reason) => this.close(reason));
    child.stdio[2].on('data', (data) => { this.stderr = (this.stderr + data).slice(-2_000); });
    // A broken pipe is reported by the exit that follows; the listeners keep it from crashing node.
    for (const stream of [child.stdio[3], child.stdio[4]]) stream.on('error', () => {});
    let buffered = Buffer.alloc(0);
    child.stdio[4].on('data', (data) => {
      // Bytes, not text, until a message is whole: a character can be split across two reads.
      buffered = Buffer.concat([buffered, data]);
      let end;
      while ((end = buffered.indexOf(0)) >= 0) {
        const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
        buffered = buffered.subarray(end + 1);
        this.receive(message);
      }
    });
  }

  close(reason) {
    this.closedReason ??= reason;
    for (const { reject, method } of this.pending.values()) reject(new Error(`${method}: ${this.closedReason}`));
    this.pending.clear();
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
    if (this.closedReason) return Promise.reject(new Error(`${method}: ${this.closedReason}`));
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

/**
 * A new tab on the app with `settings` in its link, once the app says it is ready, its kept
 * library emptied first (each tab starts as a first visit).
 */
async function openApp(protocol, downloadsDir, siteUrl, settings) {
  const { targetId } = await protocol.send('Target.createTarget', { url: 'about:blank' });
  const errors = [];
  let stopListening = () => {};
  const closeTab = async () => {
    stopListening();
    await protocol.send('Target.closeTarget', { targetId }).catch(() => {});
  };
  try {
    const { sessionId } = await protocol.send('Target.attachToTarget', { targetId, flatten: true });
    const send = (method, params) => protocol.send(method, params, sessionId);
    stopListening = protocol.on((message) => {
      if (message.sessionId !== sessionId) return;
      if (message.method === 'Runtime.exceptionThrown') {
        const details = message.params.exceptionDetails;
        errors.push(`pageerror: ${details.exception?.description ?? details.text}`);
      } else if (message.method === 'Runtime.consoleAPICalled' && message.params.type === 'error') {
        errors.push(`console.error: ${message.params.args.map((arg) => arg.value ?? arg.description ?? '').join(' ')}`);
      }
    });
    await send('Runtime.enable');
    // The library the app keeps in IndexedDB is emptied first: a tab opened after another
    // run would otherwise read that run back and chart it while this one measures.
    await send('Storage.clearDataForOrigin', { origin: new URL(siteUrl).origin, storageTypes: 'indexeddb' });
    const query = new URLSearchParams(settings).toString();
    const url = query ? `${siteUrl}?${query}` : siteUrl;
    const navigated = await send('Page.navigate', { url });
    if (navigated.errorText) throw new Error(`could not open ${url}: ${navigated.errorText}`);

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
      // The first evaluations may land in the blank page or in a context the navigation tears
      // down; only a closed browser ends the wait early.
      const ready = await evaluate(() => Boolean(document.querySelector('[data-testid=app-ready]'))).catch((err) => {
        if (protocol.closedReason) throw err;
        return false;
      });
      if (ready) break;
      if (Date.now() - readySince > APP_READY_TIMEOUT_MS) {
        throw new Error(`the app at ${url} did not say it was ready within ${APP_READY_TIMEOUT_MS / 1000} s; page errors: ${errors.join('; ') || 'none'}`);
      }
      await sleep(POLL_MS);
    }

    return {
      errors,
      evaluate,
      /**
       * Presses Run, waits up to `timeoutMs` for the run to end, presses Download and returns
       * `{ artifact, pageErrors }`. Throws with the reason when Run cannot be pressed (the
       * form's messages) or the run did not finish (the status line).
       */
      async runAndDownload(timeoutMs) {
        const refusal = await evaluate(() => {
          const run = document.querySelector('[data-testid=run]');
          if (!run) return 'the page has no Run button';
          if (run.disabled) return `Run is disabled: ${document.body.innerText.slice(0, 2_000)}`;
          run.click();
          return null;
        });
        if (refusal) throw new Error(refusal);
        // One call that the page answers when the run has ended, not a poll: every DevTools
        // call is work in the browser and the page while strobe measures, work the floor's
        // runs (one awaited call) never had.
        const state = await evaluate(waitForRunEnd, timeoutMs);
        if (state === null) {
          const now = await evaluate(() => document.querySelector('[data-testid=status]')?.dataset.state);
          throw new Error(`the run did not end within ${timeoutMs / 1000} s (state ${now})`);
        }
        if (state !== 'finished') {
          const status = await evaluate(() => document.querySelector('[data-testid=status]')?.textContent);
          throw new Error(`the page ended in state ${state}: ${status}`);
        }
        const file = await download(protocol, downloadsDir, () => evaluate(() => document.querySelector('[data-testid=download]').click()));
        const text = readFileSync(file, 'utf8');
        return { artifact: JSON.parse(text), text, pageErrors: errors };
      },
      close: closeTab,
    };
  } catch (err) {
    await closeTab();
    throw err;
  }
}

/**
 * In the page: resolves to the run's final state (`finished` or `error`) as soon as the status
 * says so, or to null after `timeoutMs`. It watches the status's `data-state` with a
 * MutationObserver, so nothing runs while the state stays as it is.
 */
function waitForRunEnd(timeoutMs) {
  return new Promise((resolve) => {
    const ended = () => {
      const state = document.querySelector('[data-testid=status]')?.dataset.state;
      return state === 'finished' || state === 'error' ? state : null;
    };
    let timer;
    const finish = (state) => {
      observer.disconnect();
      clearTimeout(timer);
      resolve(state);
    };
    const finishIfEnded = () => {
      const state = ended();
      if (state) finish(state);
    };
    const observer = new MutationObserver(finishIfEnded);
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] });
    timer = setTimeout(() => finish(null), timeoutMs);
    finishIfEnded();
  });
}

/** Runs `start` (which clicks a download link) and returns the path of the finished download. */
async function download(protocol, downloadsDir, start) {
  let stop = () => {};
  let timer;
  const finished = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no download finished within ${DOWNLOAD_TIMEOUT_MS / 1000} s`)), DOWNLOAD_TIMEOUT_MS);
    let guid = null;
    stop = protocol.on((message) => {
      if (message.method === 'Browser.downloadWillBegin' && guid === null) guid = message.params.guid;
      if (message.method === 'Browser.downloadProgress' && message.params.guid === guid) {
        if (message.params.state === 'completed') resolve(join(downloadsDir, guid));
        if (message.params.state === 'canceled') reject(new Error('the browser cancelled the download'));
      }
    });
  });
  // Settled before `start` returns, it would otherwise be a rejection nobody handles yet.
  finished.catch(() => {});
  try {
    await start();
    return await finished;
  } finally {
    clearTimeout(timer);
    stop();
  }
}
