/**
 * Finds, in a running Nest application, the handlers the decorators protect (controllers, GraphQL
 * resolvers, gateways), so that a wiring the guard cannot reach stops the start-up with an error
 * naming them instead of serving them unchecked.
 */
import { MetadataScanner, Reflector, type ModulesContainer } from '@nestjs/core';
import type { IamRequirement } from './requirements.js';

/** The metadata key under which the decorators store a route's {@link IamRequirement}. */
export const IAM_REQUIREMENT = 'iam-authz:requirement';

/** One handler (a method of a controller, resolver or gateway) with a requirement other than `@Public()`. */
export interface ProtectedHandler {
  /** `Class.method`. */
  readonly name: string;
  readonly type: abstract new (...args: never[]) => unknown;
  readonly method: string;
  /** The method itself, where frameworks keep their own metadata. */
  readonly handler: object;
}

const reflector = new Reflector();
const scanner = new MetadataScanner();

/** The requirement of a handler as `IamGuard` reads it: the handler's, else its class's. */
export function requirementOf(type: object, handler: object): IamRequirement | undefined {
  return reflector.getAllAndOverride<IamRequirement | undefined>(IAM_REQUIREMENT, [handler as never, type as never]);
}

/** Metadata a decorator set on a class or method. */
const meta = (key: string, target: object): unknown => reflector.get<unknown>(key, target as never);

/** Every method, in every module's controllers and providers, that a decorator protects. */
export function protectedHandlers(modules: ModulesContainer): ProtectedHandler[] {
  const found: ProtectedHandler[] = [];
  const seen = new Set<unknown>();
  for (const module of modules.values()) {
    for (const wrapper of [...module.controllers.values(), ...module.providers.values()]) {
      const instance: unknown = wrapper.instance;
      if (typeof instance !== 'object' || instance === null) continue;
      const prototype = Object.getPrototypeOf(instance) as object | null;
      if (prototype === null || prototype === Object.prototype || seen.has(prototype)) continue;
      seen.add(prototype);
      const type = prototype.constructor as ProtectedHandler['type'];
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const requirement = requirementOf(type, handler);
        if (requirement !== undefined && requirement.kind !== 'public') found.push({ name: `${type.name}.${method}`, type, method, handler });
      }
    }
  }
  return found;
}

/** "A.b, C.d and 3 more". */
export function listNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

// @nestjs/graphql's metadata keys and option token (graphql.constants.ts), read without importing
// it: applications without GraphQL need not install it.
const RESOLVER_TYPE = 'graphql:resolver_type';
const RESOLVER_NAME = 'graphql:resolver_name';
const RESOLVE_PROPERTY = 'graphql:resolve_property';
const RESOLVE_REFERENCE = 'graphql:resolve_reference';
const GRAPHQL_MODULE_OPTIONS = 'GqlModuleOptions';
const ROOT_TYPES = new Set(['Query', 'Mutation', 'Subscription']);

/**
 * The protected GraphQL field resolvers (`@ResolveField`, `@ResolveReference`) that Nest will call
 * without guards: Nest applies guards to a field resolver only when the GraphQL module's options
 * say `fieldResolverEnhancers: ['guards']` (resolvers-explorer.service.ts).
 */
export function unguardedFieldResolvers(modules: ModulesContainer): string[] {
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
