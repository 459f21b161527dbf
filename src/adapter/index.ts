/**
 * `iam-authz/adapter`: what you need to write an adapter for another framework. An adapter reads
 * the bearer header (the raw `Authorization` value, `undefined` when absent), runs a guard from
 * {@link createGuards}, attaches the state it resolves with (`IamState`, from `iam-authz`), and
 * hands a rejection to `guards.refusal()`, which says whether to pass the error on or send its
 * answer (the error already knows it: `status`, `headers`, `problemDetails`, `getResponse()`);
 * {@link wrapGuards} turns the guards into the framework's handlers. docs/frameworks.md, "Writing an
 * adapter", has a complete one.
 */
export { createGuards, wrapGuards } from './guards.js';
export type { GuardOptions } from './guard-options.js';
export type { Guard, GuardFactory, Guards, Refusal } from './guard-types.js';
export type { AuthenticateOptions, ResourceResolver, RouteOptions } from './permission-args.js';
export type { RouteAudit } from './audit/audit.js';
export { toErrorResponse, toResponse, type ErrorResponse, type ErrorResponseOptions, type ProblemDetails } from '../errors.js';
export { annotateOpenApi } from './openapi.js';
