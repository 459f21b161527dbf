// @ts-check
/**
 * The package's subpaths, read from package.json "exports" — the one place they are written.
 * vitest.config.ts (aliases) and typedoc.config.js (entry points) derive theirs from this;
 * tsconfig.json "paths" cannot import code, so test/docs/subpaths.test.ts checks it against this list.
 */
import { readFileSync } from 'node:fs';
import { URL } from 'node:url';

/** @typedef {{ specifier: string; source: string }} Subpath */

/** @type {{ name: string; exports: Record<string, string | { types?: string }> }} */
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- JSON.parse; the type is the JSDoc above
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/**
 * Every subpath with types: its import specifier (`iam-authz/express`) and its source entry
 * relative to the repository root (`adapters/express/index.ts`).
 * @type {readonly Subpath[]}
 */
export const subpaths = Object.entries(pkg.exports).flatMap(([subpath, target]) => {
  const types = typeof target === 'object' ? target.types : undefined;
  if (types === undefined) return [];
  // "./dist/adapters/express/index.d.ts" -> "adapters/express/index.ts"
  const source = types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
  return [{ specifier: `${pkg.name}${subpath.slice(1)}`, source }];
});

/** The package name (`iam-authz`). */
export const packageName = pkg.name;
