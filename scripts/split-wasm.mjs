// trunk post-build hook (Trunk.toml): splits the app's wasm at its lazy split points, so a first
// visit loads only the main module and each part the page seldom needs (the results side, a
// run's code, the workers' code) is fetched the first time it is used
// (docs/design/architecture.md, *Parts of the wasm*).
//
// trunk builds the app with cargo and wasm-bindgen; wasm-split has to run between the two (it
// reads the linker's relocations, which `.cargo/config.toml` asks for). So this hook takes
// cargo's own output again, splits it with `wasm-split-cli` (crate wasm_split_cli_support,
// installed by scripts/setup.sh), runs wasm-bindgen on the main part and wasm-opt on every part
// (release builds), and puts the result in the staging directory in place of trunk's glue and
// wasm, under trunk's hashed names. The parts and their loader get content-hashed names; the
// page's integrity hashes are written for the new files.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('split-wasm.mjs runs as a trunk post_build hook (TRUNK_STAGING_DIR is unset)');
  process.exit(2);
}
const profile = process.env.TRUNK_PROFILE === 'release' ? 'release' : 'debug';
const targetDir = resolve(process.env.CARGO_TARGET_DIR ?? 'target');
const input = join(targetDir, 'wasm32-unknown-unknown', profile, 'strobe.wasm');
const work = join(targetDir, 'wasm-split', profile);

/** Stops the build with what went wrong and what to do. */
function fail(message) {
  console.error(`split-wasm.mjs: ${message}`);
  process.exit(1);
}

/** The names of a wasm file's custom sections. */
function customSections(bytes) {
  const names = [];
  let at = 8;
  const leb = () => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = bytes[at];
      at += 1;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
      if (byte < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const id = bytes[at];
    at += 1;
    const size = leb();
    const end = at + size;
    if (id === 0) {
      const length = leb();
      names.push(bytes.subarray(at, at + length).toString('utf8'));
    }
    at = end;
  }
  return names;
}

/** The first 16 hex digits of the SHA-256 of `bytes`: the content part of a file name. */
function contentHash(bytes) {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** A program from the machine: node_modules' binaries first, then PATH (scripts/setup.sh). */
function tool(name) {
  const local = resolve('node_modules', '.bin', name);
  return existsSync(local) ? local : name;
}

function run(program, args) {
  try {
    execFileSync(tool(program), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const said = `${error.stderr ?? ''}`.trim().split('\n').slice(-5).join('\n');
    if (error.code === 'ENOENT') {
      fail(`${program} is not installed: run scripts/setup.sh (it installs the build tools)`);
    }
    fail(`${program} ${args.join(' ')} failed:\n${said}`);
  }
}

if (!existsSync(input)) fail(`cargo's output ${input} is missing`);
const original = readFileSync(input);
if (!customSections(original).some((name) => name.startsWith('reloc.'))) {
  fail(
    `${input} has no relocations: build with \`-C link-arg=--emit-relocs\` ` +
      '(.cargo/config.toml sets it for wasm32; a RUSTFLAGS variable replaces that setting)',
  );
}

const glueName = readdirSync(staging).find((name) => /^strobe(-[0-9a-f]+)?\.js$/.test(name));
if (!glueName) fail(`trunk staged no strobe glue in ${staging}`);
const stem = glueName.slice(0, -'.js'.length);

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
run('wasm-split-cli', [input, work, '--out-name', stem, '--target', 'web']);
run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--keep-lld-exports', '--out-dir', work, '--out-name', stem, join(work, `${stem}.wasm`)]);

const FEATURES = [
  '--enable-bulk-memory',
  '--enable-nontrapping-float-to-int',
  '--enable-sign-ext',
  '--enable-mutable-globals',
  '--enable-reference-types',
  '--enable-multivalue',
];
/** The bytes to ship of a wasm part: wasm-opt'ed for size in release builds. */
function shipped(path) {
  if (profile !== 'release') return readFileSync(path);
  const out = `${path}.opt`;
  run('wasm-opt', ['-Oz', '--strip-debug', '--strip-producers', ...FEATURES, path, '-o', out]);
  return readFileSync(out);
}

// The parts: every wasm wasm-split wrote besides the main one, renamed by content.
const renames = new Map();
for (const name of readdirSync(work)) {
  if (!name.endsWith('.wasm') || name === `${stem}.wasm` || name === `${stem}_bg.wasm`) continue;
  const bytes = shipped(join(work, name));
  const hashed = `${name.slice(0, -'.wasm'.length)}-${contentHash(bytes)}.wasm`;
  writeFileSync(join(staging, hashed), bytes);
  renames.set(name, hashed);
}
let loader = readFileSync(join(work, '__wasm_split.js'), 'utf8');
for (const [name, hashed] of renames) {
  const quoted = `"./${name}"`;
  if (!loader.includes(quoted)) fail(`the split loader never names ${name}`);
  loader = loader.replaceAll(quoted, `"./${hashed}"`);
}
const loaderName = `${stem}-split-${contentHash(Buffer.from(loader))}.js`;
writeFileSync(join(staging, loaderName), loader);

let glue = readFileSync(join(work, `${stem}.js`), 'utf8');
// Only the import statements change: the wasm's imports keep the module name it was linked with.
if (!glue.includes('from "./__wasm_split.js"')) fail('the glue does not import the split loader');
glue = glue.replaceAll('from "./__wasm_split.js"', `from "./${loaderName}"`);
const wasm = shipped(join(work, `${stem}_bg.wasm`));
writeFileSync(join(staging, glueName), glue);
writeFileSync(join(staging, `${stem}_bg.wasm`), wasm);

// The page names the glue and the wasm with their integrity hashes: the new files' hashes.
const sri = (bytes) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
const htmlPath = join(staging, 'index.html');
let html = readFileSync(htmlPath, 'utf8');
for (const [file, bytes] of [
  [glueName, Buffer.from(glue)],
  [`${stem}_bg.wasm`, wasm],
]) {
  const pattern = new RegExp(`(href="\\./${file}"[^>]*?integrity=")[^"]*(")`, 'g');
  if (!pattern.test(html)) fail(`index.html has no integrity hash for ${file}`);
  html = html.replace(pattern, `$1${sri(bytes)}$2`);
}
writeFileSync(htmlPath, html);

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(
  `split-wasm.mjs: ${stem}_bg.wasm ${kib(wasm.length)} + ${renames.size} parts loaded on use (${profile})`,
);
