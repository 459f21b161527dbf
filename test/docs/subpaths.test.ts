/**
 * package.json "exports" is the one place the subpaths are written. vitest.config.ts and
 * typedoc.config.js derive theirs from it through subpaths.js; tsconfig.json cannot, so this checks
 * its "paths" (used by tsc and tsx) against the same list.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { subpaths } from '../../subpaths.js';

describe('subpaths', () => {
  it('tsconfig.json "paths" maps exactly the subpaths of package.json "exports" to their sources', () => {
    const file = new URL('../../tsconfig.json', import.meta.url);
    const { config } = ts.parseConfigFileTextToJson('tsconfig.json', readFileSync(file, 'utf8')) as { config: { compilerOptions: { paths: Record<string, string[]> } } };
    const expected = Object.fromEntries(subpaths.map(({ specifier, source }) => [specifier, [`./${source}`]]));
    expect(config.compilerOptions.paths, 'update tsconfig.json "paths" to match package.json "exports"').toStrictEqual(expected);
  });

  it('the adapters\' internal entry (src/adapter/internal.ts) is no subpath: none of it is public', () => {
    expect(subpaths.map(({ source }) => source)).not.toContain('src/adapter/internal.ts');
  });

  it('every subpath has its source entry', () => {
    expect(subpaths.length).toBeGreaterThanOrEqual(6);
    for (const { source } of subpaths) expect(() => readFileSync(new URL(`../../${source}`, import.meta.url))).not.toThrow();
  });
});
