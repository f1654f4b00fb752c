// Reads a downloaded artifact and checks it with the project's own core, through the
// strobe-artifact command (the same validation the page and CI use).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export const ARTIFACT_CLI = process.env.STROBE_ARTIFACT_CLI ?? 'target/debug/strobe-artifact';

/** `strobe-artifact validate --json FILE`: resolves to `{ exitCode, report }`. */
export function validateArtifact(path) {
  if (!existsSync(ARTIFACT_CLI)) {
    throw new Error(`${ARTIFACT_CLI} is missing: run \`cargo build -p strobe-artifact\` first`);
  }
  try {
    const out = execFileSync(ARTIFACT_CLI, ['validate', '--json', path], { encoding: 'utf8' });
    return { exitCode: 0, report: JSON.parse(out) };
  } catch (err) {
    return { exitCode: err.status, report: err.stdout ? JSON.parse(err.stdout) : null, stderr: err.stderr };
  }
}

/** `strobe-artifact recompute --json FILE`: exit code and report. */
export function recomputeArtifact(path) {
  try {
    const out = execFileSync(ARTIFACT_CLI, ['recompute', '--json', path], { encoding: 'utf8' });
    return { exitCode: 0, report: JSON.parse(out) };
  } catch (err) {
    return { exitCode: err.status, report: err.stdout ? JSON.parse(err.stdout) : null, stderr: err.stderr };
  }
}

export function readArtifact(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}
