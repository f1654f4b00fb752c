// Timing bars judged on a host that lets them be judged. The end-to-end tests that hold strobe's
// clock readings to a few milliseconds share two cores with the browser, the simulator and the
// test runner, on a virtual machine whose hypervisor may give its CPU to other guests. When the
// host keeps runnable threads off the CPU for milliseconds, strobe measures (and says) late
// sends and late reads that are the host's, not its own.
//
// And the tests compare moments on two clocks: the browser's (its monotonic clock, mapped to
// the wall clock once, when its process started) and strobe-sim's (the wall clock). When the
// host's wall clock moves against its monotonic clock meanwhile (a virtual machine's clock
// corrected by its host), every client moment is off by as much: a check on this machine saw
// every row of a run off the truth by the same 5.2 ms, then 3.9, then 3.3.
//
// So a run's span is watched three ways: /proc/stat's steal and busy shares over it
// (bench/common.mjs `watchHost`); a witness, a thread of this process that sleeps 1 ms at a
// time and counts its wake-ups that came at least STALL_MS late (a stall: a runnable thread kept
// waiting); and how far the wall clock moved against the monotonic clock since this file was
// loaded, about when its browser started. A timing bar is a `timingBar`, not a plain assertion:
// a miss is run again, up to MOST_ATTEMPTS runs, and the last miss fails the test unless every
// missed run was on a noisy host, in which case the bar was never judged and the test is
// skipped, saying so. Every other assertion fails at once, on any host.
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { hostDuring, watchHost } from './bench/common.mjs';
import { NOISY_STEAL_PCT } from './bench/verdict.mjs';

/** A witness wake-up at least this late is a stall. */
export const STALL_MS = 4;
/**
 * A span with this many stalls was on a noisy host: an idle host shows none in 5 s, the runs of
 * these tests that kept their bars 0 to 7, three CPU hogs beside the witness 6 in 5 s.
 */
export const NOISY_STALLS = 8;
/** A wall clock moved this far against the monotonic clock makes the host noisy for moments. */
export const CLOCK_MOVED_MS = 0.5;
/** The runs a missed timing bar gets before the test ends. */
export const MOST_ATTEMPTS = 3;

/** A missed timing bar: an AssertionError that {@link judgeOnAQuietHost} may run again. */
export class TimingMiss extends assert.AssertionError {
  constructor(message) {
    super({ message });
  }
}

/** Asserts a timing bar: throws a {@link TimingMiss} with `message` when `ok` is false. */
export function timingBar(ok, message) {
  if (!ok) throw new TimingMiss(message);
}

// The witness's own code: a worker thread, so the runner's event loop (which parses every
// DevTools message of a run) does not delay its timers.
const WITNESS = `
const { parentPort } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
let stalls = 0;
let worst = 0;
let ending = false;
parentPort.on('message', () => { ending = true; });
function sleep() {
  const asleep = performance.now();
  setTimeout(() => {
    const late = performance.now() - asleep - 1;
    if (late >= ${STALL_MS}) stalls += 1;
    worst = Math.max(worst, late);
    if (ending) parentPort.postMessage({ stalls, worst_ms: worst });
    else sleep();
  }, 1);
}
sleep();
`;

/** A tick of `Date.now()` seen between two monotonic readings this close is read exactly. */
const TIGHT_TICK_MS = 0.02;
/** The most ticks {@link wallMinusMonotonicMs} waits for a tight one. */
const MOST_TICKS = 50;

/**
 * The wall clock minus the monotonic clock, in ms, to a few microseconds: the moment
 * `Date.now()` ticks to its next millisecond, read on `process.hrtime`. A tick is taken only when
 * the readings around it are within TIGHT_TICK_MS, so a thread descheduled meanwhile (a busy
 * host) does not bias it; it spins up to MOST_TICKS ms for one, and takes the tightest it saw.
 */
export function wallMinusMonotonicMs() {
  let best = null;
  for (let tick = 0; tick < MOST_TICKS; tick += 1) {
    // The tick falls between the last read that saw the old millisecond and the first that saw
    // the new one, so the bracket opens before the first of those two reads.
    let opened = process.hrtime.bigint();
    const start = Date.now();
    for (;;) {
      const before = process.hrtime.bigint();
      const now = Date.now();
      const after = process.hrtime.bigint();
      if (now !== start) {
        const width = Number(after - opened) / 1e6;
        const offset = now - Number((opened + after) / 2n) / 1e6;
        if (!best || width < best.width) best = { width, offset };
        break;
      }
      opened = before;
    }
    if (best.width <= TIGHT_TICK_MS) break;
  }
  return best.offset;
}

/** The wall clock's offset when this file was loaded, about when its browser started. */
const OFFSET_AT_LOAD_MS = wallMinusMonotonicMs();

/**
 * Starts watching the host for one measured span; the returned function, called when the span
 * ends, resolves to `{ host_cpu, stalls, worst_stall_ms, clock_moved_ms, noisy, text }`:
 * `noisy` when the hypervisor took at least NOISY_STEAL_PCT % of the CPU, the witness stalled
 * NOISY_STALLS times, or the wall clock has moved CLOCK_MOVED_MS against the monotonic clock
 * since this file was loaded; `text` a " (host over the run: …)" phrase for messages.
 */
export function watchHostClosely() {
  const cpu = watchHost();
  const witness = new Worker(WITNESS, { eval: true });
  return async () => {
    const { host_cpu: hostCpu } = cpu();
    const seen = await new Promise((resolve, reject) => {
      witness.once('message', resolve);
      witness.once('error', reject);
      witness.postMessage('end');
    });
    await witness.terminate();
    const clockMoved = wallMinusMonotonicMs() - OFFSET_AT_LOAD_MS;
    const stolen = (hostCpu?.steal_pct ?? 0) >= NOISY_STEAL_PCT;
    const moved = Math.abs(clockMoved) >= CLOCK_MOVED_MS;
    const noisy = stolen || moved || seen.stalls >= NOISY_STALLS;
    const text = hostDuring(
      { host_cpu: hostCpu },
      `${seen.stalls} stalls of ${STALL_MS} ms or more`,
      `worst ${seen.worst_ms.toFixed(1)} ms`,
      `wall clock moved ${clockMoved >= 0 ? '+' : ''}${clockMoved.toFixed(2)} ms since the file began`,
    );
    return { host_cpu: hostCpu, stalls: seen.stalls, worst_stall_ms: seen.worst_ms, clock_moved_ms: clockMoved, noisy, text };
  };
}

/**
 * Runs `attempt({ measure })` until it passes, judging its timing bars on a quiet host.
 * `measure(start)` calls `start()` (the span whose timing is judged: the run itself, not the
 * servers' start or the checks after) under {@link watchHostClosely} and resolves to its result;
 * the host's reading is printed and added to a miss's message. A {@link TimingMiss} runs the
 * attempt again, up to MOST_ATTEMPTS runs; after the last, the test fails if any missed run was
 * on a quiet host and is skipped ("not judged") if all were noisy. Any other error fails at once.
 */
export async function judgeOnAQuietHost(t, attempt) {
  const quietMisses = [];
  for (let run = 1; ; run += 1) {
    let host = null;
    const measure = async (start) => {
      const ended = watchHostClosely();
      try {
        return await start();
      } finally {
        host = await ended();
        console.log(`# run ${run}${host.text}`);
      }
    };
    try {
      await attempt({ measure });
      return;
    } catch (error) {
      if (!(error instanceof TimingMiss)) throw error;
      const where = host ? host.text : ' (the host was not watched)';
      error.message += where;
      const noisy = host?.noisy ?? false;
      console.log(`# run ${run} missed a timing bar on a ${noisy ? 'noisy' : 'quiet'} host: ${error.message}`);
      if (!noisy) quietMisses.push(error);
      if (run < MOST_ATTEMPTS) continue;
      if (quietMisses.length > 0) throw quietMisses.at(-1);
      t.skip(`not judged: each of ${MOST_ATTEMPTS} runs missed a timing bar on a noisy host; the last: ${error.message}`);
      return;
    }
  }
}
