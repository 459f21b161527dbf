/**
 * What `IamGuard` enforces on a route, for the audit: where it runs (global, or by `@UseGuards`,
 * which every requirement decorator adds) it checks the handler's requirement, else its class's;
 * no other guard can be read. And, of handlers sharing a route, which one the audit reports.
 */
import type { CanActivate } from '@nestjs/common';
import type { ModulesContainer } from '@nestjs/core';
import type { GuardMode } from '../../src/index.js';
import { requirementMark, type GuardMark } from '../../src/adapter/internal.js';
import { IAM_AUTHZ_CORE, type IamAuthzCore } from './core.js';
import { IamGuard } from './guard.js';
import { requirementOf } from './metadata.js';
import type { NestRoute } from './routes.js';

/** What `@UseGuards` records (@nestjs/common/constants.js `GUARDS_METADATA`). */
const GUARDS = '__guards__';

/** The mode of `IamAuthzModule`'s permission guards (`'enforce'` without the module: nothing then runs). */
export function moduleMode(modules: ModulesContainer): GuardMode {
  for (const module of modules.values()) {
    const core = module.providers.get(IAM_AUTHZ_CORE)?.instance as IamAuthzCore | undefined;
    if (typeof core === 'object') return core.mode;
  }
  return 'enforce';
}

/** Whether `IamGuard` is among the global guards (`APP_GUARD`, `useGlobalGuards`). */
export function globalIamGuard(guards: readonly CanActivate[], requestScoped: readonly { readonly metatype: unknown }[]): boolean {
  return guards.some(isIamGuard) || requestScoped.some((wrapper) => wrapper.metatype === IamGuard);
}

/** `IamGuard` itself (the class, as `@UseGuards` records it, or an instance); not a subclass, which may check otherwise. */
function isIamGuard(guard: unknown): boolean {
  return guard === IamGuard || (typeof guard === 'object' && guard !== null && guard.constructor === IamGuard);
}

/** What `IamGuard` enforces on `route`, as it reads the requirement; `undefined` where it does not run. */
export function markOf(route: NestRoute, global: boolean, mode: GuardMode): GuardMark | undefined {
  const requirement = requirementOf(route.type, route.handler);
  const guards = [Reflect.getMetadata(GUARDS, route.type), Reflect.getMetadata(GUARDS, route.handler)] as unknown[];
  const guarded = global || guards.some((list) => Array.isArray(list) && list.some(isIamGuard));
  // @Public() marks a route public on purpose whether or not a guard runs.
  if (!guarded && requirement?.kind !== 'public') return undefined;
  return requirementMark(requirement, mode, guarded);
}
