/**
 * iam-authz: verify IAM access tokens and decide per route whether the caller holds a permission.
 * The framework adapters are `iam-authz/express`, `/koa`, `/fastify`, `/nestjs`, `/hono` and
 * `/fetch`; the kit to write one for another framework is `iam-authz/adapter`; the token client,
 * with its `TokenExchangeError`, is `iam-authz/client`.
 */
export { createAuthorizer, type Authorizer, type AuthorizeQuery, type AccessibleQuery, type PermissionsQuery } from './authorizer.js';
export type { ResourceQuery } from './engine/resource.js';
export type { AuthorizerOptions, JwksOptions, JwkSet, PolicyOptions, TokenCacheOptions } from './options.js';
export type { HintChannel } from './policy/hints.js';
export type { DecisionEvent } from './decider/decision-log.js';
export type { InventoryEntry, UngrantedPermission } from './inventory.js';
export type { Watch } from './watch/watcher.js';
// What applications read: a verified caller, a decision, and the state a guard attaches.
export type { Decision, GuardMode, IamClaims, IamState, Identity } from './types.js';
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
  TokenRevokedError,
  AuthorizerClosedError,
  isIamAuthzError,
  type IamAuthzErrorCode,
} from './errors.js';
export { channels } from './diagnostics.js';
