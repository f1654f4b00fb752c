// The fidelity benchmark's rounds and verdicts (tests/e2e/bench/verdict.mjs): the clients' order
// round by round, the sign test's tail, the verdict rules over paired rounds, noisy rounds set
// aside, and saved reports pooled. Pure JavaScript: no browser, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { binomialTail, compareP95, poolReports, roundOrder, NOISY_STEAL_PCT } from './bench/verdict.mjs';

/** One run of `round` whose every row has `e2e` error `ms` (so its p95 is `ms`). */
const run = (round, ms, steal = 0) => ({
  round,
  errors: Array.from({ length: 20 }, () => ({ ttfo: ms, ttft: ms, e2e: ms })),
  host_cpu: { steal_pct: steal },
});
const runs = (p95s) => p95s.map((ms, i) => run(i + 1, ms));

test('the sign test tail is the binomial tail of a fair coin', () => {
  assert.equal(binomialTail(5, 5), 1 / 32);
  assert.equal(binomialTail(5, 0), 1);
  assert.equal(binomialTail(10, 8), (45 + 10 + 1) / 1024);
  assert.ok(Math.abs(binomialTail(20, 15) - 0.020694732666015625) < 1e-15);
});

test('higher in every one of five rounds is worse; in four, within noise; median ≤ 0, no worse', () => {
  const floor = runs([1, 1, 1, 1, 1]);
  const worse = compareP95(runs([1.2, 1.1, 1.3, 1.1, 1.4]), floor, 'e2e');
  assert.equal(worse.verdict, 'worse');
  assert.deepEqual(worse.rounds_higher, [5, 5]);
  assert.equal(worse.sign_test_p, 1 / 32);
  assert.ok(Math.abs(worse.median_difference_ms - 0.2) < 1e-12);

  const noisy = compareP95(runs([1.2, 1.1, 1.3, 1.1, 0.9]), floor, 'e2e');
  assert.equal(noisy.verdict, 'within_noise');
  assert.deepEqual(noisy.rounds_higher, [4, 5]);

  const fine = compareP95(runs([0.9, 1.1, 0.8, 1.2, 1.0]), floor, 'e2e');
  assert.equal(fine.verdict, 'no_worse');
  assert.equal(fine.median_difference_ms, 0);
  assert.deepEqual(fine.median_p95_ms, [1, 1]);
});

test('under five paired quiet rounds there is no verdict; a noisy round is set aside', () => {
  assert.equal(compareP95(runs([2, 2, 2, 2]), runs([1, 1, 1, 1]), 'e2e').verdict, 'too_few_runs');
  const a = runs([2, 2, 2, 2, 2, 2]);
  a[2] = run(3, 9, NOISY_STEAL_PCT);
  const result = compareP95(a, runs([1, 1, 1, 1, 1, 1]), 'e2e');
  assert.deepEqual(result.rounds_set_aside, [3]);
  assert.deepEqual(result.rounds_higher, [5, 5]);
  assert.deepEqual(result.p95_per_round_ms.map(([round]) => round), [1, 2, 4, 5, 6]);
  assert.equal(result.verdict, 'worse');
  // Rounds pair by number: a round one client lacks is not compared.
  assert.equal(compareP95(runs([2, 2, 2, 2, 2]).slice(1), runs([1, 1, 1, 1, 1]), 'e2e').verdict, 'too_few_runs');
});

test('reports of one build pool into more rounds, each report\'s rounds kept apart', () => {
  const report = (commit, p95s) => ({ environment: { commit }, runs: { 64: { worker: runs(p95s), floor: runs(p95s.map(() => 1)) } } });
  const first = report('abc1234', [1.2, 1.1, 0.9]);
  const second = report('abc1234', [1.3, 1.1, 1.2]);
  const { runs: pooled, build } = poolReports([{ path: 'a', saved: first }, { path: 'b', saved: second }]);
  assert.equal(build, 'commit abc1234');
  assert.deepEqual(pooled['64'].worker.map((r) => r.round), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(pooled['64'].floor.map((r) => r.round), [1, 2, 3, 4, 5, 6]);
  // Neither report alone has the five rounds a verdict needs; pooled, 5 of 6 higher.
  const result = compareP95(pooled['64'].worker, pooled['64'].floor, 'e2e');
  assert.deepEqual(result.rounds_higher, [5, 6]);
  assert.equal(result.verdict, 'within_noise');
  // The saved reports are not changed.
  assert.deepEqual(first.runs['64'].worker.map((r) => r.round), [1, 2, 3]);

  assert.throws(
    () => poolReports([{ path: 'a', saved: first }, { path: 'b', saved: report('def5678', [1]) }]),
    /one build only; these are of 2 builds \(a: commit abc1234; b: commit def5678\)/,
  );
});

test('reports pool by what they measured: the same wasm and simulator at two commits, not two builds at one', () => {
  const report = (commit, app, sim) => ({
    environment: { commit, build: { app_wasm_sha256: app, sim_sha256: sim } },
    runs: { 16: { worker: runs([1, 1]), main: runs([1, 1]) } },
  });
  const readmeOnly = poolReports([
    { path: 'a', saved: report('abc1234', 'aaaa', 'ssss') },
    { path: 'b', saved: report('fed4321', 'aaaa', 'ssss') },
  ]);
  assert.equal(readmeOnly.build, 'app aaaa, sim ssss');
  assert.equal(readmeOnly.runs['16'].worker.length, 4);
  assert.throws(
    () => poolReports([
      { path: 'a', saved: report('abc1234', 'aaaa', 'ssss') },
      { path: 'b', saved: report('abc1234+changes', 'bbbb', 'ssss') },
    ]),
    /these are of 2 builds \(a: app aaaa, sim ssss; b: app bbbb, sim ssss\)/,
  );
  // A report with hashes and one without cannot be shown to be of one build.
  assert.throws(
    () => poolReports([
      { path: 'a', saved: report('abc1234', 'aaaa', 'ssss') },
      { path: 'b', saved: { environment: { commit: 'abc1234' }, runs: {} } },
    ]),
    /2 builds/,
  );
});

test('over a cycle of rounds every client runs in every position alike and after every other alike', () => {
  for (const n of [2, 3, 4, 5]) {
    const clients = ['worker', 'main', 'floor', 'floor-worker', 'fifth'].slice(0, n);
    const cycle = n % 2 === 0 ? n : 2 * n;
    const rounds = Array.from({ length: cycle }, (_, i) => roundOrder(clients, i + 1));
    for (const order of rounds) assert.deepEqual([...order].sort(), [...clients].sort(), `${order} is an order of all ${n}`);
    for (let position = 0; position < n; position += 1) {
      const counts = new Map(clients.map((client) => [client, 0]));
      for (const order of rounds) counts.set(order[position], counts.get(order[position]) + 1);
      assert.deepEqual(new Set(counts.values()), new Set([cycle / n]), `n=${n}, position ${position}`);
    }
    const follows = new Map();
    for (const order of rounds) {
      for (let i = 1; i < n; i += 1) {
        const pair = `${order[i - 1]}>${order[i]}`;
        follows.set(pair, (follows.get(pair) ?? 0) + 1);
      }
    }
    assert.equal(follows.size, n * (n - 1), `n=${n}: every ordered pair of clients is adjacent somewhere`);
    assert.equal(new Set(follows.values()).size, 1, `n=${n}: and equally often`);
    // The cycle repeats: the round after a full cycle starts it again.
    assert.deepEqual(roundOrder(clients, cycle + 1), rounds[0]);
  }
  // The benchmark's three clients: the main-thread mode is not always in the middle.
  const middles = Array.from({ length: 6 }, (_, i) => roundOrder(['worker', 'main', 'floor'], i + 1)[1]);
  assert.equal(middles.filter((client) => client === 'main').length, 2);
});
