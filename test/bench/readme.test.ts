/**
 * bench/README.md opens with a table of which command answers which question: every benchmark of
 * package.json (`bench`, `bench:*`, `soak`) has a row, every row names a script that exists, and
 * every script its npm command runs lives under one of the groups of the layout.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(`${root}bench/README.md`, 'utf8');
const scripts = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
const benchmarks = Object.keys(scripts).filter((name) => name === 'bench' || name === 'soak' || name.startsWith('bench:'));

it('the index of bench/README.md has a row for every benchmark of package.json, and no other', () => {
  const index = readme.slice(readme.indexOf('## Which command answers which question'), readme.indexOf('## Layout'));
  const rows = [...index.matchAll(/^\| `npm run ([\w:-]+)` \|/gm)].map((m) => m[1]);
  expect(rows.sort()).toEqual([...benchmarks].sort());
  for (const [, link] of index.matchAll(/\]\(([^)#]+)\)/g)) expect(existsSync(`${root}bench/${link}`), link).toBe(true);
});

it('every benchmark command runs a script of a group that exists', () => {
  for (const name of benchmarks) {
    for (const [path] of scripts[name]!.matchAll(/bench\/[\w/.-]+/g)) {
      expect(path, name).toMatch(/^bench\/(micro|http|ceiling|scenarios)\//);
      expect(existsSync(`${root}${path}`), `${name}: ${path}`).toBe(true);
    }
  }
});
