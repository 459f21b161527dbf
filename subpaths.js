// @ts-check
/**
 * The subpaths of the repository's packages — the library (this directory) and the development kit
 * (packages/iam-authz-dev) — read from their package.json "exports", the one place they are written.
 * vitest.config.ts (aliases) and typedoc.config.js (entry points) derive theirs from this;
 * tsconfig.json "paths" cannot import code, so test/docs/subpaths.test.ts checks it against this list.
 */
import { readFileSync } from 'node:fs';
import { URL } from 'node:url';

/** @typedef {{ specifier: string; source: string }} Subpath */

/** The packages of the npm workspace, by directory relative to the repository root. */
export const packageDirs = /** @type {const} */ (['', 'packages/iam-authz-dev/']);

/**
 * @param {string} dir
 * @returns {{ name: string; exports: Record<string, string | { types?: string }> }}
 */
function readPackage(dir) {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- JSON.parse; the type is the JSDoc above
  return JSON.parse(readFileSync(new URL(`./${dir}package.json`, import.meta.url), 'utf8'));
}

/**
 * Every subpath with types: its import specifier (`iam-authz/express`) and its source entry
 * relative to the repository root (`adapters/express/index.ts`).
 * @type {readonly Subpath[]}
 */
export const subpaths = packageDirs.flatMap((dir) => {
  const pkg = readPackage(dir);
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    const types = typeof target === 'object' ? target.types : undefined;
    if (types === undefined) return [];
    // "./dist/adapters/express/index.d.ts" -> "adapters/express/index.ts"
    const source = dir + types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
    return [{ specifier: `${pkg.name}${subpath.slice(1)}`, source }];
  });
});

/** The library's package name (`iam-authz`). */
export const packageName = readPackage('').name;
