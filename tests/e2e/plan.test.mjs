// End-to-end: the page's *Export plan* and `strobe-artifact plan --link` write the same bytes for
// the same settings (and the same workload file, `--workload`), and the plan holds every
// request's exact body and no key (docs/operate/locust.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserAndSite } from './page.mjs';
import { ARTIFACT_CLI } from './artifact-tools.mjs';

const env = browserAndSite();

const SETTINGS = [
  {
    base_url: 'http://127.0.0.1:9/v1',
    model: 'tiny',
    engine: 'vllm',
    requests: '64',
    concurrency: '16',
    context_tokens: '512',
    max_tokens: '32',
    request_canaries: 'true',
  },
  { base_url: 'http://127.0.0.1:9/v1', model: 'tiny', engine: 'vllm', requests: '40', load: 'rate', rate: '8', concurrency: '8' },
];

for (const settings of SETTINGS) {
  test(`a plan exported from the page equals the CLI's (${settings.load ?? 'concurrency'})`, async () => {
    const { page, errors } = await env.open(settings);
    await page.getByTestId('api-key').fill('sk-never-in-a-plan');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-plan').click()]);
    assert.equal(download.suggestedFilename(), 'strobe-plan.json');
    const fromPage = readFileSync(await download.path());
    // The page's own link, as the address bar holds it.
    const link = new URL(page.url()).search;
    const folder = mkdtempSync(join(tmpdir(), 'strobe-plan-'));
    execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder]);
    const fromCli = readFileSync(join(folder, 'plan.json'));
    assert.ok(fromPage.equals(fromCli), 'byte-identical plans');
    const plan = JSON.parse(fromPage.toString('utf8'));
    assert.equal(plan.requests.length, Number(settings.requests));
    assert.equal(plan.load.mode, settings.load ?? 'concurrency');
    assert.ok(!fromPage.toString('utf8').includes('sk-never-in-a-plan'), 'no key in the plan');
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a plan exported with a workload file equals the CLI\'s with --workload, and says it holds the prompts', async () => {
  const PROMPTS = 'public/samples/prompts.jsonl';
  const { page, errors } = await env.open({ base_url: 'http://127.0.0.1:9/v1', model: 'tiny', engine: 'vllm', concurrency: '4' });
  await page.getByTestId('workload-file').setInputFiles(PROMPTS);
  await page.waitForFunction(() => document.querySelector('[data-testid=workload-summary]')?.dataset.state === 'ready');
  assert.match(await page.getByTestId('export-plan').getAttribute('title'), /holds the file's prompts/);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-plan').click()]);
  const fromPage = readFileSync(await download.path());
  assert.match(await page.getByTestId('export-plan-notice').textContent(), /This plan holds the prompts of prompts\.jsonl/);
  const link = new URL(page.url()).search;
  const folder = mkdtempSync(join(tmpdir(), 'strobe-plan-workload-'));
  execFileSync(ARTIFACT_CLI, ['plan', '--link', link, '--out', folder, '--workload', PROMPTS], { stdio: 'pipe' });
  const fromCli = readFileSync(join(folder, 'plan.json'));
  assert.ok(fromPage.equals(fromCli), 'byte-identical plans');
  const plan = JSON.parse(fromPage.toString('utf8'));
  const file = readFileSync(PROMPTS, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  assert.deepEqual(plan.requests.map((request) => JSON.parse(request.body).messages[0].content), file.map((record) => record.prompt));
  assert.deepEqual(errors, []);
  await page.close();
});

test('settings that cannot be planned say why instead of downloading', async () => {
  const { page, errors } = await env.open({ base_url: 'http://127.0.0.1:9/v1', model: 'tiny', engine: 'vllm', requests: '0' });
  await page.getByTestId('export-plan').click();
  assert.match(await page.getByTestId('export-plan-error').textContent(), /requests/);
  assert.deepEqual(errors, []);
  await page.close();
});
