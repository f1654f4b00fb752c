// Times from the wire on the page (docs/develop/accuracy.md, *From the wire*): a run against
// strobe-sim records each row's times minus client_queue_ms and the run's client.from_wire block,
// its standard fields stay as measured, and the results' *Times* switch shows either basis — the
// headline table, the SLO's verdict and the rows' CSV follow it, and a comparison with a run
// that has no times from the wire flags the difference.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserAndSite, downloadArtifact } from './page.mjs';
import { startSim } from './sim.mjs';

const env = browserAndSite();
const REFERENCE = 'tests/fixtures/reference-artifact.json';

/** The summary table's p50 cell of one metric row (`TTFT`, `E2E`, …). */
async function summaryP50(page, metric) {
  const row = page.getByTestId('summary-table').locator('tbody tr', { hasText: new RegExp(`^${metric}`) });
  return Number(await row.locator('td').nth(1).textContent());
}

/**
 * `value` to two decimals as the page writes it (Rust's `{:.2}`, like Python's `:.2f`): the
 * nearest, and on an exact tie the even last digit. JavaScript's `toFixed` takes the larger of
 * a tie: 67.625 (exactly a binary number) is 67.62 on the page and 67.63 there.
 */
function twoDecimals(value) {
  const [whole, fraction] = value.toFixed(30).split('.');
  const tie = /^\d\d50*$/.test(fraction);
  return Number(tie && Number(fraction[1]) % 2 === 0 ? `${whole}.${fraction.slice(0, 2)}` : value.toFixed(2));
}

async function chooseBasis(page, basis) {
  await page.getByTestId('time-basis').selectOption(basis);
  await page.waitForFunction((id) => document.querySelector('[data-testid=summary-basis]')?.dataset.basis === id, basis);
}

test('the Times switch shows a run as measured or from the wire, SLO and CSV included', async () => {
  const sim = await startSim(['--seed', '5', '--decode-interval-ms', '5']);
  try {
    const { page, errors } = await env.run({ base_url: sim.baseUrls[0], requests: '12', concurrency: '2', context_tokens: '512', max_tokens: '16' });
    assert.equal(await page.getByTestId('status').getAttribute('data-state'), 'finished');
    const { artifact } = await downloadArtifact(page, 'from-wire');
    const fromWire = artifact.client.from_wire;
    assert.equal(fromWire.rows, 12);
    assert.equal(fromWire.rows_with_wire_time, 12, JSON.stringify(fromWire));
    for (const row of artifact.request_timings) {
      assert.ok(row.client_queue_ms > 0, `row ${row.request_index}: ${row.client_queue_ms}`);
      assert.ok(Math.abs(row.ttft_ms - row.client_queue_ms - row.ttft_from_wire_ms) < 1e-9);
    }

    // As measured by default: the artifact's own numbers.
    assert.equal(await page.getByTestId('summary-basis').getAttribute('data-basis'), 'measured');
    assert.equal(await summaryP50(page, 'TTFT'), twoDecimals(artifact.metrics.ttft_p50_ms));
    await chooseBasis(page, 'from_wire');
    assert.equal(await summaryP50(page, 'TTFT'), twoDecimals(fromWire.ttft_p50_ms));
    assert.equal(await summaryP50(page, 'E2E'), twoDecimals(fromWire.e2e_p50_ms));
    assert.ok(fromWire.ttft_p50_ms < artifact.metrics.ttft_p50_ms, 'from the wire reads lower');

    // An SLO just above every row's TTFT from the wire: all met from the wire, and on the
    // measured basis exactly the rows whose measured TTFT is above it missed.
    const bound = Math.max(...artifact.request_timings.map((row) => row.ttft_from_wire_ms)) + 0.01;
    const missedMeasured = artifact.request_timings.filter((row) => row.ttft_ms > bound).length;
    assert.ok(missedMeasured > 0, `the bound ${bound} sits below some measured TTFT`);
    await page.getByTestId('slo-input').fill(`ttft:${bound.toFixed(2)}`);
    const line = page.getByTestId('run-slo');
    await page.waitForFunction(() => /% met/.test(document.querySelector('[data-testid=run-slo]')?.textContent ?? ''));
    assert.match(await line.textContent(), /100\.0 % met \(12 of 12\)/);
    await chooseBasis(page, 'measured');
    await page.waitForFunction(() => !/\(12 of 12\)/.test(document.querySelector('[data-testid=run-slo]')?.textContent ?? ''));
    assert.match(await line.textContent(), new RegExp(`\\(${12 - missedMeasured} of 12\\)`));

    // The library's run, from the wire: its rows' CSV names the basis in its columns.
    await chooseBasis(page, 'from_wire');
    await page.getByTestId('basis-note').waitFor();
    assert.match(await page.getByTestId('basis-note').textContent(), /Times from the wire/);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    const csv = readFileSync(await download.path(), 'utf8');
    assert.match(csv.split('\n')[0], /,ttfo_from_wire_ms,ttft_from_wire_ms,e2e_from_wire_ms,/);

    // Beside a file without times from the wire, the comparison flags the bases.
    await page.getByTestId('artifact-input').setInputFiles([REFERENCE]);
    await page.getByTestId('compare-runs').waitFor();
    const mismatch = page.getByTestId('mismatch').filter({ hasText: 'time basis' });
    assert.equal(await mismatch.count(), 1);
    assert.match(await mismatch.textContent(), /from the wire.*as measured/s);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await sim.stop();
  }
});
