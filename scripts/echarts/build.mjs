// Builds strobe's ECharts bundle (scripts/echarts/entry.mjs) into target/echarts/echarts.min.js
// with esbuild from node_modules: offline, reproducible, and skipped when the bundle is newer
// than its inputs. Trunk runs it before every build (Trunk.toml, pre_build hook) and copies the
// result into dist/ (index.html).
import { build } from 'esbuild';
import { mkdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const entry = join(root, 'scripts', 'echarts', 'entry.mjs');
const out = join(root, 'target', 'echarts', 'echarts.min.js');
const inputs = [entry, join(root, 'node_modules', 'echarts', 'package.json'), fileURLToPath(import.meta.url)];

const mtime = (path) => statSync(path).mtimeMs;
if (existsSync(out) && inputs.every((input) => mtime(input) <= mtime(out))) {
  process.exit(0);
}
mkdirSync(dirname(out), { recursive: true });
await build({
  entryPoints: [entry],
  outfile: out,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020'],
  legalComments: 'eof',
  logLevel: 'warning',
});
