// Every relative link in README.md, docs/ and the other Markdown pages of the repository must
// resolve to a file (and, with a #fragment, to a heading) inside the repository: a clone is
// complete, and no page points at a sibling checkout. Links to the web (https:, mailto:) are
// not fetched. Every path into docs/ written in any other text of the repository (a `//!`
// comment, a message, a script, a test) must name a file or folder that exists, and the
// section it names (`#anchor`, or `, *Heading*` after the path) must be a heading of that
// page. Run by scripts/check.sh; exits 1 naming every broken link and path.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const skipped = new Set(['node_modules', 'target', 'dist', 'dist-bench', 'test-results', '.git']);

function markdownFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    if (skipped.has(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file) {
  const seen = new Map();
  const found = new Set();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!heading) continue;
    const base = slug(heading[1].replace(/`/g, ''));
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

/** The link targets of a Markdown text: inline links and images, and reference definitions. */
function links(text) {
  const targets = [];
  let fenced = false;
  for (const [index, line] of text.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const code = line.replace(/`[^`]*`/g, '');
    for (const match of code.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push({ target: match[1], line: index + 1 });
    }
    const definition = code.match(/^\s*\[[^\]]+\]:\s*(\S+)/);
    if (definition) targets.push({ target: definition[1], line: index + 1 });
  }
  return targets;
}

/**
 * Whether prose's name for a section of a page (a path followed by `, *Checkpoints*`) is found
 * there: the words of a heading, or of a bold lead-in (`**Capacity at SLO.**`), contain the
 * name's words.
 */
function namesASection(file, name) {
  const want = slug(name.replace(/`/g, ''));
  const heads = [...anchors(file)];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const lead = line.match(/^\*\*([^*]+)\*\*/);
    if (lead) heads.push(slug(lead[1].replace(/`/g, '')));
  }
  return heads.some((head) => `-${head}-`.includes(`-${want}-`));
}

/** Every text file of the repository outside the skipped folders. */
function textFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    if (skipped.has(name)) return [];
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) return textFiles(path);
    if (stat.size > 2_000_000) return [];
    const bytes = readFileSync(path);
    return bytes.includes(0) ? [] : [{ path, text: bytes.toString('utf8') }];
  });
}

// Paths in other projects' trees that a page names as theirs (TGI's metrics page), not ours.
const foreignDocs = ['docs/source/'];

/**
 * The paths into docs/ a text names: `docs/…` (or `../docs/…`) standing on its own, with the
 * `#anchor` or the `, *Heading*` / `, "Heading"` that may follow it.
 */
function docsPaths(text) {
  const found = [];
  const pattern =
    /(^|[^A-Za-z0-9_./-])(?:\.\.\/)*(docs\/(?:[A-Za-z0-9_./-]*[A-Za-z0-9_\/])?)(?:#([A-Za-z0-9_-]+)|[,;] (?:\*([^*\n]+)\*|"([^"\n]+)"))?/g;
  for (const [index, line] of text.split('\n').entries()) {
    for (const match of line.matchAll(pattern)) {
      const [, , path, anchor, starred, quoted] = match;
      if (foreignDocs.some((foreign) => path.startsWith(foreign))) continue;
      found.push({ path, anchor, section: starred ?? quoted, line: index + 1 });
    }
  }
  return found;
}

const broken = [];
const files = markdownFiles(root);
for (const file of files) {
  for (const { target, line } of links(readFileSync(file, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
    const [pathPart, fragment] = target.split('#');
    const resolved = pathPart === '' ? file : resolve(dirname(file), decodeURIComponent(pathPart));
    const where = `${relative(root, file)}:${line}`;
    if (resolved !== root && !resolved.startsWith(root + sep)) {
      broken.push(`${where}: ${target} points outside the repository`);
      continue;
    }
    if (!existsSync(resolved)) {
      broken.push(`${where}: ${target} does not exist`);
      continue;
    }
    if (fragment && resolved.endsWith('.md') && !anchors(resolved).has(fragment.toLowerCase())) {
      broken.push(`${where}: ${target} has no heading #${fragment}`);
    }
  }
}
let named = 0;
for (const { path: file, text } of textFiles(root)) {
  if (relative(root, file) === join('docs', 'spec', 'ARTIFACT.md')) continue;
  for (const { path, anchor, section, line } of docsPaths(text)) {
    named += 1;
    const where = `${relative(root, file)}:${line}`;
    const resolved = join(root, path);
    if (!existsSync(resolved)) {
      broken.push(`${where}: ${path} does not exist`);
      continue;
    }
    if (!path.endsWith('.md')) continue;
    if (anchor && !anchors(resolved).has(anchor.toLowerCase())) {
      broken.push(`${where}: ${path}#${anchor} has no such heading`);
    }
    if (section && !namesASection(resolved, section)) {
      broken.push(`${where}: ${path} has no heading "${section}"`);
    }
  }
}
if (broken.length > 0) {
  console.error(`broken links and docs paths (${broken.length}):\n  ${broken.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `Markdown links: ${files.length} pages, every relative link resolves; ` +
    `${named} paths into docs/ named elsewhere, each exists`,
);
