/** iam-authz: verify IAM access tokens and decide per route whether the caller holds a permission. */
export { createAuthorizer, type Authorizer } from './authorizer.js';
export type { AuthorizerOptions, JwksOptions, JwkSet, TokenCacheOptions } from './options.js';
export type { AccessReference, Identity, IamClaims, IamTokenHeader } from './types.js';
export {
  IamAuthzError,
  TokenMissingError,
  TokenInvalidError,
  TokenExpiredError,
  TokenNotYetValidError,
  JwksUnavailableError,
  PolicyUnavailableError,
  isIamAuthzError,
  type IamAuthzErrorCode,
} from './errors.js';
export { channels } from './diagnostics.js';
