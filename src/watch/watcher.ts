/**
 * Watches (`authorizer.watch`): a grant kept under watch for as long as a long-lived connection
 * lasts — a WebSocket, a server-sent event stream, a subscription, a download. A watch decides
 * first, like `check()`; then its `signal` aborts when the grant stops being true: the token's
 * `exp` passes (as `authenticate()` would see it), a new policy of its application no longer grants
 * it, the token is revoked, or no policy can be had any more (an outage past the stale bound).
 * Deny-only: nothing here decides anything `authorize` would not, and nothing can grant.
 *
 * One timeline (one timer) per authorizer holds every watch's expiry and, per application with
 * watches, when to look at its policy again — so a watched application's policy is revalidated
 * when due even on a replica with no other traffic.
 */
import type { WatchSource } from '../decider/decider.js';
import { checkCaller, checkQuery, type AuthorizeQuery } from '../decider/queries.js';
import type { CompiledPolicy } from '../engine/compile-policy.js';
import { collectRoles, decideForRoles } from '../engine/decide.js';
import { toResourceRef } from '../engine/resource.js';
import { AuthorizerClosedError, IamAuthzError, PermissionDeniedError, PolicyUnavailableError, TokenExpiredError, TokenRejectedError, TokenRevokedError } from '../errors.js';
import type { RevocationHint } from '../policy/hints.js';
import type { Revocations } from '../revocation/revocations.js';
import type { Caller, Decision } from '../types.js';
import { Timeline } from './timeline.js';

/**
 * A grant under watch (`authorizer.watch`): its `signal` aborts when the grant stops being true.
 */
export interface Watch {
  /**
   * Aborts when the grant stops being true; `signal.reason` is an `IamAuthzError`:
   * `ERR_TOKEN_EXPIRED`, `ERR_PERMISSION_DENIED`, `ERR_TOKEN_REVOKED` (or `ERR_TOKEN_REJECTED`,
   * `ERR_POLICY_UNAVAILABLE`, `ERR_AUTHORIZER_CLOSED`). Never aborts after `close()`.
   */
  readonly signal: AbortSignal;
  /** Stops watching: nothing fires after it returns, and nothing is left behind. Idempotent. */
  close(): void;
}

/**
 * Where an authorizer keeps its watcher's `watchGranted`: the library's adapters reach it through
 * `watchGrantedOf` (src/adapter/internal.ts) to watch a request they have just granted; not public.
 */
export const WATCH_GRANTED: unique symbol = Symbol.for('iam-authz.watch-granted') as never;

/** The `watchGranted` of `authorizer`, or `undefined` when it has none (not made by `createAuthorizer`). */
export function watchGrantedOf(authorizer: object): Watcher['watchGranted'] | undefined {
  return (authorizer as { [WATCH_GRANTED]?: Watcher['watchGranted'] })[WATCH_GRANTED];
}

/** What a watcher needs of the authorizer. */
export interface WatcherDeps {
  readonly now: () => number;
  readonly clockToleranceSec: number;
  readonly authorize: (identity: Caller, query: AuthorizeQuery) => Promise<Decision>;
  readonly authorizeMany: (identity: Caller, queries: readonly AuthorizeQuery[]) => Promise<Decision[]>;
  readonly source: WatchSource;
  readonly revocations: Revocations;
}

export interface Watcher {
  readonly watch: (identity: Caller, query: AuthorizeQuery | readonly AuthorizeQuery[]) => Promise<Watch>;
  /**
   * A watch of queries a guard has just granted `identity`, made at once: no decision again, but
   * refused (thrown) as `watch` would refuse it when the token is no longer live, the policy in
   * force now denies a query, or the authorizer is closed. No queries: a watch of the token alone
   * (expiry and revocation).
   */
  readonly watchGranted: (identity: Caller, queries: readonly AuthorizeQuery[]) => Watch;
  /** A new policy was taken in for `applicationId` of `issuer`: watches it no longer grants abort. */
  readonly policyChanged: (issuer: string, applicationId: string, policy: CompiledPolicy) => void;
  /** A hint made the application's policy due: look at it soon. */
  readonly hinted: (issuer: string, applicationId: string) => void;
  /** A revocation took effect: the watches of matching tokens abort. */
  readonly revoked: (revocation: RevocationHint) => void;
  /** Open watches. */
  readonly size: () => number;
  /** Aborts every open watch (`ERR_AUTHORIZER_CLOSED`) and refuses new ones. */
  readonly close: () => void;
}

/** One query under watch, ready to be decided again under any policy without I/O. */
interface Held {
  readonly query: AuthorizeQuery;
  readonly roles: readonly string[];
  readonly reference: string;
}

class Watched {
  readonly controller = new AbortController();
  open = true;
  expiryKey = 0;
  readonly expiry: Due = { kind: 'expiry', watch: this };
  /** `app`: the watched application, `undefined` for a watch of the token alone (no queries). */
  constructor(readonly identity: Caller, readonly held: readonly Held[], readonly app: string | undefined) {}

  /** The first query `policy` denies, with its decision; `undefined` when it grants them all. */
  deniedUnder(policy: CompiledPolicy): { decision: Decision; query: AuthorizeQuery } | undefined {
    for (const { query, roles, reference } of this.held) {
      const decision = decideForRoles(roles, reference, query.service, query.permission, policy);
      if (!decision.granted) return { decision, query };
    }
    return undefined;
  }
}

type Due = { readonly kind: 'expiry'; readonly watch: Watched } | { readonly kind: 'check'; readonly app: string };

export function createWatcher(deps: WatcherDeps): Watcher {
  const { now, source } = deps;
  const byApp = new Map<string, Set<Watched>>();
  /** Watches of a token alone: no policy to look at. */
  const bare = new Set<Watched>();
  const byJti = new Map<string, Set<Watched>>();
  const bySub = new Map<string, Set<Watched>>();
  /** Per watched application, its next look at the policy. */
  const checks = new Map<string, { key: number; item: Due }>();
  const timeline = new Timeline<Due>(now, (due) => {
    if (due.kind === 'expiry') abort(due.watch, new TokenExpiredError('the token expired while watched'));
    else check(due.app);
  });
  let closed = false;
  const isClosed = (): boolean => closed;

  async function watch(identity: Caller, query: AuthorizeQuery | readonly AuthorizeQuery[]): Promise<Watch> {
    if (closed) throw new AuthorizerClosedError();
    checkCaller('watch', identity);
    const queries: readonly AuthorizeQuery[] = Array.isArray(query) ? query : [query as AuthorizeQuery];
    if (queries.length === 0) throw new TypeError('watch: give a query, or a non-empty array of them');
    queries.forEach((q, i) => { checkQuery(Array.isArray(query) ? `watch: queries[${i}]` : 'watch', q); });
    refuseIfNotLive(identity);
    const decisions = queries.length === 1 ? [await deps.authorize(identity, queries[0] as AuthorizeQuery)] : await deps.authorizeMany(identity, queries);
    const denial = decisions.findIndex((d) => !d.granted);
    if (denial >= 0) throw deniedError(decisions[denial] as Decision, queries[denial] as AuthorizeQuery);
    // Closed while deciding: nothing is made.
    if (isClosed()) throw new AuthorizerClosedError();
    // The policy may have changed while deciding: the one in force now must grant too.
    return watchGranted(identity, queries);
  }

  function watchGranted(identity: Caller, queries: readonly AuthorizeQuery[]): Watch {
    if (closed) throw new AuthorizerClosedError();
    refuseIfNotLive(identity);
    const app = queries.length > 0 ? `${identity.claims.iss}\u0000${identity.claims.app}` : undefined;
    const watched = new Watched(identity, queries.map((q) => held(identity, q)), app);
    const current = app === undefined ? undefined : source.current(identity);
    const denied = current && watched.deniedUnder(current);
    if (denied) throw deniedError(denied.decision, denied.query);
    register(watched);
    return { signal: watched.controller.signal, close: () => { unregister(watched); } };
  }

  /** Expired or revoked now: the watch is refused as `authenticate()` would refuse the token. */
  function refuseIfNotLive(identity: Caller): void {
    if (deps.revocations.refuses(identity.claims)) throw new TokenRevokedError();
    if (now() >= expiryOf(identity)) throw new TokenExpiredError();
  }

  function expiryOf(identity: Caller): number {
    return (identity.claims.exp + deps.clockToleranceSec) * 1000;
  }

  function register(w: Watched): void {
    if (w.app === undefined) bare.add(w);
    else add(byApp, w.app, w);
    if (w.identity.claims.jti !== undefined) add(byJti, w.identity.claims.jti, w);
    add(bySub, w.identity.claims.sub, w);
    w.expiryKey = timeline.add(expiryOf(w.identity), w.expiry);
    if (w.app !== undefined && !checks.has(w.app)) schedule(w.app, source.nextCheckAt(w.identity));
  }

  function unregister(w: Watched): void {
    if (!w.open) return;
    w.open = false;
    if (w.app === undefined) bare.delete(w);
    else remove(byApp, w.app, w);
    if (w.identity.claims.jti !== undefined) remove(byJti, w.identity.claims.jti, w);
    remove(bySub, w.identity.claims.sub, w);
    timeline.delete(w.expiryKey, w.expiry);
    if (w.app !== undefined && !byApp.has(w.app)) {
      const c = checks.get(w.app);
      if (c) timeline.delete(c.key, c.item);
      checks.delete(w.app);
    }
  }

  function abort(w: Watched, reason: IamAuthzError): void {
    if (!w.open) return;
    unregister(w);
    w.controller.abort(reason);
  }

  /** Looks at the policy of a watched application as a request would, then again when it is due. */
  function schedule(app: string, at: number | undefined): void {
    const previous = checks.get(app);
    if (previous) timeline.delete(previous.key, previous.item);
    const item: Due = { kind: 'check', app };
    checks.set(app, { key: timeline.add(Math.max(at ?? 0, now() + 1_000), item), item });
  }

  function check(app: string): void {
    checks.delete(app);
    const first = byApp.get(app)?.values().next().value;
    if (first === undefined) return;
    source.revalidate(first.identity).then(
      () => { if (byApp.has(app)) schedule(app, source.nextCheckAt(first.identity)); },
      (error: unknown) => {
        // No policy any more (an outage past the stale bound): what a request would get, every watch gets.
        if (error instanceof PolicyUnavailableError) for (const w of [...(byApp.get(app) ?? [])]) abort(w, error);
        // This token refused by the IAM: its watch ends; the others are looked at again soon.
        else if (error instanceof TokenRejectedError) abort(first, error);
        if (byApp.has(app) && !checks.has(app)) schedule(app, undefined);
      },
    );
  }

  return {
    watch,
    watchGranted,
    policyChanged(issuer, applicationId, policy) {
      for (const w of [...(byApp.get(`${issuer}\u0000${applicationId}`) ?? [])]) {
        const denied = w.deniedUnder(policy);
        if (denied) abort(w, deniedError(denied.decision, denied.query));
      }
    },
    hinted(issuer, applicationId) {
      const app = `${issuer}\u0000${applicationId}`;
      if (byApp.has(app)) schedule(app, undefined);
    },
    revoked(r) {
      // A full list collapsed into "every token issued before now": every watch it refuses ends.
      const matching = deps.revocations.collapsed ? [...byApp.values(), bare].flatMap((set) => [...set]) : [...((r.jti !== undefined ? byJti.get(r.jti) : bySub.get(r.sub ?? '')) ?? [])];
      for (const w of matching) if (deps.revocations.refuses(w.identity.claims)) abort(w, new TokenRevokedError());
    },
    size: () => [...byApp.values()].reduce((n, set) => n + set.size, bare.size),
    close() {
      closed = true;
      for (const set of [...byApp.values(), bare]) for (const w of [...set]) abort(w, new AuthorizerClosedError());
      timeline.clear();
    },
  };
}

function held(identity: Caller, query: AuthorizeQuery): Held {
  const resource = toResourceRef(query.resource);
  // A query without a valid resource is denied by `authorize` before a watch is made.
  return { query, roles: resource ? collectRoles(identity.claims.ars, resource) : [], reference: resource?.reference ?? '' };
}

function deniedError(decision: Decision, query: AuthorizeQuery): PermissionDeniedError {
  return new PermissionDeniedError(decision, query.service, query.permission);
}

function add<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, set = new Set());
  set.add(value);
}

function remove<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (!set?.delete(value) || set.size > 0) return;
  map.delete(key);
}
