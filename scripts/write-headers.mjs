// trunk post-build hook (Trunk.toml): writes the response headers a static host should send with
// the build, next to it in the staging directory, so every build carries its own:
//   _headers            Netlify and Cloudflare Pages
//   strobe-headers.conf nginx `add_header` lines, for `include` (docs/operate/hosting/nginx.conf)
// Both send COOP/COEP (cross-origin isolation: the 5 µs timer) and a Content-Security-Policy
// that allows exactly what the app needs: its own scripts, WebAssembly, its worker, the inline
// start-up script trunk writes (by its SHA-256, which changes with every build) and fetch() to
// any endpoint. docs/operate/hosting.md explains each directive.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const staging = process.env.TRUNK_STAGING_DIR;
if (!staging) {
  console.error('write-headers.mjs runs as a trunk post_build hook (TRUNK_STAGING_DIR is unset)');
  process.exit(2);
}
const html = readFileSync(join(staging, 'index.html'), 'utf8');
const inline = [...html.matchAll(/<script type="module">([\s\S]*?)<\/script>/g)].map((match) => match[1]);
if (inline.length === 0) {
  console.error('write-headers.mjs: index.html has no inline module script to hash');
  process.exit(1);
}
const hashes = inline.map((text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`);

const policy = [
  "default-src 'self'",
  `script-src 'self' 'wasm-unsafe-eval' ${hashes.join(' ')}`,
  "worker-src 'self'",
  "connect-src 'self' http: https:",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

const headers = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Content-Security-Policy': policy,
  'X-Content-Type-Options': 'nosniff',
};

writeFileSync(
  join(staging, '_headers'),
  `/*\n${Object.entries(headers).map(([name, value]) => `  ${name}: ${value}`).join('\n')}\n`,
);
writeFileSync(
  join(staging, 'strobe-headers.conf'),
  `${Object.entries(headers).map(([name, value]) => `add_header ${name} "${value}" always;`).join('\n')}\n`,
);
