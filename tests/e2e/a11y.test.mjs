// Accessibility: axe-core (npm) on the idle page, a finished run and a comparison of two runs,
// in light and dark mode; the test fails on any serious or critical violation and prints the
// rest. axe runs through DevTools' evaluate, which the page's Content-Security-Policy does not
// govern, so the page ships nothing for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite } from './page.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const AXE = readFileSync('node_modules/axe-core/axe.min.js', 'utf8');

/** axe's violations of `impact` serious or critical on the page as it is now. */
async function seriousViolations(page, what) {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const results = await window.axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.slice(0, 5).map((node) => node.target.join(' ')),
    }));
  });
  const minor = violations.filter((violation) => !['serious', 'critical'].includes(violation.impact));
  if (minor.length > 0) console.log(`${what}: minor or moderate:`, JSON.stringify(minor));
  return violations.filter((violation) => ['serious', 'critical'].includes(violation.impact));
}

for (const colorScheme of ['light', 'dark']) {
  test(`no serious accessibility violation on the idle page, a run and a comparison (${colorScheme})`, async () => {
    const sim = await startSim(['--seed', '9', '--decode-interval-ms', '5']);
    try {
      const { page, errors } = await env.open({ base_url: sim.baseUrls[0], requests: '8', concurrency: '2', context_tokens: '256', max_tokens: '16' });
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(page, 'idle'), [], 'the idle page');
      await page.getByTestId('run').click();
      await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.dataset.state === 'finished', null, { timeout: 60_000 });
      assert.deepEqual(await seriousViolations(page, 'finished run'), [], 'a finished run');
      await page.screenshot({ path: `test-results/finished-run-${colorScheme}.png`, fullPage: true });
      const reference = readFileSync('tests/fixtures/reference-artifact.json');
      await page.getByTestId('artifact-input').setInputFiles([{ name: 'reference.json', mimeType: 'application/json', buffer: reference }]);
      await page.getByTestId('compare-runs').waitFor();
      assert.deepEqual(await seriousViolations(page, 'comparison'), [], 'a comparison');
      await page.screenshot({ path: `test-results/comparison-${colorScheme}.png`, fullPage: true });
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      await sim.stop();
    }
  });
}
