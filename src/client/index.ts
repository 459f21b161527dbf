/**
 * iam-authz/client: get IAM tokens for a tenant by exchanging an identity provider token (spec §4.1).
 * Its failures are {@link TokenExchangeError}s (an `IamAuthzError` of `iam-authz`, code
 * `ERR_TOKEN_EXCHANGE_FAILED`).
 */
export { IamTokenClient, type GetTokenParams } from './token-client.js';
export type { IamTokenClientOptions } from './options.js';
export { TokenExchangeError } from '../errors.js';
