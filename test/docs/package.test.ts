/**
 * What the packed tarballs hold. The library's: the LICENSE and docs ship, the repository-only
 * directories do not, no development code (the development IAM, its console, the CLI) and no images
 * — those ship in iam-authz-dev —, and every relative link in a shipped Markdown file points at a
 * file that ships (or at a heading that exists), so the README works from node_modules too. One
 * deliberate exception: the README's list of example projects links into `examples/`, which stays
 * in the repository (links.test.ts checks those links resolve there); the list says so.
 * The lists are taken after a build (ensureBuilt), so a dev file under dist/ would be seen.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './build.js';
import { markdownLinks, slugs } from './links.js';
import { repoRoot } from './snippets.js';

interface Pack { size: number; unpackedSize: number; files: { path: string }[] }

/** `npm pack --dry-run` of the package in `dir`: what its tarball would hold. */
function pack(dir: string): Pack {
  // --ignore-scripts: the build is ensureBuilt's; the listing runs nothing.
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return (JSON.parse(out) as Pack[])[0]!;
}

const devRoot = join(repoRoot, 'packages/iam-authz-dev');
let library: Pack;
let files: Set<string>;
let devFiles: Set<string>;

beforeAll(() => {
  ensureBuilt(repoRoot);
  library = pack(repoRoot);
  files = new Set(library.files.map((f) => f.path));
  devFiles = new Set(pack(devRoot).files.map((f) => f.path));
}, 180_000);

describe('npm pack', () => {
  it('ships the LICENSE, the README, the CHANGELOG and docs/', () => {
    for (const f of ['LICENSE', 'README.md', 'CHANGELOG.md', 'package.json', 'docs/protocol.md']) expect(files, f).toContain(f);
    expect(readFileSync(join(repoRoot, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the iam-authz authors\n/);
  });

  it('does not ship tests, benchmarks, examples, sources or the generated API reference', () => {
    const stray = [...files].filter((f) => /^(test|bench|examples|src|adapters|api-docs|node_modules)\//.test(f) || f.endsWith('.map'));
    expect(stray).toEqual([]);
  });

  it('the library holds no development code, no images and no binary: those are iam-authz-dev\'s', () => {
    expect([...files].filter((f) => f.startsWith('dist/')).length).toBeGreaterThan(20); // built: the checks below see dist/
    const dev = [...files].filter((f) => /^dist\/src\/(testing|cli|console)\//.test(f) || /\.(png|jpe?g|gif|svg|webp|html|css)$/.test(f));
    expect(dev).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin?: unknown; exports: Record<string, unknown> };
    expect(pkg.bin).toBeUndefined();
    expect(Object.keys(pkg.exports)).not.toContain('./testing');
  });

  it('the README states the library tarball\'s size (within 10%)', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const [, packed, unpacked] = /about (\d+) kB packed, (\d+) kB unpacked/.exec(readme) ?? [];
    expect(packed, 'README: "about N kB packed, M kB unpacked"').toBeDefined();
    expect(Math.abs(Number(packed) * 1000 - library.size) / library.size, `packed: ${library.size} bytes`).toBeLessThan(0.1);
    expect(Math.abs(Number(unpacked) * 1000 - library.unpackedSize) / library.unpackedSize, `unpacked: ${library.unpackedSize} bytes`).toBeLessThan(0.1);
  });

  it('iam-authz-dev holds the development IAM, the console with its assets and image, and the CLI', () => {
    for (const f of [
      'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/console/index.js', 'dist/src/console/index.d.ts',
      'dist/src/console/web/page.html', 'dist/src/console/web/page.css', 'dist/src/console/web/page.js',
      'dist/src/cli/main.js', 'docs/console.png', 'README.md', 'LICENSE', 'package.json',
    ]) expect(devFiles, f).toContain(f);
    expect([...devFiles].filter((f) => /^(test|src|node_modules)\//.test(f) || f.endsWith('.map') || f.endsWith('page.ts'))).toEqual([]);
    const pkg = JSON.parse(readFileSync(join(devRoot, 'package.json'), 'utf8')) as { bin: Record<string, string>; peerDependencies: Record<string, string> };
    expect(pkg.bin).toStrictEqual({ 'iam-authz': './dist/src/cli/main.js' });
    expect(readFileSync(join(devRoot, pkg.bin['iam-authz']!), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(pkg.peerDependencies['iam-authz']).toBe((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('every relative link in a shipped Markdown file resolves inside its tarball', () => {
    expect(brokenLinks(repoRoot, files)).toEqual([]);
    expect(brokenLinks(devRoot, devFiles)).toEqual([]);
  });
});

function brokenLinks(root: string, files: Set<string>): string[] {
    const broken: string[] = [];
    for (const file of [...files].filter((f) => f.endsWith('.md'))) {
      const markdown = readFileSync(join(root, file), 'utf8');
      for (const { target, line } of markdownLinks(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const [path = '', anchor] = target.split('#', 2);
        const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        if (file === 'README.md' && resolved.startsWith('examples/')) continue; // repository-only, by design (see above)
        if (path !== '' && !files.has(resolved) && ![...files].some((f) => f.startsWith(`${resolved.replace(/\/$/, '')}/`))) {
          broken.push(`${file}:${line}: ${target} (not in the tarball)`);
        } else if (anchor !== undefined && resolved.endsWith('.md') && !slugs(readFileSync(join(root, resolved), 'utf8')).has(anchor)) {
          broken.push(`${file}:${line}: ${target} (no such heading)`);
        }
      }
    }
    return broken;
}
