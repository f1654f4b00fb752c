// Debian's nginx in the foreground for one test: a `server` block (a tested config from
// docs/operate/hosting/ with its paths and port replaced) wrapped in the few top-level lines nginx
// needs, run with its own prefix under test-results/, and stopped when the test is done.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const NGINX = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';

/**
 * Starts nginx with `server` in `test-results/<name>/` and resolves once it has written its pid
 * file (after it bound its port): `{ dir, stop() }`. `dir` is created first, so a caller can
 * put files the block names (a certificate) there before calling.
 */
export async function startNginx(name, server) {
  const dir = nginxDir(name);
  writeFileSync(
    `${dir}/nginx.conf`,
    `daemon off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/logs/error.log;\nevents {}\n` +
      `http {\n  access_log off;\n${server}\n}\n`,
  );
  const child = spawn(NGINX, ['-p', dir, '-c', `${dir}/nginx.conf`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => (log += chunk));
  for (let attempt = 0; !existsSync(`${dir}/nginx.pid`); attempt += 1) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${log}`);
    if (attempt > 100) throw new Error(`nginx did not start: ${log}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    dir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((done) => (child.exitCode !== null ? done() : child.once('exit', done)));
    },
  };
}

/** `test-results/<name>/` with its `logs/`, made if missing, a stale pid file removed. */
export function nginxDir(name) {
  const dir = resolve(`test-results/${name}`);
  mkdirSync(`${dir}/logs`, { recursive: true });
  rmSync(`${dir}/nginx.pid`, { force: true });
  return dir;
}
