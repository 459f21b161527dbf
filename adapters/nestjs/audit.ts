/**
 * `auditRoutes(app)`: every HTTP route of a Nest application with what `IamGuard` enforces on it,
 * for the kit's audit. Reads Nest's modules and configuration after `app.init()`; routes and
 * guards are left as they are.
 */
import type { CanActivate, INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import type { RouteAudit } from '../../src/adapter/index.js';
import { audit, auditOptions, type RouteEntry } from '../../src/adapter/internal.js';
import { globalIamGuard, markOf, moduleMode } from './audit-marks.js';
import type { RoutingConfig } from './route-paths.js';
import { nestRoutes } from './routes.js';

/** What of Nest's `ApplicationConfig` the audit reads: where routes go, and the global guards. */
interface AppConfig extends RoutingConfig {
  getGlobalGuards(): readonly CanActivate[];
  getGlobalRequestGuards(): readonly { readonly metatype: unknown }[];
}

const CONFIG_METHODS: readonly (keyof AppConfig)[] = ['getGlobalPrefix', 'getGlobalPrefixOptions', 'getVersioning', 'getGlobalGuards', 'getGlobalRequestGuards'];

/**
 * The audit of `app`'s HTTP routes (its controllers' handlers; GraphQL resolvers and WebSocket
 * gateways are no routes): one entry per method and path, in OpenAPI form with the global prefix,
 * RouterModule path and URI version included, and the findings; with `throwOn`, an `Error` naming
 * each route to fix. Call it after `await app.init()` (or `app.listen()`). Only `IamGuard` counts:
 * what another guard checks cannot be read. Handlers sharing a method and path (versions told
 * apart by a header or media type) are listed once, as guarded as the least guarded of them.
 */
export function auditRoutes(app: INestApplication, options?: { readonly throwOn?: readonly ('unguarded' | 'unscoped-parameter')[] }): RouteAudit {
  const { config, modules } = applicationOf(app);
  const throwOn = auditOptions('auditRoutes', options);
  const mode = moduleMode(modules);
  const global = globalIamGuard(config.getGlobalGuards(), config.getGlobalRequestGuards());
  const byRoute = new Map<string, RouteEntry[]>();
  for (const route of nestRoutes(modules, config)) {
    const marks = [markOf(route, global, mode)];
    for (const method of route.methods) {
      for (const path of route.paths) byRoute.set(`${method} ${path}`, [...(byRoute.get(`${method} ${path}`) ?? []), { method, path, marks }]);
    }
  }
  // Handlers of one method and path are alternatives: the kit's audit counts the least guarded.
  return audit('auditRoutes', [...byRoute.values()].flat(), throwOn);
}

/** The application's modules and configuration; a `TypeError` for anything but a Nest HTTP application. */
function applicationOf(app: unknown): { config: AppConfig; modules: ModulesContainer } {
  const candidate = app as { config?: Partial<AppConfig>; isInitialized?: unknown; get?: unknown; getHttpAdapter?: unknown } | null | undefined;
  // NestApplication's own `config` (its ApplicationConfig, @nestjs/core 8 to 11) and
  // `isInitialized`: the global prefix and versioning have no public getter.
  const config = typeof candidate === 'object' && candidate !== null ? candidate.config : undefined;
  if (typeof candidate?.get !== 'function' || typeof candidate.getHttpAdapter !== 'function' || !CONFIG_METHODS.every((m) => typeof config?.[m] === 'function')) {
    throw new TypeError('auditRoutes: pass the INestApplication (from NestFactory.create(AppModule), or a testing module\'s createNestApplication()), after `await app.init()`');
  }
  if (candidate.isInitialized !== true) {
    throw new Error('auditRoutes: call it after `await app.init()` (or `app.listen()`): Nest mounts the routes there, with the global prefix and versioning set before it');
  }
  return { config: config as AppConfig, modules: (app as INestApplication).get(ModulesContainer) };
}
