/**
 * Where Nest mounts a handler: its full paths from the global prefix (but where its `exclude`
 * matches), RouterModule path, controller path, method path and, with URI versioning, version —
 * @nestjs/core 11's route-path-factory.js, step by step, over the application's configuration.
 */
import { RequestMethod, VERSION_NEUTRAL, VersioningType, type VersioningOptions } from '@nestjs/common';

/** What of Nest's `ApplicationConfig` places routes. */
export interface RoutingConfig {
  getGlobalPrefix(): string;
  /** `exclude` as `setGlobalPrefix` compiled it. */
  getGlobalPrefixOptions(): { exclude?: readonly { readonly requestMethod: RequestMethod; readonly pathRegex: RegExp }[] };
  getVersioning(): VersioningOptions | undefined;
}

export type VersionValue = string | typeof VERSION_NEUTRAL | readonly (string | typeof VERSION_NEUTRAL)[];

/** One controller path and one method path of a handler, and what else places it. */
export interface PathParts {
  readonly modulePath: string | undefined;
  readonly ctrlPath: string;
  readonly methodPath: string;
  /** The method's version, else the controller's, else the default one (with versioning on). */
  readonly version: VersionValue | undefined;
}

/** The full paths of `parts` for `method` (`create` in route-path-factory.js). */
export function fullPaths(parts: PathParts, method: RequestMethod, config: RoutingConfig): string[] {
  const globalPrefix = addLeadingSlash(config.getGlobalPrefix());
  const versioning = config.getVersioning();
  const { version } = parts;
  let versioned: { path: string; version?: string | typeof VERSION_NEUTRAL }[] = [{ path: '' }];
  if (version !== undefined && version !== '' && versioning?.type === VersioningType.URI) {
    versioned = (Array.isArray(version) ? version : [version]).map((v: string | typeof VERSION_NEUTRAL) =>
      ({ path: v === VERSION_NEUTRAL ? '' : `/${versionPrefix(versioning)}${v}`, version: v }));
  }
  return versioned.map(({ path, version: one }) => {
    let full = path;
    for (const fragment of [parts.modulePath, parts.ctrlPath, parts.methodPath]) {
      if (fragment) full = stripEndSlash(full) + addLeadingSlash(fragment);
    }
    if (!globalPrefix || excluded(full, method, one, config)) return full;
    return stripEndSlash(globalPrefix) + full;
  }).map((path) => addLeadingSlash(path || '/')).map((path) => (path === '/' ? path : stripEndSlash(path)));
}

/** Whether the global prefix's `exclude` keeps `path` (its URI version set aside) unprefixed for `method`. */
function excluded(path: string, method: RequestMethod, version: string | typeof VERSION_NEUTRAL | undefined, config: RoutingConfig): boolean {
  const routes = config.getGlobalPrefixOptions().exclude;
  if (!Array.isArray(routes)) return false;
  const versioning = config.getVersioning();
  let bare = path;
  if (typeof version === 'string' && versioning?.type === VersioningType.URI) {
    const prefix = `/${versionPrefix(versioning)}${version}`;
    if (bare.startsWith(prefix)) bare = bare.replace(prefix, '');
  }
  // -1: RequestMethod.ALL as older Nest versions wrote it.
  return (routes as NonNullable<ReturnType<RoutingConfig['getGlobalPrefixOptions']>['exclude']>).some((route) =>
    (route.requestMethod === RequestMethod.ALL || (route.requestMethod as number) === -1 || route.requestMethod === method) && route.pathRegex.test(addLeadingSlash(bare)));
}

function versionPrefix(versioning: VersioningOptions): string {
  if (versioning.type !== VersioningType.URI || versioning.prefix === undefined) return 'v';
  return versioning.prefix === false ? '' : versioning.prefix;
}

/** shared.utils.js `addLeadingSlash`: `{/…}` (an optional segment of path-to-regexp) keeps its form. */
export function addLeadingSlash(path: string): string {
  if (!path) return '';
  return !path.startsWith('/') && !path.startsWith('{/') ? `/${path}` : path;
}

function stripEndSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}
