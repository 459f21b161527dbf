/** iam-authz: verify IAM access tokens and decide per route whether the caller holds a permission. */
export type { DecisionEvent } from './decision-log.js';
export { createAuthorizer, type Authorizer, type AuthorizeQuery, type AccessibleQuery, type PermissionsQuery, type ReadyOptions, type ReadyReport, type AuthorizerStatus, type CacheStatus } from './authorizer.js';
export type { InventoryEntry, InventoryRoute, UngrantedPermission } from './inventory.js';
export type { Decision, DecisionReason } from './types.js';
export type { ResourceQuery } from './engine/resource.js';
export type { RolePolicy, Role, ServicePolicy, PermissionRef } from './types.js';
export type { AuthorizerOptions, JwksOptions, JwkSet, PolicyOptions, TokenCacheOptions } from './options.js';
export type { AccessReference, AccessibleResource, Caller, HeldPermission, Identity, IamClaims, IamTokenHeader } from './types.js';
export {
  IamAuthzError,
  TokenMissingError,
  TokenInvalidError,
  TokenExpiredError,
  TokenNotYetValidError,
  TokenRejectedError,
  JwksUnavailableError,
  PolicyUnavailableError,
  PermissionDeniedError,
  AuthorizerClosedError,
  TokenExchangeError,
  isIamAuthzError,
  type IamAuthzErrorCode,
} from './errors.js';
export { channels } from './diagnostics.js';
export type { HintChannel, PolicyHint } from './policy/hints.js';
export type { Logger, LogFields } from './lib/logger.js';
// What applications read: the state a guard attaches, a route's mode, an error's problem body.
// The adapter kit (createGuards, wrapGuards, Guard, toErrorResponse, …) is `iam-authz/adapter`.
export type { IamState, GuardMode } from './types.js';
export type { ProblemDetails } from './errors.js';
