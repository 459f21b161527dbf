/**
 * Public data types: what a verified token looks like to the application.
 *
 * Glossary — one word per concept; new names use the word chosen, never the ones listed "not".
 * - **identity** (`Identity`): a verified token — token, header, claims. The decision API takes
 *   a caller (`Caller`: `{ token, claims }`, what it needs of an identity); a guard's result attached to
 *   the request is its **state** (`IamState`: the identity plus its decision). Not "principal",
 *   "user", "auth".
 * - **actor**: who the token speaks for; `sub` is the protocol's claim holding the actor id (wire
 *   name, kept). In prose and new names: "actor" or `sub`, not "subject", "user id".
 * - **seconds**: an option or field in seconds ends in `Sec` (`retryAfterSec`,
 *   `clockToleranceSec`, `refreshMarginSec`); in milliseconds `Ms`. `expiryInSecs` is the
 *   protocol's wire name (kept), as are `sub`, `ars`, `changeId`. Not `Secs`, `Seconds`, `S`.
 * - **mode**: only the guard mode, `'enforce' | 'report'` (`GuardMode`; set on the authorizer,
 *   an adapter, or a route). A key file's permissions are its "file mode" (Unix's word); nothing
 *   else is called a "mode".
 * - **jwks**: the key set document (`{ keys }`) and the options of its client (`jwks: { … }`);
 *   its address is `jwksUri` (a list: `jwksUris`). Not "keys URL", "certs".
 * - **status**: an HTTP status number (`error.status`, `answer.status`), and the operator's
 *   report `authorizer.status()`. Inside that report a cache's freshness is its **state**
 *   (`'fresh' | 'stale' | 'failing' | 'cold'`); nothing else is a "status".
 * - **problem**: the RFC 9457 body only (`ProblemDetails`, `problemDetails`,
 *   `application/problem+json`). A wrong option is a **mistake** or an error; an outage is a
 *   **failure**; a decision's explanation is its **reason**. Not "problem" for those.
 * - **answer**: the HTTP response an error carries (`ErrorResponse`: status, headers, body).
 * - **permission arguments**: what a permission guard is given — service, permission(s), the
 *   **target** (a resource type and a resolver, or `{ node }`), route options — parsed once by
 *   `parsePermissionArgs` (src/adapter/permission-args.ts) into `PermissionArgs`.
 */

/**
 * One access reference (`ars` element), normalised: every field is an array of strings.
 * @inline
 */
export interface AccessReference {
  /** Role keys. */
  readonly r: readonly string[];
  /** Custom resource references, each `TYPE=value`. */
  readonly c: readonly string[];
  /** Node (resource) ids. */
  readonly n: readonly string[];
}

/**
 * The JOSE header of a verified IAM token (docs/protocol.md, "The access token").
 * @inline
 */
export interface IamTokenHeader {
  /** Signature algorithm, e.g. `RS256`. */
  readonly alg: string;
  /** Id of the signing key in the JWKS. */
  readonly kid: string;
  /** Token format, e.g. `t1`. */
  readonly cty: string;
  readonly [parameter: string]: unknown;
}

/** The claims of a verified IAM token (docs/protocol.md, "Claims"). `ars` is always present and normalised. */
export interface IamClaims {
  /** Unique token id. */
  readonly jti?: string;
  /** Issuer: `{baseUrl}/authentication/v1`. */
  readonly iss: string;
  /** Subject: the actor id. */
  readonly sub: string;
  /** Audience: the tenant id. */
  readonly aud?: string;
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /** Issued at, seconds since the epoch. */
  readonly iat?: number;
  /** Not before, seconds since the epoch. */
  readonly nbf?: number;
  /** Account id. */
  readonly acc?: string;
  /** Application id; the policy lookup is keyed by it. */
  readonly app: string;
  /** Tenant id (equals `aud`). */
  readonly tid?: string;
  /** Access references, normalised (missing → `[]`). */
  readonly ars: readonly AccessReference[];
  readonly [claim: string]: unknown;
}

/**
 * What the decision API needs of a verified caller: its token (for the policy fetch) and claims.
 * An {@link Identity} is one, and so is a guard's `req.iam` state.
 * @inline
 */
export interface Caller {
  /** The compact JWT as presented. Never log it. */
  readonly token: string;
  /** The verified claims. */
  readonly claims: IamClaims;
}

/** A verified caller. Frozen: it may be shared between requests through the token cache. */
export interface Identity {
  /** The compact JWT as presented. Never log it. */
  readonly token: string;
  /** The verified JOSE header. */
  readonly header: IamTokenHeader;
  /** The verified claims. */
  readonly claims: IamClaims;
}

/** A permission a service policy grants. */
export interface PermissionRef {
  /** Permission key, e.g. `READ`. */
  readonly key: string;
}

/** The permissions a role grants in one service. */
export interface ServicePolicy {
  /** Where the service is defined, e.g. `APPLICATION`; not used for decisions. */
  readonly serviceDefinitionSource?: string;
  /** Service key, e.g. `vehicle-service`. */
  readonly serviceDefinitionKey: string;
  /** The granted permissions. */
  readonly permissions: readonly PermissionRef[];
}

/** A role of the application and what it grants. */
export interface Role {
  /** Role key, as in `ars[].r`. */
  readonly key: string;
  /** Per service; absent means none. */
  readonly servicePolicies?: readonly ServicePolicy[];
}

/** Response of the policy API (spec §2.3): the library reads it; the development kit (`iam-authz-dev`) serves it. */
export interface RolePolicy {
  /** The application the policy belongs to (the token's `app`). */
  readonly applicationId: string;
  /** Version of the policy; a new value means cached copies are out of date. */
  readonly changeId: string;
  /** The application's roles. */
  readonly roles: readonly Role[];
}

/**
 * Why a decision came out as it did. Stable strings: `GRANTED`; `INVALID_RESOURCE` (the resource
 * reference was empty or not a string); `NO_MATCHING_REFERENCE` (no access reference in the token
 * names the resource); `ROLE_NOT_IN_POLICY` (the token's roles for the resource are not in the
 * application's policy); `NO_SERVICE_POLICY` (none of those roles has a service policy for the
 * service); `PERMISSION_NOT_GRANTED` (none lists the permission).
 * @inline
 */
export type DecisionReason =
  | 'GRANTED'
  /** The resource reference was empty or not a string. */
  | 'INVALID_RESOURCE'
  /** No access reference in the token names this resource. */
  | 'NO_MATCHING_REFERENCE'
  /** The token's roles for this resource are not in the application's policy. */
  | 'ROLE_NOT_IN_POLICY'
  /** The roles exist, but none has a service policy for this service. */
  | 'NO_SERVICE_POLICY'
  /** Service policies exist, but none lists the permission. */
  | 'PERMISSION_NOT_GRANTED';

/** The outcome of one permission check. A denial is a normal result, not an error. */
export interface Decision {
  /** Whether the permission is granted. */
  readonly granted: boolean;
  /** The resource reference checked: `TYPE=value`, or the node id. */
  readonly reference: string;
  /** Role keys the token holds for this reference. */
  readonly roles: readonly string[];
  /** The first role found that grants the permission. */
  readonly grantedBy?: {
    /** The role key. */
    readonly role: string;
    /** The service definition key. */
    readonly service: string;
    /** The permission key. */
    readonly permission: string;
  };
  /** `changeId` of the policy the decision was made with; `undefined` when none was needed (no roles for the resource). */
  readonly changeId: string | undefined;
  /** Which step decided (a stable string; docs/decisions.md lists them). */
  readonly reason: DecisionReason;
}

/** `enforce`: a denial is a 403. `report`: a denial is logged (`shadow: true`) and the request proceeds; 401 and 503 stay. */
export type GuardMode = 'enforce' | 'report';

/** What a guard attaches to the request (`req.iam`, `ctx.state.iam`, `request.iam`). */
export interface IamState {
  /** The verified bearer token. Never log it. */
  readonly token: string;
  /** The verified claims. */
  readonly claims: IamClaims;
  /** The permission decision; absent after `authenticate()` alone. With several resources: the last one. */
  readonly decision?: Decision;
  /** Every decision, when the resolver returned several resources (or `requireAnyPermission` asked several permissions). */
  readonly decisions?: readonly Decision[];
  /** `true` when the route runs in `report` mode and the permission was denied: the request went on anyway. */
  readonly shadow?: boolean;
  /**
   * Aborts when this request's grant stops being true, for a response that outlives the guard's
   * decision (server-sent events, a stream, a long download): `signal.reason` is an
   * `IamAuthzError` whose `code` says why — `ERR_TOKEN_EXPIRED` (within a second of `exp` plus
   * `clockToleranceSec`), `ERR_PERMISSION_DENIED` (a new policy no longer grants the route's
   * permission), `ERR_TOKEN_REVOKED` (`authorizer.revoke`), or `ERR_TOKEN_REJECTED`,
   * `ERR_POLICY_UNAVAILABLE`, `ERR_AUTHORIZER_CLOSED` (as `authorizer.watch`). Already aborted when
   * read after the grant ended. After `authenticate()` alone, or in `report` mode, it watches the
   * token only (expiry, revocation): report mode never enforces a permission. For
   * `requireAnyPermission`, it watches the permission that granted, on each resource.
   *
   * Made on first read: a route that never reads it costs no watch, timer or listener. The adapter
   * closes the watch when the response ends: Express, Koa and Fastify on the Node response's
   * `'close'`; Hono when the response body has been sent or cancelled (read the signal before the
   * handler returns its `Response`), or when `c.req.raw.signal` aborts; the fetch guards when the
   * body of the `Response` handed to their `respond(state, response)` has been sent, or when the
   * `Request`'s `signal` aborts (without `respond`, where the runtime does not abort it after a
   * complete response, the watch lasts until the token's `exp` at the latest). Set by this library's adapters; absent
   * from the state of a `createGuards` guard in an adapter of your own.
   */
  readonly signal?: AbortSignal;
}

/**
 * A resource the caller may act on, with the roles that grant the permission there (`accessible` with `explain: true`).
 * @inline
 */
export interface AccessibleResource {
  /** The reference's value (`WVW1` of `VIN=WVW1`), or the node id. */
  readonly value: string;
  /** The token's roles for this value that grant the permission. */
  readonly roles: readonly string[];
}

/**
 * A permission held on a resource (`permissionsFor`), with the roles that grant it.
 * @inline
 */
export interface HeldPermission {
  /** The permission key, e.g. `WRITE`. */
  readonly permission: string;
  /** The token's roles for the resource that grant it. */
  readonly roles: readonly string[];
}
