/** iam-authz/client: get IAM tokens for a tenant by exchanging an identity provider token (spec §4.1). */
export { IamTokenClient, type GetTokenParams } from './token-client.js';
export type { IamTokenClientOptions } from './options.js';
export { IamAuthzError, TokenExchangeError, isIamAuthzError, type IamAuthzErrorCode } from '../errors.js';
