// Read-path benchmark: what one network read costs a measuring client in the browser. While a
// read is being handled, no other stream's read can be stamped, so at concurrency 64 this cost
// is what delays the last reads of a busy moment (README, *Reading and sending*).
//
// In one page of the built app (headless Chromium, main thread), the same streams are read by
// three clients, nothing sent: each stream is a Response the page makes of vLLM-shaped
// chat-completions events (a role chunk, 8 reasoning deltas, the marker and 24 content deltas,
// finish, usage, [DONE]), one event per read, `--streams` of them `--concurrency` at a time:
//   strobe   the app's own reading path (`bench_read_path`, exported by the wasm: the
//            transport's pump_response, the copy out of the chunk, the core's SSE decoder,
//            chunk reader and accumulator, the stream's conclusion);
//   floor    the fidelity benchmark's plain-JavaScript client (./floor.mjs, TextDecoder, line
//            split, JSON.parse);
//   bare     a reader that only awaits each read and reads the clock: the streams themselves.
// Three warm-up rounds (so every client runs optimized), then `--repeat` rounds, the clients'
// order alternating. Prints per client microseconds per read (median and best of the rounds)
// and, per client, its own work: the median over rounds of (client - bare) per read.
//
// Usage: node tests/e2e/bench/read-path.mjs [--repeat N] [--streams N] [--concurrency N]
// (scripts/bench-read.sh builds what is missing and runs the native benchmark first)
import { parseArgs } from 'node:util';
import { serveStatic } from '../static-server.mjs';
import { launchBareBrowser } from '../bare-browser.mjs';
import { environment, parseRepeat } from './common.mjs';
import { floorClient } from './floor.mjs';

const { values: flags } = parseArgs({
  options: {
    repeat: { type: 'string', default: '9' },
    streams: { type: 'string', default: '1024' },
    concurrency: { type: 'string', default: '64' },
  },
});
/** A whole-number option from 1 to `max`, or an error that says so. */
function wholeNumber(name, text, max) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new Error(`--${name} must be a whole number from 1 to ${max}, got ${text}`);
  }
  return value;
}
const REPEAT = parseRepeat(flags.repeat, 50);
const STREAMS = wholeNumber('streams', flags.streams, 100_000);
const CONCURRENCY = wholeNumber('concurrency', flags.concurrency, 1024);
const WARM_UP_ROUNDS = 3;

/** One stream's events as strobe-sim sends them (vLLM's shape), one read each. */
function streamEvents() {
  const envelope = '"id":"chatcmpl-8f3c2a6e4b1d4f0e9a7c5b3d1e2f4a6b","object":"chat.completion.chunk",'
    + '"created":1759664544,"model":"strobe-sim-1"';
  const chunk = (delta, finish = 'null') =>
    `data: {${envelope},"choices":[{"index":0,"delta":{${delta}},"logprobs":null,"finish_reason":${finish}}]}\n\n`;
  const words = 24;
  return [
    chunk('"role":"assistant","content":""'),
    ...Array.from({ length: 8 }, () => chunk('"reasoning_content":" step"')),
    chunk('"content":"FLOOR_bench_00001"'),
    ...Array.from({ length: words }, () => chunk('"content":" code"')),
    chunk('"content":""', '"stop"'),
    `data: {${envelope},"choices":[],"usage":{"prompt_tokens":1024,"total_tokens":${1024 + 8 + words + 1},`
      + `"completion_tokens":${8 + words + 1}}}\n\n`,
    'data: [DONE]\n\n',
  ];
}

/** In the page: times the three clients over the same streams, round by round. */
async function timeClients({ floorSource, events, streams, concurrency, rounds, warmUp }) {
  const floorClient = new Function(`return (${floorSource});`)();
  const chunks = events.map((text) => new TextEncoder().encode(text));
  const respond = () => new Response(new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  }));
  const timed = async (run) => {
    const started = performance.now();
    await run();
    return performance.now() - started;
  };
  const slots = (readOne) => {
    let next = 0;
    const slot = async () => {
      while (next < streams) {
        next += 1;
        await readOne();
      }
    };
    return Promise.all(Array.from({ length: concurrency }, slot));
  };
  let stamps = 0;
  const clients = {
    strobe: () => window.wasmBindings.bench_read_path(chunks, streams, concurrency),
    floor: () => timed(() => floorClient({
      urls: ['about:blank'], requests: streams, concurrency, maxTokens: 64, words: 24, contextChars: 16, tag: 'bench', synthetic: events,
    })),
    bare: () => timed(() => slots(async () => {
      const reader = (await Promise.resolve(respond())).body.getReader();
      for (;;) {
        const { done } = await reader.read();
        stamps += performance.now();
        if (done) return;
      }
    })),
  };
  const names = Object.keys(clients);
  const times = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < warmUp + rounds; round += 1) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      const ms = await clients[name]();
      if (round >= warmUp) times[name].push(ms);
    }
  }
  return { times, stamps: stamps > 0 };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const events = streamEvents();
const readsPerStream = events.length + 1; // every event, then the body's end
const reads = STREAMS * readsPerStream;
// The hook is only in the build with the `bench-hooks` feature (scripts/bench-read.sh builds it).
const site = await serveStatic({ root: process.env.STROBE_BENCH_DIST ?? 'dist-bench' });
const browser = await launchBareBrowser();
try {
  const page = await browser.openApp(site.url);
  const exported = await page.evaluate(() => typeof window.wasmBindings?.bench_read_path);
  if (exported !== 'function') {
    throw new Error('the build in dist/ does not export bench_read_path: rebuild it (scripts/bench-read.sh does)');
  }
  const { times } = await page.evaluate(timeClients, {
    floorSource: floorClient.toString(),
    events,
    streams: STREAMS,
    concurrency: CONCURRENCY,
    rounds: REPEAT,
    warmUp: WARM_UP_ROUNDS,
  });
  if (page.errors.length) console.log('page errors:', page.errors);
  const { chromium, cpu_count: cpuCount, commit } = environment();
  console.log(`read path in the page (${chromium}, ${cpuCount} cores, commit ${commit}): `
    + `${STREAMS} streams of ${readsPerStream} reads (${events[1].length} bytes an event), `
    + `${CONCURRENCY} at a time; ${REPEAT} rounds after ${WARM_UP_ROUNDS} warm-up rounds`);
  const perRead = (ms) => (ms * 1000) / reads;
  for (const [name, list] of Object.entries(times)) {
    const own = name === 'bare' ? '' : `   own work ${perRead(median(list.map((ms, round) => ms - times.bare[round]))).toFixed(2)} us / read`;
    console.log(`  ${name.padEnd(7)} ${perRead(median(list)).toFixed(2)} us / read (best ${perRead(Math.min(...list)).toFixed(2)})${own}`);
  }
} finally {
  await browser.close();
  await site.close();
}
