/**
 * `createAuthorizer`: the entry point that wires options, the key set, the verifier and the
 * verified-token cache together. Each piece lives in its own module; this file only orchestrates.
 */
import { authenticateFailed, decisionDenied } from './diagnostics.js';
import { collectRoles, decideForRoles, noMatchingReference } from './engine/decide.js';
import { describeResource, toResourceRef, type ResourceQuery } from './engine/resource.js';
import { AuthorizerClosedError, IamAuthzError, PermissionDeniedError, PolicyUnavailableError } from './errors.js';
import { PolicyClient } from './policy/policy-client.js';
import { RemoteKeySet } from './jwks/remote-key-set.js';
import { StaticKeySet, type KeySet } from './jwks/key-set.js';
import { resolveOptions, type AuthorizerOptions, type ResolvedOptions } from './options.js';
import { extractBearer } from './token/extract.js';
import { TokenCache } from './token/token-cache.js';
import { TokenVerifier, type VerifyPolicy } from './token/verify-token.js';
import type { Decision, Identity } from './types.js';

/** What `authorize` is asked: may the caller hold `permission` of `service` on `resource`? */
export interface AuthorizeQuery {
  /** The consuming service's key (`serviceDefinitionKey` in the policy), e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission key, e.g. `WRITE`. */
  readonly permission: string;
  /** `{ type, value }` for a custom reference `TYPE=value`, or `{ node }` for a node id. */
  readonly resource: ResourceQuery;
}

/** What {@link Authorizer.ready} warms besides the signing keys. */
export interface ReadyOptions {
  /**
   * Application ids (the tokens' `app`) whose role policy is fetched now, so the first request of
   * each pays no policy fetch. Needs the `policyToken` option: without it the policy is fetched
   * with each caller's own token, which `ready()` does not have. Default: none.
   */
  readonly applications?: readonly string[];
}

export interface Authorizer {
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
  authorize(identity: Identity, query: AuthorizeQuery): Promise<Decision>;
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
  const cache = config.tokenCache === false ? undefined : new TokenCache(config.tokenCache.max, config.tokenCache.maxTtlMs);
  // A kid gone from the JWKS, or naming another key now: nothing verified with the old key is reused.
  const keySet = createKeySet(config, () => {
    cache?.clear();
    verifier.clear();
  });
  const verifyRules: VerifyPolicy = {
    algorithms: config.algorithms,
    tokenFormats: config.tokenFormats,
    issuer: config.issuer,
    audience: config.audience,
    clockToleranceSec: config.clockToleranceSec,
  };
  const verifier = new TokenVerifier(keySet, verifyRules, config.now);
  const { now, maxTokenBytes } = config;
  let closing: Promise<void> | undefined;

  async function authenticate(authorization: string | undefined): Promise<Identity> {
    // One async function with the try around it all: the cache-hit path allocates no extra promise.
    try {
      if (closing) throw new AuthorizerClosedError();
      const token = extractBearer(authorization, maxTokenBytes);
      if (cache) {
        const hit = cache.get(token, now());
        if (hit) {
          keySet.touch?.();
          return hit;
        }
      }
      const generation = cache?.generation ?? 0;
      const verified = verifier.verify(token);
      // Awaited only when keys had to be fetched: the usual path stays free of an extra tick.
      const identity = verified instanceof Promise ? await verified : verified;
      cache?.set(identity, now(), generation);
      return identity;
    } catch (error) {
      if (authenticateFailed.hasSubscribers && error instanceof IamAuthzError) {
        authenticateFailed.publish({ code: error.code, status: error.status, message: error.message });
      }
      throw error;
    }
  }

  const policyClient = config.policyUrl === undefined ? undefined : new PolicyClient({
    url: config.policyUrl,
    dispatcher: config.dispatcher,
    policyToken: config.policyToken,
    now,
    ...config.policy,
  });

  async function authorize(identity: Identity, query: AuthorizeQuery): Promise<Decision> {
    if (closing) throw new AuthorizerClosedError();
    const { service, permission } = query;
    if (typeof service !== 'string' || service.length === 0) throw new TypeError('authorize: "service" must be a non-empty string');
    if (typeof permission !== 'string' || permission.length === 0) throw new TypeError('authorize: "permission" must be a non-empty string');
    const resource = toResourceRef(query.resource);
    if (!resource) {
      return denied(identity, query, { granted: false, reference: describeResource(query.resource), roles: [], changeId: undefined, reason: 'INVALID_RESOURCE' });
    }
    const roles = collectRoles(identity.claims.ars, resource);
    // Without roles for this resource no policy can grant: deny without asking the policy API.
    if (roles.length === 0) return denied(identity, query, noMatchingReference(resource.reference, undefined));
    if (!policyClient) throw new PolicyUnavailableError('no policy API configured: set "baseUrl" or "policyUrl"');
    const { app } = identity.claims;
    // A fresh policy is used without a promise; otherwise get() serves stale, fetches or fails.
    const entry = policyClient.peek(app, identity.token) ?? (await policyClient.get(app, identity.token));
    const decision = decideForRoles(roles, resource.reference, service, permission, entry.policy);
    if (decision.granted) return decision;
    // A role granted in the console a moment ago should work on the next request, not after ttlMs.
    const fresher = await policyClient.refreshAfterDenial(app, identity.token, entry);
    const second = fresher ? decideForRoles(roles, resource.reference, service, permission, fresher.policy) : decision;
    return second.granted ? second : denied(identity, query, second);
  }

  async function check(authorization: string | undefined, query: AuthorizeQuery): Promise<{ identity: Identity; decision: Decision }> {
    const identity = await authenticate(authorization);
    const decision = await authorize(identity, query);
    if (!decision.granted) throw new PermissionDeniedError(decision, query.service, query.permission);
    return { identity, decision };
  }

  return {
    authenticate,
    authorize,
    check,
    async ready(readyOptions: ReadyOptions = {}) {
      if (closing) throw new AuthorizerClosedError();
      const applications: unknown = readyOptions.applications ?? [];
      if (!Array.isArray(applications) || !applications.every((a): a is string => typeof a === 'string' && a.length > 0)) {
        throw new TypeError('ready: "applications" must be an array of non-empty application ids');
      }
      if (applications.length > 0 && (!policyClient || !config.policyToken)) {
        throw new TypeError('ready: "applications" needs the "policyToken" option (and a policy API): the policy is otherwise fetched with each caller\'s token');
      }
      // With policyToken the caller token is not sent; '' only keys the (unused) refusal memory.
      await Promise.all([keySet.ready(), ...applications.map((app) => policyClient?.get(app, ''))]);
    },
    close() {
      closing ??= (async () => {
        keySet.close?.();
        policyClient?.close();
        cache?.clear();
        if (config.ownsDispatcher) await config.dispatcher.close();
      })();
      return closing;
    },
  };
}

function denied(identity: Identity, query: AuthorizeQuery, decision: Decision): Decision {
  if (decisionDenied.hasSubscribers) {
    decisionDenied.publish({
      service: query.service,
      permission: query.permission,
      reference: decision.reference,
      reason: decision.reason,
      roles: decision.roles,
      changeId: decision.changeId,
      sub: identity.claims.sub,
      app: identity.claims.app,
    });
  }
  return decision;
}

function createKeySet(config: ResolvedOptions, onKeysRemoved: () => void): KeySet {
  if (config.staticJwks) return new StaticKeySet(config.staticJwks, config.algorithms);
  return new RemoteKeySet({
    uri: config.jwksUri as string,
    dispatcher: config.dispatcher,
    algorithms: config.algorithms,
    now: config.now,
    onKeysRemoved,
    ...config.jwks,
  });
}
