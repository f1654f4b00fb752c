// The wasm's largest contributors, by crate and by function, from `twiggy top` on the
// unoptimized-by-wasm-opt release wasm that cargo built for trunk
// (target/wasm32-unknown-unknown/release/strobe.wasm, which keeps its function names). Shallow
// bytes of code and data; the name and wasm-bindgen custom sections, which the shipped file
// does not carry, are left out. A function is counted to the first crate its demangled name
// names (`<strobe::… as serde::Serialize>` counts to strobe).
//
// Usage: node tests/e2e/bench/wasm-weight.mjs [--top N]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const WASM = process.env.STROBE_WASM ?? 'target/wasm32-unknown-unknown/release/strobe.wasm';
const { values: flags } = parseArgs({ options: { top: { type: 'string', default: '15' } } });
const TOP = Math.max(1, Number(flags.top) || 15);

const csv = execFileSync('twiggy', ['top', '-n', '1000000', '--format', 'csv', WASM], {
  encoding: 'utf8',
  maxBuffer: 1 << 28,
});
/** The fields of one CSV line (twiggy quotes names that hold commas). */
function fields(line) {
  const out = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i += 1;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field);
  return out;
}
const [header, ...lines] = csv.trim().split('\n');
const columns = fields(header);
const NAME = columns.indexOf('Name');
const SIZE = columns.indexOf('ShallowSize');
const byCrate = new Map();
const byModule = new Map();
const functions = [];
let total = 0;
for (const line of lines) {
  const row = fields(line);
  const name = row[NAME];
  const size = Number(row[SIZE]);
  if (/subsection|custom section/.test(name)) continue;
  total += size;
  const crate = name.startsWith('data[') || name.startsWith('data segment')
    ? '(data)'
    : (name.match(/([a-z_][a-z0-9_]*)::/)?.[1] ?? '(other)');
  byCrate.set(crate, (byCrate.get(crate) ?? 0) + size);
  const module = name.match(/strobe::(?:core|web)::[a-z_]+(?:::[a-z_]+)?/)?.[0];
  if (module) byModule.set(module, (byModule.get(module) ?? 0) + size);
  functions.push([size, name]);
}
const kib = (bytes) => (bytes / 1024).toFixed(1).padStart(8);
const share = (bytes) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %`;
const print = (title, entries) => {
  console.log(`\n${title}`);
  for (const [name, size] of entries.slice(0, TOP)) console.log(`${kib(size)} KiB ${share(size)}  ${name}`);
};
console.log(`${WASM}: ${kib(total)} KiB of code and data before wasm-opt`);
print('by crate', [...byCrate].sort((a, b) => b[1] - a[1]));
print("by strobe module", [...byModule].sort((a, b) => b[1] - a[1]));
print('largest functions', functions.sort((a, b) => b[0] - a[0]).map(([size, name]) => [name.slice(0, 110), size]));
