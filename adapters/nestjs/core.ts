/**
 * What `IamAuthzModule` builds once from its options, provided as `IAM_AUTHZ_CORE`: the authorizer
 * (unless one is given; also provided as `IAM_AUTHORIZER`) and the kit's guards, shared by every
 * `IamGuard`.
 */
import { createAuthorizer, type Authorizer, type GuardMode } from '../../src/index.js';
import { createInternalGuards, createRequirementGuards, refuseNulls, splitGuardOptions, type InternalGuards, type RequirementGuards } from '../../src/adapter/internal.js';
import type { IamRequestView } from './locate.js';
import type { IamAuthzModuleOptions } from './options.js';

/** Injection token of the module's `Authorizer`. */
export const IAM_AUTHORIZER = 'iam-authz:authorizer';

/** Injection token of the module's internals (`IamAuthzCore`). */
export const IAM_AUTHZ_CORE = 'iam-authz:core';

/** What the module builds once: the authorizer and the core guards over {@link IamRequestView}. */
export interface IamAuthzCore {
  readonly authorizer: Authorizer;
  /** Created here, so closed here. */
  readonly owned: boolean;
  readonly guards: InternalGuards<IamRequestView>;
  /** One core guard per requirement, shared by every `IamGuard`; the module makes (and inventories) them at init. */
  readonly requirements: RequirementGuards<IamRequestView>;
  /** The mode of the module's permission guards where a route sets none (the route audit reads it). */
  readonly mode: GuardMode;
}

/** Checks the module's options (`TypeError` naming the option) and builds from them. */
export function build(options: IamAuthzModuleOptions): IamAuthzCore {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) throw new TypeError('IamAuthzModule: options must be an object');
  refuseNulls('IamAuthzModule', options, ['realm', 'exposeDecision', 'retryAfterSec', 'mode', 'authorizer', 'globalGuard']);
  if ('passErrors' in options) throw new TypeError('IamAuthzModule: "passErrors" is not supported: refusals reach your exception filters as IamHttpException already');
  // `mode` is the module's default for its routes (a route's own { mode } wins), as an adapter's is.
  const { guardOptions, rest: { authorizer: given, ...rest } } = splitGuardOptions(options);
  const extra = Object.keys(rest)[0];
  if (given !== undefined && extra !== undefined) throw new TypeError(`IamAuthzModule: "${extra}" cannot be given with "authorizer"`);
  const authorizer = (given as Authorizer | undefined) ?? createAuthorizer(rest);
  try {
    const guards = createInternalGuards<IamRequestView>(authorizer, guardOptions);
    // createInternalGuards has checked `mode`; a route's own mode wins over it, as in every adapter.
    const mode = guardOptions.mode ?? authorizer.mode;
    return { authorizer, owned: given === undefined, guards, requirements: createRequirementGuards(guards), mode };
  } catch (error) {
    if (given === undefined) void authorizer.close();
    throw error;
  }
}
