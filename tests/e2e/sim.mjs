// Starts the project's own strobe-sim (target/release/strobe-sim) on free loopback ports and
// reads its truth log. The process is killed when the test is done.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

export const SIM_BINARY = process.env.STROBE_SIM ?? 'target/release/strobe-sim';

/**
 * Starts strobe-sim with `args` (ports default to one free port) and resolves once every
 * listener printed its address. Resolves to `{ baseUrls, origin, truth(), reset(), stop() }`.
 */
export async function startSim(args = [], { ports = 1 } = {}) {
  if (!existsSync(SIM_BINARY)) {
    throw new Error(`${SIM_BINARY} is missing: run \`cargo build --release -p strobe-sim\` first`);
  }
  const portArgs = Array.from({ length: ports }, () => ['--port', '0']).flat();
  const child = spawn(SIM_BINARY, [...portArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const baseUrls = [];
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strobe-sim did not start: ${stderr}`)), 15_000);
    let buffered = '';
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (const match of buffered.matchAll(/listening on (http:\/\/[^ ]+\/v1)/g)) {
        if (!baseUrls.includes(match[1])) baseUrls.push(match[1]);
      }
      if (baseUrls.length >= ports) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`strobe-sim exited with ${code}: ${stderr}`));
    });
  });
  const origin = new URL(baseUrls[0]).origin;
  return {
    baseUrls,
    origin,
    async truth(since = 0) {
      const response = await fetch(`${origin}/sim/truth?since=${since}`);
      if (!response.ok) throw new Error(`truth log answered ${response.status}`);
      return response.json();
    },
    async reset() {
      await fetch(`${origin}/sim/truth/reset`, { method: 'POST' });
    },
    async stop() {
      child.removeAllListeners('exit');
      child.kill('SIGTERM');
      await new Promise((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', resolve);
      });
    },
  };
}

/** A loopback port nothing listens on: bound, read and released again. */
export async function unusedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}
