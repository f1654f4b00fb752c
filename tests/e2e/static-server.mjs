// A small static file server for the built app (dist/), used by the end-to-end tests and by
// `scripts/serve.sh --dist`. It sends the cross-origin isolation headers strobe documents for
// static hosts, and can mount the site under a sub-path to prove the build is path-independent.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Serve `root` at `http://127.0.0.1:<port><basePath>`. Resolves to `{ url, close }`.
 * `port` 0 picks a free port.
 */
export async function serveStatic({ root, port = 0, basePath = '/', isolate = true }) {
  const rootDir = resolve(root);
  const prefix = basePath.endsWith('/') ? basePath : `${basePath}/`;
  const server = createServer(async (req, res) => {
    const headers = isolate
      ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' }
      : {};
    const url = new URL(req.url, 'http://localhost');
    if (!url.pathname.startsWith(prefix)) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(prefix.length)) || 'index.html';
    const file = normalize(join(rootDir, rel));
    if (!file.startsWith(rootDir)) {
      res.writeHead(403, headers).end('forbidden');
      return;
    }
    try {
      const info = await stat(file);
      const path = info.isDirectory() ? join(file, 'index.html') : file;
      const body = await readFile(path);
      res.writeHead(200, { ...headers, 'Content-Type': MIME[extname(path)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, headers).end('not found');
    }
  });
  await new Promise((ok) => server.listen(port, '127.0.0.1', ok));
  const { port: bound } = server.address();
  return {
    url: `http://127.0.0.1:${bound}${prefix}`,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

// `node tests/e2e/static-server.mjs [dir] [port]` serves a directory until interrupted.
if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? 'dist';
  const port = Number(process.argv[3] ?? 8080);
  const { url } = await serveStatic({ root, port });
  console.log(`serving ${root} at ${url}`);
}
