#!/usr/bin/env node
// Writes a ShareGPT-shaped JSON list of made-up text, about N MB, for the workload read
// benchmark (benches/workload_read.rs). Deterministic: the same --mb and --seed give the same
// bytes. No third-party data: the words are syllables drawn from a seeded generator.
//
//   node scripts/gen-sharegpt.mjs --mb 500 --out target/bench-workload/sharegpt-500mb.json
import { createWriteStream } from "node:fs";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 && index + 1 < process.argv.length ? process.argv[index + 1] : fallback;
}

const megabytes = Number(option("mb", "10"));
const out = option("out", `target/bench-workload/sharegpt-${megabytes}mb.json`);
let state = Number(option("seed", "20261202")) >>> 0;
if (!(megabytes > 0)) {
  console.error("gen-sharegpt: --mb must be a positive number");
  process.exit(2);
}

// Mulberry32: small, fast and the same on every machine.
function next() {
  state = (state + 0x6d2b79f5) >>> 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 15), z | 1);
  z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
  return (z ^ (z >>> 14)) >>> 0;
}

const syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vi", "nor", "el", "qua", "de", "fi", "un", "ro", "ta"];
// A pool of made-up words, drawn once; texts pick from it (fast for hundreds of MB).
const words = Array.from({ length: 4096 }, () => {
  let word = "";
  for (let i = 1 + (next() % 4); i > 0; i--) word += syllables[next() % syllables.length];
  return word;
});

function text(minChars, maxChars) {
  const target = minChars + (next() % (maxChars - minChars));
  const parts = [];
  let length = 0;
  while (length < target) {
    const word = words[next() % words.length];
    parts.push(word);
    length += word.length + 1;
  }
  // A quote and a new line now and then, so the reader meets escapes.
  if (next() % 8 === 0) parts.push('"quoted"\nnext line');
  return parts.join(" ");
}

mkdirSync(dirname(out), { recursive: true });
const stream = createWriteStream(out);
const limit = megabytes * 1024 * 1024;
let written = 0;
let records = 0;
async function write(chunk) {
  written += Buffer.byteLength(chunk);
  if (!stream.write(chunk)) await new Promise((resolve) => stream.once("drain", resolve));
}
await write("[\n");
while (written < limit) {
  const turns = 2 + 2 * (next() % 3);
  const conversations = [];
  for (let turn = 0; turn < turns; turn++) {
    const human = turn % 2 === 0;
    conversations.push({ from: human ? "human" : "gpt", value: human ? text(40, 1200) : text(200, 4000) });
  }
  const record = JSON.stringify({ id: `gen-${records}`, conversations });
  await write((records > 0 ? ",\n" : "") + record);
  records += 1;
}
await write("\n]\n");
stream.end();
await new Promise((resolve) => stream.on("finish", resolve));
console.log(`${out}: ${records} conversations, ${(written / 1048576).toFixed(1)} MiB`);
