// Starts llama.cpp's own `llama-server` (built by scripts/setup-llama.sh) on a free loopback port,
// serving the tiny random-weight model scripts/make-tiny-gguf.py writes (once per test file, in
// test-results/). The process is killed when the test is done.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { unusedPort } from './sim.mjs';

export const LLAMA_SERVER =
  process.env.STROBE_LLAMA_SERVER ??
  `${process.env.STROBE_CACHE ?? `${homedir()}/.cache/strobe`}/llama-server-0.3.36/bin/llama-server`;

/** The test model's file (written when missing; deterministic from its seed). */
export function tinyModel(path = 'test-results/strobe-tiny.gguf') {
  if (!existsSync(path)) {
    execFileSync('python3', ['scripts/make-tiny-gguf.py', path, '--seed', '7'], { stdio: 'inherit' });
  }
  return path;
}

/**
 * Starts llama-server with `args` after the model and the defaults of the tests (4 slots of
 * 2,048 tokens, one thread: with two, its speed swings widely on a two-core machine) and
 * resolves once `/health` answers: `{ baseUrl, model, stop() }`.
 */
export async function startLlama(args = []) {
  if (!existsSync(LLAMA_SERVER)) {
    throw new Error(`${LLAMA_SERVER} is missing: run scripts/setup-llama.sh first`);
  }
  const model = tinyModel();
  const port = await unusedPort();
  const child = spawn(
    LLAMA_SERVER,
    ['-m', model, '--host', '127.0.0.1', '--port', String(port), '-np', '4', '-c', '8192',
      '-t', '1', '-tb', '1', '--no-webui', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`llama-server exited with ${child.exitCode}:\n${log}`);
    try {
      const response = await fetch(`${origin}/health`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`llama-server did not become healthy:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    baseUrl: `${origin}/v1`,
    origin,
    model: model.split('/').pop(),
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
