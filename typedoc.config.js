// @ts-check
/**
 * TypeDoc configuration of the API reference (`npm run docs`, written to api-docs/, not committed).
 * The entry points come from package.json "exports" (through subpaths.js), so a new subpath is documented (and its
 * exports checked for TSDoc) without editing this file, and each is named by its import specifier
 * (`iam-authz/express`) rather than its source folder. Any warning fails the run.
 *
 * This file is also the TypeDoc plugin (`load`) that does the naming.
 */
import { Converter, ReflectionKind } from 'typedoc';
import { packageName, subpaths } from './subpaths.js';

/** Source folder (`adapters/express`) → import specifier (`iam-authz/express`). */
const specifiers = new Map(subpaths.map(({ specifier, source }) => [source.replace(/\/index\.ts$/, ''), specifier]));
const entryPoints = subpaths.map(({ source }) => `./${source}`);

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
  name: packageName,
  entryPoints,
  plugin: ['./typedoc.config.js'],
  // The repository's tsconfig: it holds both packages' sources (the build configs hold one each).
  tsconfig: './tsconfig.json',
  out: './api-docs',
  readme: 'none',
  excludePrivate: true,
  excludeInternal: true,
  // No public repository yet: source links would point at a local clone (and a checkout without a
  // git remote warns, which fails the run).
  disableSources: true,
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, invalidPath: true, rewrittenLink: true, notDocumented: true, unusedMergeModuleWith: true },
};

export default config;
