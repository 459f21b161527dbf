/**
 * `iam-authz/adapter`: the kit every framework adapter is written over, and what you need to write
 * one for another framework. An adapter reads the bearer header (the raw `Authorization` value,
 * `undefined` when absent), runs a guard from {@link createGuards}, attaches the state it resolves
 * with, and hands a rejection to `guards.refusal()`, which says whether to pass the error on or
 * send its answer (the error already knows it: `status`, `headers`, `problemDetails`,
 * `getResponse()`). `adapters/express/index.ts` is a 60-line example.
 */
export { createGuards, wrapGuards } from './guards.js';
export { splitGuardOptions, type GuardOptions } from './guard-options.js';
export type { Guard, GuardFactory, Guards, Refusal } from './guard-types.js';
export { parseAuthenticateOptions, parsePermissionArgs, type AuthenticateOptions, type PermissionArgs, type ResourceResolver, type RouteOptions } from './permission-args.js';
export { createRequirementGuards, type Requirement, type RequirementGuards } from './requirements.js';
export { refuseNulls } from '../lib/option-checks.js';
export { settledValue } from '../lib/settled.js';
export type { AdapterFramework } from './wrong-framework.js';
export type { GuardMode, IamState } from '../types.js';
export { toErrorResponse, toResponse, type ErrorResponse, type ErrorResponseOptions, type ProblemDetails } from '../errors.js';
