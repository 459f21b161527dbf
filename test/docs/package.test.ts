/**
 * What the packed tarball holds (issue 15 §3): the LICENSE and docs ship, the repository-only
 * directories do not, and every relative link in a shipped Markdown file points at a file that ships
 * (or at a heading that exists), so the README works from node_modules too.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { markdownLinks, slugs } from './links.js';
import { repoRoot } from './snippets.js';

let files: Set<string>;

beforeAll(() => {
  // --ignore-scripts: listing the contents needs no build; dist/ may or may not exist here.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  files = new Set(pack!.files.map((f) => f.path));
}, 60_000);

describe('npm pack', () => {
  it('ships the LICENSE, the README, the CHANGELOG and docs/', () => {
    for (const f of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'docs/protocol.md']) expect(files, f).toContain(f);
    expect(readFileSync(join(repoRoot, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the iam-authz authors\n/);
  });

  it('does not ship tests, benchmarks, examples, sources or the generated API reference', () => {
    const stray = [...files].filter((f) => /^(test|bench|examples|src|adapters|api-docs|node_modules)\//.test(f) || f.endsWith('.map'));
    expect(stray).toEqual([]);
  });

  it('every relative link in a shipped Markdown file resolves inside the tarball', () => {
    const broken: string[] = [];
    for (const file of [...files].filter((f) => f.endsWith('.md'))) {
      const markdown = readFileSync(join(repoRoot, file), 'utf8');
      for (const { target, line } of markdownLinks(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const [path = '', anchor] = target.split('#', 2);
        const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        if (path !== '' && !files.has(resolved) && ![...files].some((f) => f.startsWith(`${resolved.replace(/\/$/, '')}/`))) {
          broken.push(`${file}:${line}: ${target} (not in the tarball)`);
        } else if (anchor !== undefined && resolved.endsWith('.md') && !slugs(readFileSync(join(repoRoot, resolved), 'utf8')).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
