// The fidelity benchmark's paired rounds and verdicts: the order the clients run in round by
// round, one client's p95 error against another's over paired rounds (a sign test, noisy rounds
// set aside), and several saved reports of one build pooled into one set of rounds. Pure: no
// browser, no clock; tested by tests/e2e/verdict.test.mjs.
import { percentile } from './stats.mjs';

/** Rounds a comparison needs before it gives a verdict (a sign test over fewer cannot say worse). */
export const MIN_ROUNDS_FOR_VERDICT = 5;
/**
 * A run during which the hypervisor gave at least this share of the host's CPU time to other
 * guests (`host_cpu.steal_pct`) is noisy. Pairing by round cancels what hits both runs, but a
 * burst of steal lands in one run and not the other: in a report of 2026-11-30 the worker's
 * c = 16 runs had 5.9–15.1 % steal in four rounds of five, the floor's 0.7–1.2 % in three of
 * them, and the worker's E2E p95 came out higher in all five. Runs without a reading (older
 * reports) count as quiet.
 */
export const NOISY_STEAL_PCT = 2;
const isNoisy = (run) => (run.host_cpu?.steal_pct ?? 0) >= NOISY_STEAL_PCT;
/** How unlikely "higher in this many rounds" must be, were neither client worse, to say worse. */
const SIGNIFICANCE = 0.05;

/**
 * The order the clients run in, round by round (`round` from 1): the rows of a Williams design,
 * one per round in turn. Over a full cycle of rows (n rounds for an even number n of clients,
 * 2n for an odd number) every client runs in every position equally often and follows every
 * other client equally often.
 *
 * Why: on this machine the position in a round moves a client's p95 by a few hundredths of a
 * ms, as much as the differences the verdicts weigh. The order used before (the clients' order,
 * reversed every other round) put the middle client, the main-thread mode, in the middle of
 * every round and the others first or last. Measured over fifteen reports of the same app and
 * simulator at c = 16 (96 quiet rounds): the worker's TTFO p95 minus the floor's, median
 * +0.065 ms (31 of 47 rounds higher) when the worker ran last and −0.014 ms (23 of 49) when it
 * ran first; the main mode's E2E minus the floor's, +0.014 ms with the floor first, −0.031 ms
 * with the floor last.
 * A fixed position is a handicap or a head start that a sign test over rounds reads as a
 * difference between the clients.
 */
export function roundOrder(clients, round) {
  const n = clients.length;
  const base = Array.from({ length: n }, (_, j) => (j % 2 === 1 ? (j + 1) / 2 : (n - j / 2) % n));
  const rows = Array.from({ length: n }, (_, i) => base.map((treatment) => (treatment + i) % n));
  if (n % 2 === 1) rows.push(...rows.map((row) => [...row].reverse()));
  return rows[(round - 1) % rows.length].map((index) => clients[index]);
}

/** P(at least `k` of `n` fair coin flips come up heads): the one-sided sign test's p-value. */
export function binomialTail(n, k) {
  let choose = 1;
  let tail = 0;
  for (let i = 0; i <= n; i += 1) {
    if (i >= k) tail += choose;
    choose = (choose * (n - i)) / (i + 1);
  }
  return tail / 2 ** n;
}

export const p95Of = (values) => percentile([...values].sort((x, y) => x - y), 95);

export const medianOf = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * One client's p95 |error| against another's for one metric, with how sure the difference is.
 * On this shared machine a noisy moment lands in one run and not the next: one client's p95
 * over five runs of the same case went 1.0, 1.8, 1.9, 2.5 and 10.9 ms. So a run is the unit,
 * and the two clients' runs are paired by round (they run one after the other, so a busy
 * period tends to hit both): per round, a's p95 minus b's. The verdict is a one-sided sign
 * test over the rounds: `no_worse` when the median difference is ≤ 0; `worse` when a was
 * higher in so many rounds that, were neither client worse, it would happen with probability
 * under 5 % (with five rounds: all five); `within_noise` otherwise; `too_few_runs` below five
 * paired rounds. A round in which either run was noisy (`NOISY_STEAL_PCT`) is set aside and
 * listed. No distribution is assumed, and nothing random is drawn.
 */
export function compareP95(runsA, runsB, metric) {
  const p95ByRound = (runs) => new Map(runs.map((run) => [run.round, p95Of(run.errors.map((row) => Math.abs(row[metric])))]));
  const noisyRounds = new Set([...runsA, ...runsB].filter(isNoisy).map((run) => run.round));
  const [a, b] = [p95ByRound(runsA), p95ByRound(runsB)];
  const paired = [...a.keys()].filter((round) => b.has(round)).sort((x, y) => x - y);
  const rounds = paired.filter((round) => !noisyRounds.has(round));
  const differences = rounds.map((round) => a.get(round) - b.get(round));
  const higher = differences.filter((difference) => difference > 0).length;
  const pValue = binomialTail(rounds.length, higher);
  const median = rounds.length > 0 ? medianOf(differences) : null;
  let verdict;
  if (rounds.length < MIN_ROUNDS_FOR_VERDICT) verdict = 'too_few_runs';
  else if (median <= 0) verdict = 'no_worse';
  else if (pValue < SIGNIFICANCE) verdict = 'worse';
  else verdict = 'within_noise';
  return {
    median_p95_ms: rounds.length > 0 ? [medianOf(rounds.map((round) => a.get(round))), medianOf(rounds.map((round) => b.get(round)))] : [null, null],
    p95_per_round_ms: rounds.map((round) => [round, a.get(round), b.get(round)]),
    rounds_set_aside: paired.filter((round) => noisyRounds.has(round)),
    median_difference_ms: median,
    rounds_higher: [higher, rounds.length],
    sign_test_p: pValue,
    verdict,
  };
}

/**
 * What a saved report measured: its build's content identity (`environment.build`, the app's
 * wasm and the simulator by hash) where it has one, else its commit (reports before builds
 * were recorded).
 */
function measured(saved) {
  const build = saved.environment?.build;
  if (build?.app_wasm_sha256 && build?.sim_sha256) return `app ${build.app_wasm_sha256}, sim ${build.sim_sha256}`;
  return `commit ${saved.environment?.commit ?? 'unknown'}`;
}

/**
 * The runs of several saved reports as one: per case and client, every report's runs, each
 * report's rounds renumbered after the previous report's so a round still pairs only the runs
 * that ran one after the other. Reports of different builds are refused: pooling two builds
 * would compare neither. Two reports are of one build when the app's wasm and the simulator
 * binary hash the same (a commit that changed only the README changes neither), or, for reports
 * without those hashes, when their commits are the same.
 */
export function poolReports(reports) {
  const builds = [...new Set(reports.map(({ saved }) => measured(saved)))];
  if (builds.length > 1) {
    const which = reports.map(({ path, saved }) => `${path}: ${measured(saved)}`).join('; ');
    throw new Error(`--report pools reports of one build only; these are of ${builds.length} builds (${which})`);
  }
  const pooled = {};
  let offset = 0;
  for (const { saved } of reports) {
    let last = 0;
    for (const [concurrency, byClient] of Object.entries(saved.runs ?? {})) {
      pooled[concurrency] ??= {};
      for (const [client, runs] of Object.entries(byClient)) {
        pooled[concurrency][client] ??= [];
        for (const run of runs) {
          pooled[concurrency][client].push({ ...run, round: run.round + offset });
          last = Math.max(last, run.round);
        }
      }
    }
    offset += last;
  }
  return { runs: pooled, build: builds[0] };
}

