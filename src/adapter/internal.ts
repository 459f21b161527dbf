/**
 * The library's own adapters' way in: what they share beyond the public kit (`./index.ts`, the
 * `iam-authz/adapter` subpath) and the public core (`../index.ts`). Not a subpath of package.json
 * "exports": the adapters under adapters/ import it by relative path (eslint.config.js allows them
 * exactly these three entries), so none of it is a public name.
 */
export { createInternalGuards } from './guards.js';
export { splitGuardOptions } from './guard-options.js';
export type { InternalGuards } from './guard-types.js';
export { parseAuthenticateOptions, parsePermissionArgs, type PermissionArgs } from './permission-args.js';
export { createRequirementGuards, type Requirement, type RequirementGuards } from './requirements.js';
export type { AdapterFramework } from './wrong-framework.js';
export { refuseNulls } from '../lib/option-checks.js';
export { settledValue } from '../lib/settled.js';
// `signal` on the state attached to a request, and how each adapter closes its watch (request-state.ts).
export { closerOf, closeWithBody, closeWithNodeResponse, closeWithRequest, withSignal } from './request-state.js';
// The route audit: each adapter reads its routes into RouteEntry's, `audit` says what guards them.
export { audit, auditOptions, type AuditOptions, type FindingKind, type RouteEntry } from './audit/audit.js';
export { guardMarkOf, requirementMark, type GuardMark } from './audit/guard-mark.js';
export { openApiPath, pathParameters } from './audit/paths.js';
// Types the integrations read that applications need not name (documented where they are used).
export type { CacheStatus } from '../authorizer-types.js';
// A watch of a grant just made, without deciding again (no queries: the token alone).
export { watchGrantedOf } from '../watch/watcher.js';
