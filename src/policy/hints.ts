/**
 * The changeId hint channel: the types a fleet of replicas shares to learn of a policy change before
 * their cached copy expires. The channel only carries a reason to revalidate — never a policy.
 */

/**
 * "The role policy of `application`, as issued by `issuer`, is now at `changeId`."
 *
 * A receiver must treat a hint as a reason to revalidate only: it makes one conditional request to
 * the policy API (single-flight, within the usual refresh budget) and uses what the API answers. A
 * hint never carries or replaces a policy, so a forged or replayed hint can cause a request, never a
 * grant. A receiver must validate every field (a string of at most 1024 characters) and trust no
 * other key.
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
 * A publish/subscribe channel shared by the replicas of a service (`iam-authz/redis` provides one
 * over Redis). A replica that fetches a new `changeId` publishes it once; a publisher also receives
 * its own hints.
 */
export interface HintChannel {
  /**
   * Sends a hint to every subscriber. Should resolve even when the transport is down (a hint is
   * best-effort: the policy's TTL still bounds how stale a replica can be).
   */
  publish(hint: PolicyHint): Promise<void>;
  /**
   * Calls `listener` with each hint received (its fields to be validated by the receiver). Returns
   * the function that unsubscribes; calling it more than once does nothing.
   */
  subscribe(listener: (hint: PolicyHint) => void): () => void;
  /** Whether the transport is connected now; absent means always connected. */
  readonly connected?: boolean;
}
