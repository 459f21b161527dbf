// @ts-check
/**
 * TypeDoc configuration of the API reference (`npm run docs`, written to api-docs/, not committed).
 * The entry points come from package.json "exports", so a new subpath is documented (and its
 * exports checked for TSDoc) without editing this file, and each is named by its import specifier
 * (`iam-authz/express`) rather than its source folder. Any warning fails the run.
 *
 * This file is also the TypeDoc plugin (`load`) that does the naming.
 */
import { readFileSync } from 'node:fs';
import { URL } from 'node:url';
import { Converter, ReflectionKind } from 'typedoc';

/** @type {{ name: string; exports: Record<string, string | { types?: string }> }} */
// eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- JSON.parse; the type is the JSDoc above
const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** Source folder (`adapters/express`) → import specifier (`iam-authz/express`), and the entry files. */
/** @type {Map<string, string>} */
const specifiers = new Map();
/** @type {string[]} */
const entryPoints = [];
for (const [subpath, target] of Object.entries(pkg.exports)) {
  const types = typeof target === 'object' ? target.types : undefined;
  if (types === undefined) continue;
  // "./dist/adapters/express/index.d.ts" -> "adapters/express/index.ts"
  const source = types.replace(/^\.\/dist\//, '').replace(/\.d\.ts$/, '.ts');
  entryPoints.push(`./${source}`);
  specifiers.set(source.replace(/\/index\.ts$/, ''), `${pkg.name}${subpath.slice(1)}`);
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.getChildrenByKind(ReflectionKind.Module)) {
      module.name = specifiers.get(module.name) ?? module.name;
    }
  });
}

/** @type {Partial<import('typedoc').TypeDocOptions>} */
const config = {
  name: pkg.name,
  entryPoints,
  plugin: ['./typedoc.config.js'],
  tsconfig: './tsconfig.build.json',
  out: './api-docs',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, invalidPath: true, rewrittenLink: true, notDocumented: true, unusedMergeModuleWith: true },
};

export default config;
