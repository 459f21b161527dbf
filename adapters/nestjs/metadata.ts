/**
 * Where the decorators keep what a route requires, and how it is read back: the one module the
 * decorators (requirements.ts), the guard (guard.ts) and the start-up scan (discovery.ts) share.
 */
import { Reflector } from '@nestjs/core';
import type { Requirement } from '../../src/adapter/internal.js';
import type { IamRequestView } from './locate.js';

/** The metadata key under which the decorators store a route's {@link IamRequirement}. */
export const IAM_REQUIREMENT = 'iam-authz:requirement';

/**
 * What a handler or controller requires: `@Public()` (`kind: 'public'`), `@Authenticated()`
 * (`'authenticated'`, with `optional`), `@RequirePermission` or `@RequireAnyPermission`
 * (`'permission'`, the arguments as `parsePermissionArgs` checked them). The guard builds (and
 * caches) one core guard per requirement.
 */
export type IamRequirement = Requirement<IamRequestView>;

const reflector = new Reflector();

/** The requirement of a handler as `IamGuard` reads it: the handler's, else its class's. */
export function requirementOf(type: object, handler: object): IamRequirement | undefined {
  return reflector.getAllAndOverride<IamRequirement | undefined>(IAM_REQUIREMENT, [handler as never, type as never]);
}
