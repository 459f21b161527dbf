/**
 * The decider: a verified caller and a query in, a decision out. It owns the policy clients (one per
 * issuer, `policies.ts`), the permission engine's use (`steps.ts`), the grant memo, the decision log
 * and the default mode. Every entry point — `authorize`, `authorizeMany`, `accessible`,
 * `permissionsFor`, and so every guard and explain — reads the policy through one function, `decide`.
 */
import { authorizeTrace } from '../diagnostics.js';
import { namesAny } from '../engine/accessible.js';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { collectRoles, noMatchingReference } from '../engine/decide.js';
import { toResourceRef } from '../engine/resource.js';
import { AuthorizerClosedError } from '../errors.js';
import { isArray } from '../lib/is-array.js';
import { settled } from '../lib/settled.js';
import type { PolicyClient, PolicyEntry } from '../policy/policy-client.js';
import type { SharedRuntime } from '../shared-options.js';
import type { AccessibleResource, Caller, Decision, HeldPermission } from '../types.js';
import { createDecisionLog } from './decision-log.js';
import { deniedEvent, invalidResource, logDenial } from './denials.js';
import { deeplyFrozen, GrantMemo } from './grant-memo.js';
import type { DeciderConfig } from './options.js';
import { createPolicies, type PoliciesStatus } from './policies.js';
import { checkCaller, checkQuery, selectorOf, type AccessibleQuery, type AuthorizeQuery, type PermissionsQuery } from './queries.js';
import { HELD, LIST, MANY, namedWithRoles, ONE, type DecisionStep, type Prepared } from './steps.js';

export interface Decider {
  /** The `mode` option. */
  readonly mode: 'enforce' | 'report';
  readonly authorize: (identity: Caller, query: AuthorizeQuery) => Promise<Decision>;
  readonly authorizeMany: (identity: Caller, queries: readonly AuthorizeQuery[]) => Promise<Decision[]>;
  readonly accessible: (identity: Caller, query: AccessibleQuery) => Promise<string[] | AccessibleResource[]>;
  readonly permissionsFor: (identity: Caller, query: PermissionsQuery) => Promise<HeldPermission[]>;
  /**
   * Fetches the policies of `applications` now (default: those of `accepted` when `policyToken` is
   * set). Throws a `TypeError` at once when they cannot be fetched without a caller.
   */
  readonly warm: (applications: unknown, accepted: ReadonlySet<string> | undefined) => ReadonlyMap<string, Promise<unknown>>;
  /** Where each issuer's cached policies stand, and whether the hint channel is connected (`null`: no channel). Does no I/O. */
  readonly status: () => PoliciesStatus;
  /** What keeps a watch's policy current without traffic (see `src/watch/`). */
  readonly watching: WatchSource;
  /** Refuses every later call, and releases the policy clients. */
  readonly close: () => void;
}

/** A caller's application policy, for watches: read it, keep it revalidated. */
export interface WatchSource {
  /** The policy in force for the caller's application, while usable; `undefined` when none (no fetch). */
  readonly current: (identity: Caller) => CompiledPolicy | undefined;
  /** Looks at the caller's application policy as a request would (revalidated when due); rejects like `authorize`. */
  readonly revalidate: (identity: Caller) => Promise<unknown>;
  /** When (epoch ms) to look again; `undefined` when nothing is cached. */
  readonly nextCheckAt: (identity: Caller) => number | undefined;
}

/** What the decider tells the authorizer of: each policy it decides with, each dropped, changed or hinted. */
export interface DeciderEvents {
  readonly inForce?: (policy: CompiledPolicy) => void;
  readonly dropped?: (policy: CompiledPolicy) => void;
  readonly changed?: (issuer: string, applicationId: string, policy: CompiledPolicy) => void;
  readonly hinted?: (issuer: string, applicationId: string) => void;
}

export function createDecider(config: DeciderConfig, shared: SharedRuntime, events: DeciderEvents = {}): Decider {
  const { inForce: onPolicy, dropped: onPolicyDropped } = events;
  const { now } = shared;
  const logDecision = createDecisionLog(config.onDecision, config.decisionSampleRate, now);
  const { log } = shared;
  /** Every denial: the decision log, the logger and the `decision:denied` event. */
  const denied = (identity: Caller, query: AuthorizeQuery, decision: Decision): Decision => {
    logDecision(identity, query, decision);
    if (log) logDenial(log, identity, query, decision, policyClients.get(identity.claims.iss)?.peek(identity.claims.app)?.policy);
    return deniedEvent(identity, query, decision);
  };
  let closed = false;

  // One policy client per issuer; each tells `dropped` of every policy it lets go of.
  const policies = createPolicies(config, shared, { dropped, changed: events.changed, hinted: events.hinted });
  const { clients: policyClients, clientOf } = policies;

  /** A policy the cache let go of: no grant memo slot, and (evicted) no inventory state keeps it. */
  function dropped(policy: CompiledPolicy, reason: 'replaced' | 'evicted'): void {
    grants.forget(policy);
    if (lastInForce === policy) lastInForce = undefined;
    if (reason === 'evicted') onPolicyDropped?.(policy);
  }

  /**
   * The one decision path of every entry point (guards, `authorize`, `authorizeMany`, `accessible`,
   * `permissionsFor`): the policy of the caller's issuer and application — fresh from the cache
   * without a promise tick, else served stale while revalidating, fetched, or 503 — evaluated; when
   * the answer denies something, one refetch within the `minRefreshIntervalMs` budget (a role granted
   * in the console a moment ago works on the next request of any kind) and a second evaluation.
   */
  function decide<A, T>(identity: Caller, args: A, step: DecisionStep<A, T>): T | Promise<T> {
    const client = clientOf(identity);
    const fresh = client.peek(identity.claims.app, identity.token);
    if (!fresh) return fetchThenDecide(client, identity, args, step);
    const result = step.evaluate(args, inForce(fresh.policy), undefined);
    return step.denies(args, result) ? afterDenial(client, identity, args, step, fresh, result) : result;
  }

  async function fetchThenDecide<A, T>(client: PolicyClient, identity: Caller, args: A, step: DecisionStep<A, T>): Promise<T> {
    const entry = await client.get(identity.claims.app, identity.token);
    const result = step.evaluate(args, inForce(entry.policy), undefined);
    return step.denies(args, result) ? afterDenial(client, identity, args, step, entry, result) : result;
  }

  async function afterDenial<A, T>(client: PolicyClient, identity: Caller, args: A, step: DecisionStep<A, T>, seen: PolicyEntry, result: T): Promise<T> {
    const fresher = await client.refreshAfterDenial(identity.claims.app, identity.token, seen);
    return fresher ? step.evaluate(args, inForce(fresher.policy), result) : result;
  }

  /**
   * Every policy a decision reads passes here, so the inventory's drift check sees each new
   * `changeId` before the request that brought it is answered; a policy seen last costs one comparison.
   */
  let lastInForce: CompiledPolicy | undefined;
  function inForce(policy: CompiledPolicy): CompiledPolicy {
    if (policy !== lastInForce && onPolicy) {
      lastInForce = policy;
      onPolicy(policy);
    }
    return policy;
  }

  function authorize(identity: Caller, query: AuthorizeQuery): Promise<Decision> {
    if (!authorizeTrace.hasSubscribers) return decideQuery(identity, query);
    const context = { service: query.service as unknown, permission: query.permission as unknown };
    return authorizeTrace.tracePromise(decideQuery, context, undefined, identity, query);
  }

  /**
   * Grants decided on the spot from a fresh policy, remembered by caller, query and policy (see
   * {@link GrantMemo}): the same question asked again under the same policy is answered with the
   * same frozen decision and settled promise, allocating nothing. Denials are never remembered:
   * each one may refetch the policy.
   */
  const grants = new GrantMemo();

  function decideQuery(identity: Caller, query: AuthorizeQuery): Promise<Decision> {
    if (!closed) {
      const remembered = grants.find(identity, query, policyClients);
      if (remembered) {
        inForce(remembered.policy as CompiledPolicy);
        logDecision(identity, query, remembered.decision);
        return remembered.promise;
      }
    }
    let found: Decision | Promise<Decision>;
    try {
      found = decideNow(identity, query);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as it came, like the async function it replaces
      return Promise.reject(error);
    }
    if (found instanceof Promise) return found;
    // Remembered from the second grant to the same caller on: a caller seen once (a token verified
    // for one request, `tokenCache: false`) costs one pointer store, not a frozen, registered answer.
    if (found.granted && grants.seenBefore(identity, query)) {
      const policy = policyClients.get(identity.claims.iss)?.peek(identity.claims.app, identity.token)?.policy;
      if (policy !== undefined && policy.changeId === found.changeId && deeplyFrozen(identity)) return grants.remember(identity, query, policy, found);
    }
    // Settled (see `settled`): a guard reads the decision without waiting a tick for it.
    return settled(found);
  }

  /** The decision, synchronously when the policy is at hand; throws a `TypeError` for a misuse. */
  function decideNow(identity: Caller, query: AuthorizeQuery): Decision | Promise<Decision> {
    if (closed) throw new AuthorizerClosedError();
    checkCaller('authorize', identity);
    checkQuery('authorize', query);
    const resource = toResourceRef(query.resource);
    if (!resource) {
      return denied(identity, query, invalidResource(query));
    }
    const roles = collectRoles(identity.claims.ars, resource);
    // Without roles for this resource no policy can grant: deny without asking the policy API.
    if (roles.length === 0) return denied(identity, query, noMatchingReference(resource.reference, undefined));
    const found = decide(identity, { roles, reference: resource.reference, service: query.service, permission: query.permission }, ONE);
    return found instanceof Promise ? found.then((decision) => decided(identity, query, decision)) : decided(identity, query, found);
  }

  function decided(identity: Caller, query: AuthorizeQuery, decision: Decision): Decision {
    if (decision.granted) {
      logDecision(identity, query, decision);
      return decision;
    }
    return denied(identity, query, decision);
  }

  async function authorizeMany(identity: Caller, queries: readonly AuthorizeQuery[]): Promise<Decision[]> {
    if (closed) throw new AuthorizerClosedError();
    checkCaller('authorizeMany', identity);
    if (!isArray(queries)) throw new TypeError('authorizeMany: "queries" must be an array');
    const prepared: Prepared[] = queries.map((query, i) => {
      checkQuery(`authorizeMany: queries[${i}]`, query);
      const resource = toResourceRef(query.resource);
      return { query, resource, roles: resource ? collectRoles(identity.claims.ars, resource) : [] };
    });
    // One policy lookup for the batch, and none when no query names a resource of the token.
    const decisions = prepared.some((p) => p.roles.length > 0) ? await decide(identity, prepared, MANY) : MANY.evaluate(prepared, undefined, undefined);
    decisions.forEach((decision, i) => {
      if (decision.granted) logDecision(identity, queries[i] as AuthorizeQuery, decision);
      else denied(identity, queries[i] as AuthorizeQuery, decision);
    });
    return decisions;
  }

  async function accessible(identity: Caller, query: AccessibleQuery): Promise<string[] | AccessibleResource[]> {
    if (closed) throw new AuthorizerClosedError();
    checkCaller('accessible', identity);
    checkQuery('accessible', query);
    if (query.explain !== undefined && typeof query.explain !== 'boolean') throw new TypeError('accessible: "explain" must be a boolean');
    const selector = selectorOf(query);
    const { ars } = identity.claims;
    if (!namesAny(ars, selector)) return [];
    const found = await decide(identity, { ars, selector, service: query.service, permission: query.permission, named: namedWithRoles(ars, selector) }, LIST);
    const values = [...found.keys()].sort();
    return query.explain === true ? values.map((value) => ({ value, roles: found.get(value) as string[] })) : values;
  }

  async function permissionsFor(identity: Caller, query: PermissionsQuery): Promise<HeldPermission[]> {
    if (closed) throw new AuthorizerClosedError();
    checkCaller('permissionsFor', identity);
    if (typeof query !== 'object' || (query as unknown) === null) throw new TypeError('permissionsFor: expects { service, resource }');
    if (typeof query.service !== 'string' || query.service.length === 0) throw new TypeError('permissionsFor: "service" must be a non-empty string');
    const resource = toResourceRef(query.resource);
    const roles = resource ? collectRoles(identity.claims.ars, resource) : [];
    if (roles.length === 0) return [];
    return decide(identity, { roles, service: query.service }, HELD);
  }

  return {
    mode: config.mode,
    authorize,
    authorizeMany,
    accessible,
    permissionsFor,
    warm: policies.warm,
    status: policies.status,
    watching: {
      current: (identity) => policyClients.get(identity.claims.iss)?.usable(identity.claims.app)?.policy,
      revalidate: (identity) => clientOf(identity).get(identity.claims.app, identity.token),
      nextCheckAt: (identity) => policyClients.get(identity.claims.iss)?.nextRevalidationAt(identity.claims.app),
    },
    close() {
      closed = true;
      policies.close();
    },
  };
}
