/**
 * The hint channel: the types a fleet of replicas shares to learn of a policy change before their
 * cached copy expires (a reason to revalidate — never a policy), and of a revocation
 * (`authorizer.revoke`) — which can only ever refuse more tokens.
 */

/**
 * "The role policy of `application`, as issued by `issuer`, is now at `changeId`."
 *
 * A receiver must treat a hint as a reason to revalidate only: it makes one conditional request to
 * the policy API (single-flight, within the usual refresh budget) and uses what the API answers. A
 * hint never carries or replaces a policy, so a forged or replayed hint can cause a request, never a
 * grant. A receiver must validate every field (a string of at most 1024 characters) and trust no
 * other key.
 * @inline
 */
export interface PolicyHint {
  /** The `iss` of the tokens of the application. */
  readonly issuer: string;
  /** The application, as in the tokens' `app` claim. */
  readonly application: string;
  /** The `changeId` the publishing replica fetched. */
  readonly changeId: string;
}

/**
 * "Tokens are revoked": one `jti`, or every token of `sub` with an `iat` earlier than
 * `issuedBefore` (seconds since the epoch), until `until` (seconds since the epoch; when the tokens
 * it can match have expired). A receiver validates every field and only ever adds it to its list:
 * a forged or replayed one can refuse tokens, never admit one.
 * @inline
 */
export interface RevocationHint {
  /** Tells a revocation from a policy hint (which has no `type`). */
  readonly type: 'revocation';
  /** The revoked token's `jti` (or `sub`). */
  readonly jti?: string;
  /** The subject whose tokens issued before `issuedBefore` are revoked (or `jti`). */
  readonly sub?: string;
  /** With `sub`: tokens with an earlier `iat` are revoked (seconds since the epoch). */
  readonly issuedBefore?: number;
  /** Until when the revocation is kept (seconds since the epoch). */
  readonly until: number;
}

/**
 * A publish/subscribe channel shared by the replicas of a service (`iam-authz/redis` provides one
 * over Redis). A replica that fetches a new `changeId` publishes it once, and `authorizer.revoke`
 * publishes its revocation; a publisher also receives its own hints.
 */
export interface HintChannel {
  /**
   * Sends a hint to every subscriber. Should resolve even when the transport is down (a policy
   * hint is best-effort: the policy's TTL still bounds how stale a replica can be; a revocation is
   * in force on the replica that made it whatever happens here).
   */
  publish(hint: PolicyHint | RevocationHint): Promise<void>;
  /**
   * Calls `listener` with each hint received, policy hints and revocations alike (their fields to
   * be validated by the receiver). Returns the function that unsubscribes; calling it more than
   * once does nothing.
   */
  subscribe(listener: (hint: PolicyHint | RevocationHint) => void): () => void;
  /**
   * Optional: the revocations still in force, for a replica that starts after they were made (the
   * channel keeps each until its `until`; `redisHints` does, in a sorted set). `ready()` waits for
   * them. Without it, a replica learns only the revocations made while it runs.
   */
  revocationsInForce?(): Promise<readonly RevocationHint[]>;
  /** Whether the transport is connected now; absent means always connected. */
  readonly connected?: boolean;
}
