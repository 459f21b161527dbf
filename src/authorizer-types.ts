/** The public shape of an authorizer: what {@link createAuthorizer} returns, and what `ready()` takes. */
import type { AccessibleQuery, AuthorizeQuery, PermissionsQuery } from './decider/queries.js';
import type { Revocation } from './revocation/revocations.js';
import type { Watch } from './watch/watcher.js';
import type { InventoryEntry, UngrantedPermission } from './inventory.js';
import type { AccessibleResource, Caller, Decision, HeldPermission, Identity } from './types.js';

/**
 * What {@link Authorizer.ready} warms besides the signing keys.
 * @inline
 */
export interface ReadyOptions {
  /**
   * Application ids (the tokens' `app`) whose role policy is fetched now, so the first request of
   * each pays no policy fetch. Needs the `policyToken` option: without it the policy is fetched
   * with each caller's own token, which `ready()` does not have. Default: none.
   */
  readonly applications?: readonly string[];
}

/**
 * Where one cached copy (an issuer's signing keys, an application's policy) stands. `state`:
 * `cold` (nothing usable held), `fresh` (younger than `ttlMs`), `stale` (older, not yet refreshed,
 * no failure), `failing` (the last fetch failed; a copy may still be served until `ttlMs + maxStaleMs`).
 * @inline
 */
export interface CacheStatus {
  /**
   * `fresh`: within its TTL; `stale`: past it, served while a refresh is due; `failing`: served
   * while fetches fail, within `maxStaleMs`; `cold`: nothing usable (never fetched, or past
   * `ttlMs + maxStaleMs`).
   */
  readonly state: 'fresh' | 'stale' | 'failing' | 'cold';
  /** Age (ms) of the copy held, by the `now` option's clock; `null` when none. */
  readonly ageMs: number | null;
  /** When (epoch ms) the next fetch becomes due or allowed; `null` while one runs (or never, for a local JWK Set). */
  readonly nextRefreshAt: number | null;
  /** Fetches failed in a row since the last success. */
  readonly consecutiveFailures: number;
  /** The wait (ms) before the next retry after those failures; 0 when not failing. */
  readonly backoffMs: number;
}

/**
 * What {@link Authorizer.status} returns: plain JSON, no token, no key, no policy body.
 * @inline
 */
export interface AuthorizerStatus {
  /** Per accepted issuer: its signing keys (the key ids held, sorted). */
  readonly issuers: Record<string, CacheStatus & {
    /** The key ids held, sorted. */
    readonly keyIds: string[];
  }>;
  /**
   * Per issuer with a policy API, per application (oldest first): the policy held, by its `changeId`
   * (`null` when none), and the inventoried permissions no role of that policy grants (see `inventory()`).
   */
  readonly applications: Record<string, Record<string, CacheStatus & {
    /** The `changeId` of the policy held; `null` when none. */
    readonly changeId: string | null;
    /** Inventoried permissions no role of the policy held grants. */
    readonly ungranted: UngrantedPermission[];
  }>>;
  /** The `policy.hints` channel: whether it is connected; `null` without a channel. */
  readonly hints: {
    /** Every issuer's policy client receives hints now. */
    readonly connected: boolean;
  } | null;
  /**
   * How full `inventory()` is. It holds at most `maxEntries` distinct guards; a guard made beyond
   * that still enforces but is not listed, and is counted in `dropped` (guards made per request,
   * with names taken from the request, are the usual cause).
   */
  readonly inventory: {
    /** Distinct guards listed. */
    readonly entries: number;
    /** Most guards listed (5,000). */
    readonly maxEntries: number;
    /** Guards made since the inventory was full, not listed. */
    readonly dropped: number;
  };
  /** The revocation list (`revoke`). */
  readonly revocations: {
    /** Revocations in force. */
    readonly entries: number;
    /** The list outgrew `revocation.maxEntries` and holds one revocation of every token issued before a moment. */
    readonly collapsed: boolean;
    /** Whether the revocations made before this replica started were read from the hint channel (see `ready()`). */
    readonly loaded: 'loaded' | 'unavailable' | 'none';
  };
  /** Watches (`watch`). */
  readonly watches: {
    /** Open watches. */
    readonly open: number;
  };
}

/**
 * What {@link Authorizer.ready} resolves with: per accepted issuer, whether its keys (and asked policies) were had.
 * @inline
 */
export interface ReadyReport {
  /** Per accepted issuer: ready, or why not. */
  readonly issuers: Record<string, {
    /** The issuer's keys (and the policies asked for) are in hand. */
    readonly ready: true;
  } | {
    /** The issuer's keys or a policy asked for could not be had. */
    readonly ready: false;
    /** The error's code, e.g. `ERR_JWKS_UNAVAILABLE`. */
    readonly code: string;
    /** True when waiting will not help (a wrong URL, refused credentials). */
    readonly misconfigured: boolean;
    /** What failed, naming the URL and status; never a token or an upstream body. */
    readonly message: string;
  }>;
  /**
   * The revocations made before this replica started, read from the hint channel
   * (`HintChannel.revocationsInForce`, which `redisHints` keeps): `'loaded'`, `'unavailable'` (the
   * channel could not be read: only revocations made from now on are known here; `ready()` tries
   * again when called again), or `'none'` (no channel, or one that keeps none).
   */
  readonly revocations: 'loaded' | 'unavailable' | 'none';
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
   * Fetches each issuer's JWKS now instead of on the first request, and the role policy of each of
   * `options.applications` (with `policyToken`). Resolves with a report (per issuer: ready, or why not) when at least one
   * issuer is ready — with several issuers, one IAM's outage does not hold the others' tokens back
   * (that issuer's tokens get 503 until it answers; check the report or `status()`). Rejects, with
   * the first issuer's error, only when no issuer is ready: 503, whose `misconfigured` tells a wrong
   * URL or refused credentials from an outage.
   */
  ready(options?: ReadyOptions): Promise<ReadyReport>;
  /**
   * Where every cache stands, for a health endpoint or a scrape: per issuer the signing keys, per
   * issuer and application the policy, and the hint channel. Plain JSON (stable under
   * `JSON.stringify`), computed now, without network; never a token, a key or a policy body.
   */
  status(): AuthorizerStatus;
  /**
   * What the guards made over this authorizer ask for, registered when each guard is created (a
   * NestJS decorator's when the module initialises): plain JSON, de-duplicated, in a stable order.
   * Snapshot it (`expect(authorizer.inventory()).toMatchSnapshot()`) so that a change shows in review.
   */
  inventory(): InventoryEntry[];
  /**
   * Which inventoried permissions (or, given `permissions`, which of those) no role of the policy in
   * hand for `applicationId` grants; `undefined` when no policy of that application has been fetched.
   * The same list the `IAM_AUTHZ_UNGRANTED_PERMISSION` warning reports once per new `changeId`.
   */
  ungranted(applicationId: string, permissions?: readonly { service: string; permission: string }[]): UngrantedPermission[] | undefined;
  /**
   * Keeps a grant under watch, for a connection that outlives its request (a WebSocket, a
   * server-sent event stream, a subscription, a long download): decides `query` (or every query
   * of an array: all must hold) first, like {@link check} — rejecting with the same errors, and
   * creating nothing — then resolves with a `Watch` whose `signal` aborts when the grant stops being
   * true, `signal.reason` saying why: `ERR_TOKEN_EXPIRED` when `authenticate()` would refuse the
   * token (its `exp` plus `clockToleranceSec`; within a second), `ERR_PERMISSION_DENIED` when this
   * replica takes a new policy (revalidation, refetch or hint) under which a query is denied — a new
   * policy that leaves the grant alone does not abort — or `ERR_TOKEN_REVOKED` ({@link revoke});
   * also `ERR_POLICY_UNAVAILABLE` when no policy can be had any more (an outage past the stale bound),
   * `ERR_TOKEN_REJECTED` when the IAM refuses the token, and `ERR_AUTHORIZER_CLOSED` on `close()`.
   * A watch keeps its application's policy revalidated when due, even without other traffic. Call
   * `close()` when the connection ends: nothing fires after it returns, nothing is left behind. One
   * timer per authorizer, whatever the number of watches; none while none is open.
   */
  watch(identity: Caller, query: AuthorizeQuery | readonly AuthorizeQuery[]): Promise<Watch>;
  /**
   * Refuses a token before its `exp`: `{ jti }`, or every token of `{ sub }` with an `iat` earlier
   * than `issuedBefore` (seconds since the epoch; default now, rounded up). On this replica as soon
   * as the promise resolves, `authenticate()` and every guard refuse a matching token, cached or not,
   * with 401 `ERR_TOKEN_REVOKED`, and open watches of it abort; a token of the subject issued later
   * works. With a hint channel (`policy.hints`, e.g. `redisHints`) the revocation reaches every
   * replica, and those started later read it (see `ready()`); without one it holds on this replica
   * only. Kept until the tokens it matches have expired (`revocation.retainSec`). Rejects with a
   * `TypeError` for anything else than `{ jti }` or `{ sub, issuedBefore? }`.
   */
  revoke(revocation: Revocation): Promise<void>;
  /** Aborts fetches under way and releases sockets and timers owned by the authorizer. Idempotent. */
  close(): Promise<void>;
}
