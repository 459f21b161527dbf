/**
 * `npm ci` on the oldest supported Node prints no `EBADENGINE`: no package in the lock file may
 * declare `engines.node` that excludes the oldest version `package.json` promises.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, test } from 'vitest';

// semver ships no types here (npm's own copy, in node_modules): the two functions used, typed.
const semver = createRequire(import.meta.url)('semver') as { minVersion(range: string): { version: string } | null; satisfies(version: string, range: string): boolean };
const read = (file: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as Record<string, unknown>;

test('every package of package-lock.json accepts the oldest supported Node', () => {
  const oldest = semver.minVersion((read('package.json')['engines'] as { node: string }).node)?.version as string;
  expect(oldest).toBe('20.19.0');
  const packages = read('package-lock.json')['packages'] as Record<string, { version?: string; engines?: { node?: string } | string[] }>;
  const excluding = Object.entries(packages)
    .filter(([, info]) => typeof info.engines === 'object' && !Array.isArray(info.engines) && typeof info.engines.node === 'string')
    .filter(([, info]) => !semver.satisfies(oldest, (info.engines as { node: string }).node))
    .map(([path, info]) => `${path}@${info.version ?? '?'} (${(info.engines as { node: string }).node})`);
  expect(excluding).toStrictEqual([]);
});
