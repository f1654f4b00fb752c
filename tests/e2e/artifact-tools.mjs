// Reads a downloaded artifact and checks it with the project's own core, through the
// strobe-artifact command (the same validation the page and CI use).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

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

/**
 * The entries of a `.zip` as `{ name, text }`, read with Node's own inflate (stored or deflated
 * entries, no zip64): an independent reader of what the page's "Download sweep" writes.
 */
export function readZipEntries(path) {
  const bytes = readFileSync(path);
  const endAt = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (endAt < 0) throw new Error(`${path} has no end-of-central-directory record`);
  const count = bytes.readUInt16LE(endAt + 10);
  let at = bytes.readUInt32LE(endAt + 16);
  const entries = [];
  for (let i = 0; i < count; i += 1) {
    if (bytes.readUInt32LE(at) !== 0x02014b50) throw new Error(`central entry ${i} is malformed`);
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = bytes.readUInt32LE(at + 20);
    const nameLength = bytes.readUInt16LE(at + 28);
    const extraLength = bytes.readUInt16LE(at + 30);
    const commentLength = bytes.readUInt16LE(at + 32);
    const localAt = bytes.readUInt32LE(at + 42);
    const name = bytes.toString('utf8', at + 46, at + 46 + nameLength);
    const dataAt = localAt + 30 + bytes.readUInt16LE(localAt + 26) + bytes.readUInt16LE(localAt + 28);
    const data = bytes.subarray(dataAt, dataAt + compressedSize);
    const raw = method === 8 ? inflateRawSync(data) : method === 0 ? data : null;
    if (raw === null) throw new Error(`${name} uses compression method ${method}`);
    entries.push({ name, text: raw.toString('utf8') });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
