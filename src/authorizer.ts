/**
 * `createAuthorizer`: the entry point that wires options, the key set, the verifier and the
 * verified-token cache together. Each piece lives in its own module; this file only orchestrates.
 */
import { createDecisionLog } from './decision-log.js';
import { authenticateFailed, authenticateTrace, authorizeTrace, decisionDenied, tokenCacheHit } from './diagnostics.js';
import { accessibleValues, namesAny, type AccessibleMap, type AccessibleSelector } from './engine/accessible.js';
import type { CompiledPolicy } from './engine/compile-policy.js';
import { collectRoles, decideForRoles, noMatchingReference, type ResourceRef } from './engine/decide.js';
import { permissionsOf } from './engine/permissions.js';
import { describeResource, toResourceRef, type ResourceQuery } from './engine/resource.js';
import { AuthorizerClosedError, IamAuthzError, PermissionDeniedError, PolicyUnavailableError, TokenInvalidError } from './errors.js';
import { PolicyClient, type PolicyEntry } from './policy/policy-client.js';
import { RemoteKeySet } from './jwks/remote-key-set.js';
import { StaticKeySet, type KeySet } from './jwks/key-set.js';
import { resolveOptions, type AuthorizerOptions, type ResolvedOptions } from './options.js';
import { isArray } from './lib/is-array.js';
import { refuseNulls } from './lib/option-checks.js';
import { extractBearer } from './token/extract.js';
import { TokenCache } from './token/token-cache.js';
import { TokenVerifier, type VerifyPolicy } from './token/verify-token.js';
import type { AccessibleResource, Caller, Decision, HeldPermission, Identity } from './types.js';

/** What `authorize` is asked: may the caller hold `permission` of `service` on `resource`? */
export interface AuthorizeQuery {
  /** The consuming service's key (`serviceDefinitionKey` in the policy), e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission key, e.g. `WRITE`. */
  readonly permission: string;
  /** `{ type, value }` for a custom reference `TYPE=value`, or `{ node }` for a node id. */
  readonly resource: ResourceQuery;
  /** Only labels the decision event: a denial under `'report'` is logged with `shadow: true`. `authorize` never enforces. Default `'enforce'`. */
  readonly mode?: 'enforce' | 'report' | undefined;
}

/** What `accessible` is asked: on which resources of a kind may the caller hold `permission` of `service`? */
export interface AccessibleQuery {
  /** The consuming service's key, e.g. `vehicle-service`. */
  readonly service: string;
  /** The permission key, e.g. `READ`. */
  readonly permission: string;
  /** List the values of custom references of this type (`VIN` → the `x` of every `VIN=x`). Give this or `node`. */
  readonly type?: string;
  /** `true`: list node ids (`ars[].n`) instead. */
  readonly node?: boolean;
  /** Return `{ value, roles }` (the granting roles per value) instead of bare values. Default `false`. */
  readonly explain?: boolean;
}

/** What `permissionsFor` is asked: which permissions of `service` does the caller hold on `resource`? */
export interface PermissionsQuery {
  /** The consuming service's key. */
  readonly service: string;
  /** `{ type, value }` or `{ node }`, as in {@link AuthorizeQuery}. */
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
  const cache = config.tokenCache === false ? undefined : new TokenCache(config.tokenCache.max, config.tokenCache.maxTtlMs);
  // A kid gone from the JWKS, or naming another key now: nothing verified with the old key is reused.
  const keySets = createKeySets(config, () => {
    cache?.clear();
    verifier.clear();
  });
  const allKeySets = [...new Set(keySets.values())];
  const primaryKeySet = keySets.get(config.issuers[0] as string) as KeySet;
  const verifyRules: VerifyPolicy = {
    algorithms: config.algorithms,
    tokenFormats: config.tokenFormats,
    issuers: config.issuers,
    audience: config.audience,
    clockToleranceSec: config.clockToleranceSec,
    poolVerifications: config.poolVerifications,
  };
  const verifier = new TokenVerifier((issuer) => (typeof issuer === 'string' ? keySets.get(issuer) : undefined) ?? primaryKeySet, verifyRules, config.now);
  const { now, maxTokenBytes, applications } = config;
  const logDecision = createDecisionLog(config.onDecision, config.decisionSampleRate, now);
  /** Every denial: the decision log and the `decision:denied` event. */
  const denied = (identity: Caller, query: AuthorizeQuery, decision: Decision): Decision => {
    logDecision(identity, query, decision);
    return deniedEvent(identity, query, decision);
  };
  let closing: Promise<void> | undefined;

  /** Traced only while someone listens (`iam-authz/otel`): otherwise one property check. */
  function authenticate(authorization: string | undefined): Promise<Identity> {
    if (!authenticateTrace.hasSubscribers) return verifyBearer(authorization);
    return tracedAuthenticate(authorization);
  }

  /** The traced result is the claims alone: a tracing subscriber never sees the token. */
  async function tracedAuthenticate(authorization: string | undefined): Promise<Identity> {
    let identity: Identity | undefined;
    await authenticateTrace.tracePromise(async () => {
      identity = await verifyBearer(authorization);
      return { claims: identity.claims };
    }, {});
    return identity as Identity;
  }

  async function verifyBearer(authorization: string | undefined): Promise<Identity> {
    // One async function with the try around it all: the cache-hit path allocates no extra promise.
    try {
      if (closing) throw new AuthorizerClosedError();
      const token = extractBearer(authorization, maxTokenBytes);
      if (cache) {
        const hit = cache.get(token, now());
        if (hit) {
          // A promise only where refreshes cannot run in the background (workerd): this request
          // refreshes the keys, and the hit stands only if the token's key survived the refresh.
          const refreshing = keySets.get(hit.claims.iss)?.touch?.();
          if (!refreshing || (await refreshing, cache.get(token, now()) === hit)) {
            if (tokenCacheHit.hasSubscribers) tokenCacheHit.publish(HIT);
            return hit;
          }
        }
      }
      const generation = cache?.generation ?? 0;
      const verified = verifier.verify(token);
      // Awaited only when keys had to be fetched: the usual path stays free of an extra tick.
      const identity = verified instanceof Promise ? await verified : verified;
      // Checked before caching, so a cache hit is always of an accepted application.
      if (applications && !applications.has(identity.claims.app)) throw foreignApplication(identity.claims.app, applications);
      cache?.set(identity, now(), generation);
      return identity;
    } catch (error) {
      if (authenticateFailed.hasSubscribers && error instanceof IamAuthzError) {
        authenticateFailed.publish({ code: error.code, status: error.status, message: error.message });
      }
      throw error;
    }
  }

  // One policy client per issuer: a policy fetched from one IAM never decides another's token.
  const policyClients = new Map([...config.policyUrls].map(([issuer, url]) => [issuer, new PolicyClient({
    url,
    dispatcher: config.dispatcher,
    policyToken: config.policyToken,
    now,
    ...config.policy,
  })]));

  function clientOf(identity: Caller): PolicyClient {
    const client = policyClients.get(identity.claims.iss);
    if (!client) throw new PolicyUnavailableError('no policy API configured for the token\'s issuer: set "baseUrl" or "policyUrl"');
    return client;
  }

  /**
   * The one decision path of every entry point (guards, `authorize`, `authorizeMany`, `accessible`,
   * `permissionsFor`): the policy of the caller's issuer and application — fresh from the cache
   * without a promise tick, else served stale while revalidating, fetched, or 503 — evaluated; when
   * the answer denies something, one refetch within the `minRefreshIntervalMs` budget (a role granted
   * in the console a moment ago works on the next request of any kind) and a second evaluation.
   */
  function decideWith<A, T>(identity: Caller, args: A, step: DecisionStep<A, T>): T | Promise<T> {
    const client = clientOf(identity);
    const fresh = client.peek(identity.claims.app, identity.token);
    if (!fresh) return fetchThenDecide(client, identity, args, step);
    const result = step.evaluate(args, fresh.policy, undefined);
    return step.denies(args, result) ? afterDenial(client, identity, args, step, fresh, result) : result;
  }

  async function fetchThenDecide<A, T>(client: PolicyClient, identity: Caller, args: A, step: DecisionStep<A, T>): Promise<T> {
    const entry = await client.get(identity.claims.app, identity.token);
    const result = step.evaluate(args, entry.policy, undefined);
    return step.denies(args, result) ? afterDenial(client, identity, args, step, entry, result) : result;
  }

  async function afterDenial<A, T>(client: PolicyClient, identity: Caller, args: A, step: DecisionStep<A, T>, seen: PolicyEntry, result: T): Promise<T> {
    const fresher = await client.refreshAfterDenial(identity.claims.app, identity.token, seen);
    return fresher ? step.evaluate(args, fresher.policy, result) : result;
  }

  function authorize(identity: Caller, query: AuthorizeQuery): Promise<Decision> {
    if (!authorizeTrace.hasSubscribers) return decideQuery(identity, query);
    const context = { service: query.service as unknown, permission: query.permission as unknown };
    return authorizeTrace.tracePromise(decideQuery, context, undefined, identity, query);
  }

  async function decideQuery(identity: Caller, query: AuthorizeQuery): Promise<Decision> {
    if (closing) throw new AuthorizerClosedError();
    checkQuery('authorize', query);
    const resource = toResourceRef(query.resource);
    if (!resource) {
      return denied(identity, query, invalidResource(query));
    }
    const roles = collectRoles(identity.claims.ars, resource);
    // Without roles for this resource no policy can grant: deny without asking the policy API.
    if (roles.length === 0) return denied(identity, query, noMatchingReference(resource.reference, undefined));
    const found = decideWith(identity, { roles, reference: resource.reference, service: query.service, permission: query.permission }, ONE);
    const decision = found instanceof Promise ? await found : found;
    if (decision.granted) {
      logDecision(identity, query, decision);
      return decision;
    }
    return denied(identity, query, decision);
  }

  async function authorizeMany(identity: Caller, queries: readonly AuthorizeQuery[]): Promise<Decision[]> {
    if (closing) throw new AuthorizerClosedError();
    if (!isArray(queries)) throw new TypeError('authorizeMany: "queries" must be an array');
    const prepared: Prepared[] = queries.map((query, i) => {
      checkQuery(`authorizeMany: queries[${i}]`, query);
      const resource = toResourceRef(query.resource);
      return { query, resource, roles: resource ? collectRoles(identity.claims.ars, resource) : [] };
    });
    // One policy lookup for the batch, and none when no query names a resource of the token.
    const decisions = prepared.some((p) => p.roles.length > 0) ? await decideWith(identity, prepared, MANY) : MANY.evaluate(prepared, undefined, undefined);
    decisions.forEach((decision, i) => {
      if (decision.granted) logDecision(identity, queries[i] as AuthorizeQuery, decision);
      else denied(identity, queries[i] as AuthorizeQuery, decision);
    });
    return decisions;
  }

  async function accessible(identity: Caller, query: AccessibleQuery): Promise<string[] | AccessibleResource[]> {
    if (closing) throw new AuthorizerClosedError();
    checkQuery('accessible', query);
    if (query.explain !== undefined && typeof query.explain !== 'boolean') throw new TypeError('accessible: "explain" must be a boolean');
    const selector = selectorOf(query);
    const { ars } = identity.claims;
    if (!namesAny(ars, selector)) return [];
    const found = await decideWith(identity, { ars, selector, service: query.service, permission: query.permission, named: namedWithRoles(ars, selector) }, LIST);
    const values = [...found.keys()].sort();
    return query.explain === true ? values.map((value) => ({ value, roles: found.get(value) as string[] })) : values;
  }

  async function permissionsFor(identity: Caller, query: PermissionsQuery): Promise<HeldPermission[]> {
    if (closing) throw new AuthorizerClosedError();
    if (typeof query !== 'object' || (query as unknown) === null) throw new TypeError('permissionsFor: expects { service, resource }');
    if (typeof query.service !== 'string' || query.service.length === 0) throw new TypeError('permissionsFor: "service" must be a non-empty string');
    const resource = toResourceRef(query.resource);
    const roles = resource ? collectRoles(identity.claims.ars, resource) : [];
    if (roles.length === 0) return [];
    return decideWith(identity, { roles, service: query.service }, HELD);
  }

  async function check(authorization: string | undefined, query: AuthorizeQuery): Promise<{ identity: Identity; decision: Decision }> {
    const identity = await authenticate(authorization);
    const decision = await authorize(identity, query);
    if (!decision.granted) throw new PermissionDeniedError(decision, query.service, query.permission);
    return { identity, decision };
  }

  return {
    mode: config.mode,
    authenticate,
    authorize,
    authorizeMany,
    accessible: accessible as Authorizer['accessible'],
    permissionsFor,
    check,
    async ready(readyOptions: ReadyOptions = {}) {
      if (closing) throw new AuthorizerClosedError();
      if (typeof readyOptions !== 'object' || (readyOptions as unknown) === null) throw new TypeError('ready: options must be an object');
      for (const key of Object.keys(readyOptions)) {
        if (key !== 'applications') throw new TypeError(`ready: unknown option "${key}"`);
      }
      refuseNulls('ready', readyOptions);
      // By default, the `applications` option's policies when they can be fetched without a caller.
      const applications: unknown = readyOptions.applications ?? (config.policyToken && config.applications ? [...config.applications] : []);
      if (!Array.isArray(applications) || !applications.every((a): a is string => typeof a === 'string' && a.length > 0)) {
        throw new TypeError('ready: "applications" must be an array of non-empty application ids');
      }
      if (applications.length > 0 && (policyClients.size === 0 || !config.policyToken)) {
        throw new TypeError('ready: "applications" needs the "policyToken" option (and a policy API): the policy is otherwise fetched with each caller\'s token');
      }
      const foreign = config.applications ? applications.find((a) => !config.applications?.has(a)) : undefined;
      if (foreign !== undefined) throw new TypeError(`ready: "applications" lists ${JSON.stringify(foreign)}, which the "applications" option does not accept`);
      // With policyToken the caller token is not sent; '' only keys the (unused) refusal memory.
      const policies = [...policyClients.values()].flatMap((client) => applications.map((app) => client.get(app, '')));
      await Promise.all([...allKeySets.map((k) => k.ready()), ...policies]);
    },
    close() {
      closing ??= (async () => {
        for (const k of allKeySets) k.close?.();
        for (const client of policyClients.values()) client.close();
        cache?.clear();
        if (config.ownsDispatcher) await config.dispatcher.close();
      })();
      return closing;
    },
  };
}

/** How one entry point reads a policy: its evaluation, and whether the result denies something. */
interface DecisionStep<A, T> {
  /** The answer under `policy`; `previous` is the answer under the policy before a refetch. */
  evaluate(args: A, policy: CompiledPolicy | undefined, previous: T | undefined): T;
  /** Whether `result` denies something that a fresher policy might grant. */
  denies(args: A, result: T): boolean;
}

interface OneQuery { roles: string[]; reference: string; service: string; permission: string }
interface Prepared { query: AuthorizeQuery; resource: ResourceRef | undefined; roles: string[] }
interface ListQuery { ars: Caller['claims']['ars']; selector: AccessibleSelector; service: string; permission: string; named: number }

const ONE: DecisionStep<OneQuery, Decision> = {
  evaluate: (q, policy) => decideForRoles(q.roles, q.reference, q.service, q.permission, policy as CompiledPolicy),
  denies: (_q, decision) => !decision.granted,
};

const MANY: DecisionStep<Prepared[], Decision[]> = {
  evaluate: (prepared, policy, previous) => prepared.map(({ query, resource, roles }, i) => {
    // After a refetch, a grant stands and a query without roles needs no second look.
    if (previous?.[i]?.granted === true || (previous && roles.length === 0)) return previous[i] as Decision;
    if (!resource) return invalidResource(query);
    if (roles.length === 0 || !policy) return noMatchingReference(resource.reference, undefined);
    return decideForRoles(roles, resource.reference, query.service, query.permission, policy);
  }),
  denies: (prepared, decisions) => decisions.some((d, i) => !d.granted && (prepared[i] as Prepared).roles.length > 0),
};

const LIST: DecisionStep<ListQuery, AccessibleMap> = {
  evaluate: (q, policy) => accessibleValues(q.ars, q.selector, q.service, q.permission, policy as CompiledPolicy),
  // A value the token holds roles on that is not listed is a denial, as `authorize` would see it.
  denies: (q, found) => found.size < q.named,
};

const HELD: DecisionStep<{ roles: string[]; service: string }, HeldPermission[]> = {
  evaluate: (q, policy) => permissionsOf(q.roles, q.service, policy as CompiledPolicy),
  // Which permissions the service has is not known here: any answer may lack a new grant.
  denies: () => true,
};

/** How many distinct values of the selected kind the token holds at least one role on. */
function namedWithRoles(ars: Caller['claims']['ars'], selector: AccessibleSelector): number {
  const { field, prefix } = selector;
  const values = new Set<string>();
  for (const entry of ars) {
    if (entry.r.length === 0) continue;
    for (const ref of entry[field]) {
      if (prefix === undefined ? ref.length > 0 : ref.length > prefix.length && ref.startsWith(prefix)) values.add(ref);
    }
  }
  return values.size;
}

function foreignApplication(app: string, accepted: ReadonlySet<string>): TokenInvalidError {
  const show = (v: string): string => JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}…` : v);
  return new TokenInvalidError(`token application ${show(app)} is not accepted (applications: ${[...accepted].map(show).join(', ')})`, { detail: 'token application is not accepted' });
}

/** The message of every token-cache-hit event: nothing to say but that it happened. */
const HIT = Object.freeze({});


/** A query's service and permission are a programming matter: a `TypeError`, not a denial. */
function checkQuery(where: string, query: { service?: unknown; permission?: unknown; mode?: unknown } | null | undefined): void {
  if (typeof query !== 'object' || query === null) throw new TypeError(`${where}: expects { service, permission, … }`);
  if (typeof query.service !== 'string' || query.service.length === 0) throw new TypeError(`${where}: "service" must be a non-empty string`);
  if (typeof query.permission !== 'string' || query.permission.length === 0) throw new TypeError(`${where}: "permission" must be a non-empty string`);
  const { mode } = query;
  if (mode !== undefined && mode !== 'enforce' && mode !== 'report') throw new TypeError(`${where}: "mode" must be 'enforce' or 'report' (or left out)`);
}

function invalidResource(query: AuthorizeQuery): Decision {
  return { granted: false, reference: describeResource(query.resource), roles: [], changeId: undefined, reason: 'INVALID_RESOURCE' };
}

function selectorOf(query: AccessibleQuery): AccessibleSelector {
  if (query.node !== undefined && typeof query.node !== 'boolean') throw new TypeError('accessible: "node" must be a boolean');
  if (query.node && query.type === undefined) return { field: 'n', prefix: undefined };
  const { type } = query;
  if (query.node) throw new TypeError('accessible: give either "type" or "node: true"');
  if (typeof type !== 'string' || type.length === 0 || type.includes('=')) {
    throw new TypeError('accessible: "type" must be a reference type (a non-empty string without "="), or give "node: true"');
  }
  return { field: 'c', prefix: `${type}=` };
}

function deniedEvent(identity: Caller, query: AuthorizeQuery, decision: Decision): Decision {
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

/** issuer → its key set: one local set shared by every issuer, or a remote set per issuer. */
function createKeySets(config: ResolvedOptions, onKeysRemoved: () => void): Map<string, KeySet> {
  const { staticJwks, jwksUris } = config;
  if (staticJwks || !jwksUris) {
    const local = new StaticKeySet(staticJwks ?? { keys: [] }, config.algorithms);
    return new Map(config.issuers.map((issuer) => [issuer, local]));
  }
  return new Map([...jwksUris].map(([issuer, uri]) => [issuer, new RemoteKeySet({
    uri,
    dispatcher: config.dispatcher,
    algorithms: config.algorithms,
    now: config.now,
    onKeysRemoved,
    ...config.jwks,
  })]));
}
