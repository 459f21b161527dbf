/**
 * Every relative link of the documentation resolves: README.md, docs/**\/*.md and packages/*\/README.md
 * link to files that exist in the repository, and every `#anchor` (in the same file or another
 * Markdown file) names a heading there, slugged as GitHub does. The README is a table of contents
 * to docs/, so a page renamed or a heading reworded must not leave a dead link behind.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownLinks, slugs } from './links.js';
import { markdownFiles, repoRoot } from './snippets.js';

/** Broken links of `files` (relative to `root`), each as `file:line: target (why)`. */
function brokenLinks(root: string, files: readonly string[], read: (file: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const file of files) {
    const markdown = read(file);
    if (markdown === undefined) continue;
    for (const { target, line } of markdownLinks(markdown)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      if (target.startsWith('/')) {
        broken.push(`${file}:${line}: ${target} (absolute path: npm and GitHub resolve it differently)`);
        continue;
      }
      const hash = target.indexOf('#');
      const path = hash < 0 ? target : target.slice(0, hash);
      const anchor = hash < 0 ? undefined : target.slice(hash + 1);
      const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
      const text = path === '' ? markdown : read(resolved);
      if (text === undefined) {
        broken.push(`${file}:${line}: ${target} (no such file)`);
      } else if (anchor !== undefined) {
        if (!resolved.endsWith('.md')) broken.push(`${file}:${line}: ${target} (an anchor into a file that is not Markdown)`);
        else if (!slugs(text).has(decodeURIComponent(anchor))) broken.push(`${file}:${line}: ${target} (no such heading in ${resolved})`);
      }
    }
  }
  return broken;
}

/** Reads a repository file; a directory reads as '' (a link to a folder resolves), a missing path as undefined. */
function readRepo(file: string): string | undefined {
  const path = join(repoRoot, file);
  if (!existsSync(path)) return undefined;
  return statSync(path).isDirectory() ? '' : readFileSync(path, 'utf8');
}

describe('documentation links', () => {
  it('every relative link and #anchor in README.md, docs/ and packages/*/README.md resolves', () => {
    const files = markdownFiles(repoRoot);
    expect(files).toContain('docs/production.md');
    expect(files).toContain('packages/iam-authz-dev/README.md');
    expect(brokenLinks(repoRoot, files, readRepo)).toEqual([]);
  });

  it('the README links to every page of docs/', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const linked = new Set(markdownLinks(readme).map(({ target }) => target.split('#')[0]));
    const pages = markdownFiles(repoRoot).filter((f) => f.startsWith('docs/'));
    expect(pages.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('slugs headings as GitHub does, and reports dead files and anchors with their line', () => {
    const pages: Record<string, string> = {
      'README.md': [
        '# iam-authz', // 1
        '## Fetch API (Next.js, Bun, Deno) — `iam-authz/fetch`', // 2
        '## Errors', // 3
        '## Errors', // 4: a repeat gets -1
        '```md', // 5
        '## Not a heading', // 6
        '[in a fence](#nowhere)', // 7
        '```', // 8
        '[ok](#fetch-api-nextjs-bun-deno--iam-authzfetch) [ok](#errors-1) [ok](docs/a.md#snake_case-and-dash) [site](https://example.com/#x)', // 9
        '[bad](#errors-2) [bad](docs/missing.md) [bad](docs/a.md#nope) [bad](#not-a-heading) `[code](#span)`', // 10
      ].join('\n'),
      'docs/a.md': ['# A', '## snake_case and dash', '[up](../README.md#errors) [up](../README.md#iam-authz) [bad](../README.md#Errors)'].join('\n'),
    };
    expect(brokenLinks('/', Object.keys(pages), (f) => pages[f])).toEqual([
      'README.md:10: #errors-2 (no such heading in README.md)',
      'README.md:10: docs/missing.md (no such file)',
      'README.md:10: docs/a.md#nope (no such heading in docs/a.md)',
      'README.md:10: #not-a-heading (no such heading in README.md)',
      'docs/a.md:3: ../README.md#Errors (no such heading in README.md)',
    ]);
  });
});
