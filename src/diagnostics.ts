/**
 * Operator events, published on `node:diagnostics_channel` so that any logger or metrics system
 * can subscribe without the library depending on one. Messages never carry a token.
 */
import { channel, tracingChannel } from 'node:diagnostics_channel';

/** Names of every channel the library publishes on. */
export const channels = {
  /** `{ uri, keyCount, removedKids }` after a successful JWKS fetch. */
  jwksRefreshed: 'iam-authz:jwks:refreshed',
  /**
   * `{ uri, reason, misconfigured, error }` after a failed JWKS fetch; `misconfigured` is true for
   * a 404, 401/403, redirect or non-JSON answer (fix the URL), false for an outage (wait).
   */
  jwksFailed: 'iam-authz:jwks:failed',
  /** `{ applicationId, changeId }` after the first successful fetch of an application's policy. */
  policyFetched: 'iam-authz:policy:fetched',
  /** `{ applicationId, changeId, notModified }` when a revalidation confirmed the cached policy. */
  policyRevalidated: 'iam-authz:policy:revalidated',
  /** `{ applicationId, previousChangeId, changeId }` when a new policy version was swapped in. */
  policyChanged: 'iam-authz:policy:changed',
  /** `{ applicationId, changeId, ageMs, lastError }` when a policy older than `ttlMs` is served. */
  policyStale: 'iam-authz:policy:stale-served',
  /**
   * `{ applicationId, reason, misconfigured, error }` after a failed policy fetch; `misconfigured`
   * as for `jwksFailed`, and also for 401/403 while no token of the application was accepted lately.
   */
  policyFailed: 'iam-authz:policy:failed',
  /**
   * `{ applicationId, statusCode, acceptedRecently }` when the policy API refused a caller's own
   * token (401/403). Only that caller is refused; never carries the token.
   */
  policyTokenRefused: 'iam-authz:policy:token-refused',
  /**
   * `{ code, status, message }` when `authenticate` refuses a token or cannot verify it. The message
   * is the log line: an issuer or tenant mismatch names the expected and the actual value. Never
   * carries the token.
   */
  authenticateFailed: 'iam-authz:authenticate:failed',
  /**
   * A `DecisionEvent` for every grant (sampled by `decisionSampleRate`) and denial of `authorize`,
   * `authorizeMany` and the guards: time, service, permission, reference, granted, reason, roles,
   * changeId, application, tenant, actor, jti, shadow. Never carries the token.
   */
  decision: 'iam-authz:decision',
  /** `{ service, permission, reference, reason, roles, changeId, sub, app }` for every denial. */
  decisionDenied: 'iam-authz:decision:denied',
  /** `{}` for every verified-token cache hit (a counter's feed; published only while subscribed). */
  tokenCacheHit: 'iam-authz:token:cache-hit',
  /**
   * Tracing channels (`diagnostics_channel.tracingChannel`, events `start`, `end`, `asyncStart`,
   * `asyncEnd`, `error`) around `authenticate` (context `{}`) and `authorize` (context
   * `{ service, permission }`); `result` is `{ claims }` of the verified caller (never the token) or
   * the decision. Feeds `iam-authz/otel`'s spans.
   *
   * A subscriber that throws is Node's matter: `publish` returns normally and Node rethrows the
   * error on the next tick as an uncaught exception (Node 20), which ends the process unless
   * handled. Subscribers must not throw; the library's own (`iam-authz/otel`) catch everything.
   */
  authenticateTrace: 'iam-authz:authenticate',
  /** The tracing channel around `authorize`; see `authenticateTrace`. */
  authorizeTrace: 'iam-authz:authorize',
} as const;

export const jwksRefreshed = channel(channels.jwksRefreshed);
export const jwksFailed = channel(channels.jwksFailed);
export const policyFetched = channel(channels.policyFetched);
export const policyRevalidated = channel(channels.policyRevalidated);
export const policyChanged = channel(channels.policyChanged);
export const policyStale = channel(channels.policyStale);
export const policyFailed = channel(channels.policyFailed);
export const policyTokenRefused = channel(channels.policyTokenRefused);
export const authenticateFailed = channel(channels.authenticateFailed);
export const decision = channel(channels.decision);
export const decisionDenied = channel(channels.decisionDenied);
export const tokenCacheHit = channel(channels.tokenCacheHit);
export const authenticateTrace = tracingChannel(channels.authenticateTrace);
export const authorizeTrace = tracingChannel(channels.authorizeTrace);
