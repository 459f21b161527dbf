/**
 * `createAuthorizer`: composes an authenticator (token → identity) and a decider (identity + query
 * → decision), each built from its own options. Nothing here verifies a token or reads a policy.
 */
import { createAuthenticator } from './authenticator.js';
import { createDecider, type AccessibleQuery, type AuthorizeQuery, type PermissionsQuery } from './decider.js';
import { AuthorizerClosedError, PermissionDeniedError } from './errors.js';
import { logged } from './lib/logger.js';
import { refuseNulls } from './lib/option-checks.js';
import { resolveOptions, type AuthorizerOptions } from './options.js';
import type { AccessibleResource, Caller, Decision, HeldPermission, Identity } from './types.js';

export type { AccessibleQuery, AuthorizeQuery, PermissionsQuery };

/** What {@link Authorizer.ready} warms besides the signing keys. */
export interface ReadyOptions {
  /**
   * Application ids (the tokens' `app`) whose role policy is fetched now, so the first request of
   * each pays no policy fetch. Needs the `policyToken` option: without it the policy is fetched
   * with each caller's own token, which `ready()` does not have. Default: none.
   */
  readonly applications?: readonly string[];
}

/** Verifies tokens and decides permissions; made by {@link createAuthorizer}. */
export interface Authorizer {
  /** The `mode` option: the default mode of route guards made with this authorizer. */
  readonly mode: 'enforce' | 'report';
  /**
   * Verifies the `Authorization` header value (`Bearer <token>`) and resolves with the caller's
   * identity. Rejects with an `IamAuthzError`: 401 for a missing, invalid or expired token, 503 when
   * the signing keys cannot be had.
   */
  authenticate(authorization: string | undefined): Promise<Identity>;
  /**
   * The spec's permission check for a verified identity. Resolves with a {@link Decision}; a denial
   * resolves with `granted: false`. Rejects with 503 `ERR_POLICY_UNAVAILABLE` when no usable
   * policy can be had — never grants without one.
   */
  authorize(identity: Caller, query: AuthorizeQuery): Promise<Decision>;
  /**
   * Several checks for one identity, with one policy lookup: one {@link Decision} per query, in
   * order; queries may mix services, permissions and resources. Same rules and errors as `authorize`.
   */
  authorizeMany(identity: Caller, queries: readonly AuthorizeQuery[]): Promise<Decision[]>;
  /**
   * The resources of one kind on which the caller holds the permission, read from the token's `ars`
   * and the policy — no call to the IAM beyond the usual policy fetch. Sorted and de-duplicated;
   * bounded by the token, so it needs no pagination. A value is listed exactly when `authorize`
   * would grant it. Rejects like `authorize` (503 without a usable policy, never a guess).
   */
  accessible(identity: Caller, query: AccessibleQuery & { readonly explain: true }): Promise<AccessibleResource[]>;
  /** The same, as bare values: `['WVW1', 'WVW7']`. */
  accessible(identity: Caller, query: AccessibleQuery): Promise<string[]>;
  /** The permissions of `service` the caller holds on one resource, each with its granting roles; sorted by key. */
  permissionsFor(identity: Caller, query: PermissionsQuery): Promise<HeldPermission[]>;
  /**
   * `authenticate` then `authorize`. Resolves with both when granted; rejects with 403
   * `ERR_PERMISSION_DENIED` (carrying the decision) when denied, or with the 401/503 of either step.
   */
  check(authorization: string | undefined, query: AuthorizeQuery): Promise<{
    /** The verified caller. */
    identity: Identity;
    /** The granting decision. */
    decision: Decision;
  }>;
  /**
   * Fetches the JWKS now instead of on the first request, and the role policy of each of
   * `options.applications` (with `policyToken`). Rejects with 503 when it cannot; the error's
   * `misconfigured` tells a wrong URL or refused credentials from an outage.
   */
  ready(options?: ReadyOptions): Promise<void>;
  /** Aborts fetches under way and releases sockets and timers owned by the authorizer. Idempotent. */
  close(): Promise<void>;
}

/** Creates an {@link Authorizer}. Throws a `TypeError` naming the option when an option is invalid. */
export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  const config = resolveOptions(options);
  const authenticator = createAuthenticator(config.authenticator, config.shared);
  const decider = createDecider(config.decider, config.shared);
  const { log } = config.shared;
  // With a logger, each entry point logs what it refuses; without one, they are the components' own.
  const authenticate = log ? logged(log, authenticator.authenticate) : authenticator.authenticate;
  const authorize = log ? logged(log, decider.authorize) : decider.authorize;
  let closing: Promise<void> | undefined;

  async function check(authorization: string | undefined, query: AuthorizeQuery): Promise<{ identity: Identity; decision: Decision }> {
    const identity = await authenticate(authorization);
    const decision = await authorize(identity, query);
    if (!decision.granted) throw new PermissionDeniedError(decision, query.service, query.permission);
    return { identity, decision };
  }

  return {
    mode: decider.mode,
    authenticate,
    authorize,
    authorizeMany: log ? logged(log, decider.authorizeMany) : decider.authorizeMany,
    accessible: (log ? logged(log, decider.accessible) : decider.accessible) as Authorizer['accessible'],
    permissionsFor: log ? logged(log, decider.permissionsFor) : decider.permissionsFor,
    check,
    ready: log ? logged(log, ready) : ready,
    close() {
      closing ??= (async () => {
        authenticator.close();
        decider.close();
        if (config.ownsDispatcher) await config.shared.dispatcher.close();
      })();
      return closing;
    },
  };

  async function ready(readyOptions: ReadyOptions = {}): Promise<void> {
      if (closing) throw new AuthorizerClosedError();
      if (typeof readyOptions !== 'object' || (readyOptions as unknown) === null) throw new TypeError('ready: options must be an object');
      for (const key of Object.keys(readyOptions)) {
        if (key !== 'applications') throw new TypeError(`ready: unknown option "${key}"`);
      }
      refuseNulls('ready', readyOptions);
      const policies = decider.warm(readyOptions.applications, authenticator.applications);
      await Promise.all([authenticator.ready(), policies]);
  }
}
