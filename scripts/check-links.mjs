// Every relative link in README.md, docs/ and the other Markdown pages of the repository must
// resolve to a file (and, with a #fragment, to a heading) inside the repository: a clone is
// complete, and no page points at a sibling checkout. Links to the web (https:, mailto:) are
// not fetched. Run by scripts/check.sh; exits 1 naming every broken link.
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
if (broken.length > 0) {
  console.error(`broken Markdown links (${broken.length}):\n  ${broken.join('\n  ')}`);
  process.exit(1);
}
console.log(`Markdown links: ${files.length} pages, every relative link resolves`);
