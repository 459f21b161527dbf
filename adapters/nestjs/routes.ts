/**
 * The HTTP routes of a Nest application as Nest mounts them, read from its modules (the controllers
 * each declares) and its configuration, never from the HTTP adapter, so the Express and the Fastify
 * platform give the same table: @nestjs/core 11's routes-resolver.js and paths-explorer.js over
 * the decorators' metadata, in the audit's terms (HTTP methods; paths in OpenAPI form).
 */
import { RequestMethod } from '@nestjs/common';
import { MetadataScanner, type ModulesContainer } from '@nestjs/core';
import { openApiPath } from '../../src/adapter/internal.js';
import { addLeadingSlash, fullPaths, type RoutingConfig, type VersionValue } from './route-paths.js';

// The metadata keys Nest's own decorators write (@nestjs/common/constants.js).
const PATH = 'path';
const METHOD = 'method';
const VERSION = '__version__';
const MODULE_PATH = '__module_path__';

/** The methods `@All()` answers, each listed as its own operation. */
const ALL_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

/** One handler of a controller, mounted for each of `methods` at each of `paths`. */
export interface NestRoute {
  readonly type: abstract new (...args: never[]) => unknown;
  /** The method itself (the prototype's), where the decorators keep their metadata. */
  readonly handler: object;
  readonly methods: readonly string[];
  /** OpenAPI form: `/api/v1/fleet/{vin}`. */
  readonly paths: readonly string[];
}

const scanner = new MetadataScanner();
const meta = (key: string, target: object): unknown => Reflect.getMetadata(key, target);

/** Every HTTP handler of every controller of `modules`, where Nest mounts it. */
export function nestRoutes(modules: ModulesContainer, config: RoutingConfig): NestRoute[] {
  const routes: NestRoute[] = [];
  for (const module of modules.values()) {
    const modulePath = meta(MODULE_PATH + modules.applicationId, module.metatype) ?? meta(MODULE_PATH, module.metatype);
    for (const wrapper of module.controllers.values()) {
      const type = wrapper.metatype as NestRoute['type'] | null;
      if (typeof type !== 'function') continue;
      const versioning = config.getVersioning();
      const controllerVersion = versioning ? (meta(VERSION, type) ?? versioning.defaultVersion) as VersionValue | undefined : undefined;
      const prototype = type.prototype as Record<string, unknown>;
      for (const key of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[key];
        if (typeof handler !== 'function' || meta(PATH, handler) === undefined) continue;
        const method = meta(METHOD, handler) as RequestMethod;
        // The method's version wins when it has one (`||` in route-path-factory.js: '' is none).
        const own = meta(VERSION, handler) as VersionValue | undefined;
        const version = own === undefined || own === '' ? controllerVersion : own;
        const paths = list(meta(PATH, type)).flatMap((ctrlPath) => list(meta(PATH, handler)).flatMap((methodPath) =>
          fullPaths({ modulePath: typeof modulePath === 'string' ? modulePath : undefined, ctrlPath, methodPath, version }, method, config)));
        const verb = RequestMethod[method] as string | undefined;
        const methods = method === RequestMethod.ALL ? ALL_METHODS : verb === undefined ? [] : [verb];
        routes.push({ type, handler, methods, paths: [...new Set(paths.flatMap(templates))] });
      }
    }
  }
  return routes;
}

/** A path or paths (`@Controller(['a', 'b'])`, `@Get([':id', 'by-id/:id'])`), each with a leading slash. */
function list(value: unknown): string[] {
  return (Array.isArray(value) ? (value as unknown[]) : [value]).map((p) => addLeadingSlash(typeof p === 'string' ? p : ''));
}

/**
 * A path as Nest hands it to the router, in OpenAPI form: `:name` → `{name}`; a wildcard `*name`
 * (path-to-regexp 8; a trailing `*` is `{*path}`, as Nest converts it) → `{name}`; an optional
 * group `{…}` gives the path without it and the path with it.
 */
function templates(path: string): string[] {
  const legacy = path.replace(/\/(\*|\(\.\*\))$/, '/{*path}');
  const group = /\{([^{}]*)\}/.exec(legacy);
  if (group === null) return [openApiPath(legacy.replace(/\*([A-Za-z_$][\w$]*)/g, ':$1'))];
  const before = legacy.slice(0, group.index);
  const after = legacy.slice(group.index + group[0].length);
  return [...templates(before + after), ...templates(before + (group[1] ?? '') + after)];
}
