// Launches Debian's Chromium headless through playwright-core, with the flags this machine needs
// (no sandbox as root, no background networking on a closed network) and a fresh profile.
import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags every launch here passes (bare-browser.mjs too); `STROBE_CHROMIUM_EXTRA` adds more. */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  ...(process.env.STROBE_CHROMIUM_EXTRA ? process.env.STROBE_CHROMIUM_EXTRA.split(' ') : []),
];

/**
 * A new browser context with its own throw-away profile directory; `extraFlags` go after the
 * usual ones (a test that trusts its own certificate passes `--ignore-certificate-errors`).
 */
export async function launchBrowser(extraFlags = []) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'strobe-chromium-'));
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    args: [...CHROMIUM_FLAGS, ...extraFlags],
  });
}

/** Collects console errors and uncaught page errors so a test can assert there were none. */
export function collectPageErrors(page) {
  const errors = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`);
  });
  return errors;
}
