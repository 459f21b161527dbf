/** `iam-authz-dev`: a development IAM and signing helpers, for local development and tests. */
export { startDevIam, MAX_EXPIRY_SEC, DEV_IDP_AUDIENCE, type DevIam, type MintTokenOptions, type StartDevIamOptions } from './dev-iam.js';
export { validateConfig, DevIamConfigError, type DevIamConfig, type IdpConfig, type ExternalIdpConfig, type BuiltinIdpConfig, type ApplicationConfig, type ActorConfig, type AccessReferenceConfig } from './config.js';
export { generateSigningKey, signJwt, type SigningKey } from './sign-jwt.js';
export { DevKeyFileError } from './key-file.js';
export type { PermissionRef, Role, RolePolicy, ServicePolicy } from './policy.js';
