/**
 * GraphQL field resolvers under the decorators: Nest runs no guards on them unless the GraphQL
 * module asks for it, so a protected one would be served unchecked; the module refuses to start.
 */
import { Reflector, type ModulesContainer } from '@nestjs/core';
import { listNames, protectedHandlers } from './discovery.js';

// @nestjs/graphql's metadata keys and option token (graphql.constants.ts), read without importing
// it: applications without GraphQL need not install it.
const RESOLVER_TYPE = 'graphql:resolver_type';
const RESOLVER_NAME = 'graphql:resolver_name';
const RESOLVE_PROPERTY = 'graphql:resolve_property';
const RESOLVE_REFERENCE = 'graphql:resolve_reference';
const GRAPHQL_MODULE_OPTIONS = 'GqlModuleOptions';
const ROOT_TYPES = new Set(['Query', 'Mutation', 'Subscription']);

const reflector = new Reflector();
/** Metadata a decorator set on a class or method. */
const meta = (key: string, target: object): unknown => reflector.get<unknown>(key, target as never);

/**
 * The protected GraphQL field resolvers (`@ResolveField`, `@ResolveReference`) that Nest will call
 * without guards: Nest applies guards to a field resolver only when the GraphQL module's options
 * say `fieldResolverEnhancers: ['guards']` (resolvers-explorer.service.ts).
 */
function unguardedFieldResolvers(modules: ModulesContainer): string[] {
  const options: { fieldResolverEnhancers?: unknown }[] = [];
  for (const module of modules.values()) {
    const value: unknown = module.providers.get(GRAPHQL_MODULE_OPTIONS)?.instance;
    if (typeof value === 'object' && value !== null) options.push(value);
  }
  // No GraphQL module: no resolver is served.
  if (options.length === 0) return [];
  const guarded = options.every((o) => Array.isArray(o.fieldResolverEnhancers) && (o.fieldResolverEnhancers as unknown[]).includes('guards'));
  if (guarded) return [];
  const names: string[] = [];
  for (const { type, method, handler, name } of protectedHandlers(modules)) {
    const resolverType = meta(RESOLVER_TYPE, handler) ?? meta(RESOLVER_TYPE, type);
    if (resolverType === undefined || (typeof resolverType === 'string' && ROOT_TYPES.has(resolverType))) continue;
    if (meta(RESOLVE_PROPERTY, handler) !== true && meta(RESOLVE_REFERENCE, handler) !== true) continue;
    const field = meta(RESOLVER_NAME, handler);
    names.push(`${name} (field "${typeof field === 'string' ? field : method}")`);
  }
  return names;
}

/** Refuses to start when a protected field resolver would run without guards, naming it and the fix. */
export function refuseUnguardedFieldResolvers(modules: ModulesContainer): void {
  const unguarded = unguardedFieldResolvers(modules);
  if (unguarded.length === 0) return;
  throw new Error(`IamAuthzModule: the GraphQL field resolvers ${listNames(unguarded)} carry a requirement, but Nest runs no guards on field resolvers; `
    + `set GraphQLModule.forRoot({ ..., fieldResolverEnhancers: ['guards'] })`);
}
