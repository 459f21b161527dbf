/**
 * One fetch of an application's role policy (spec §4.2): the conditional GET, then — sliced, so a
 * policy of 16 MiB never holds the event loop for more than a few ms at a time — the hash, parse,
 * check and compile. Says whether the answer confirms the policy held or brings a new one; throws
 * an `UpstreamError` for anything else. Holds no state: the cache (`policy-client.ts`) does.
 */
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { compilePolicyYielding, type CompiledPolicy } from '../engine/compile-policy.js';
import type { Closer } from '../lib/closer.js';
import { BYTES_PER_TURN, nextTurn } from '../lib/sliced-json.js';
import { httpGet, parseJsonBodySliced, UpstreamError } from '../lib/upstream.js';
import type { RolePolicy } from '../types.js';
import { policyMistakeSliced } from './validate-policy.js';

/** The characters of an opaque entity tag (RFC 9110 `etagc`), restricted to visible ASCII. */
export const ETAGC = /^[\x21\x23-\x7e]+$/;

/** Where and how policies are fetched. */
export interface PolicyFetchConfig {
  readonly url: string;
  readonly dispatcher: Dispatcher;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** Aborts the fetch when the client closes. */
  readonly closer: Closer;
}

/** What the cache holds of the policy it asks about. */
export interface HeldPolicy {
  readonly policy: CompiledPolicy;
  /**
   * SHA-256 of the last 200 body that set or confirmed it: the same bytes again are the same
   * policy, so they are neither parsed nor compiled again (the IAM sends no `ETag`).
   */
  readonly digest: string | undefined;
}

/** What a successful fetch brought. */
export type FetchedPolicy =
  | {
    /** The held policy is confirmed: a 304 to `If-None-Match`, the same body, or the same `changeId`. */
    readonly kind: 'confirmed';
    /** A 304. */
    readonly notModified: boolean;
    /** The digest of the body that confirmed it (the held one for a 304). */
    readonly digest: string | undefined;
  }
  | {
    /** A new `changeId`: its policy, compiled. */
    readonly kind: 'new';
    readonly policy: CompiledPolicy;
    readonly digest: string;
  };

/**
 * Fetches `applicationId`'s policy with `token`, conditionally on `held`. `accepted` is called as
 * soon as the API answered 2xx or 304 (it accepted the token), before the body is checked. Rejects
 * with an `UpstreamError` for any failure, a malformed answer or another application's policy.
 */
export async function fetchPolicy(config: PolicyFetchConfig, applicationId: string, token: string, held: HeldPolicy | undefined, accepted: () => void): Promise<FetchedPolicy> {
  const { url } = config;
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${token}` };
  // Only a changeId that is a valid entity tag (visible ASCII, no '"') is sent: any other
  // character makes undici refuse the header, and every revalidation would fail until the
  // policy is past maxStaleMs. Without the header the API answers 200 and the changeId decides.
  const conditional = held !== undefined && ETAGC.test(held.policy.changeId);
  if (conditional) headers['if-none-match'] = `"${held.policy.changeId}"`;
  const res = await httpGet(url, {
    dispatcher: config.dispatcher,
    timeoutMs: config.timeoutMs,
    maxBytes: config.maxBytes,
    headers,
    // A 304 confirms only what was asked about: to a request without If-None-Match it is a
    // broken answer, and a failure (never a reason to serve the policy longer).
    acceptStatuses: conditional ? [304] : [],
    closer: config.closer,
    expectJson: true,
  });
  accepted();
  if (res.statusCode === 304 && conditional) return { kind: 'confirmed', notModified: true, digest: held.digest };
  const digest = await sha256Sliced(res.body);
  if (held !== undefined && digest === held.digest) return { kind: 'confirmed', notModified: false, digest };
  const body = await parseJsonBodySliced(res.body, url) as Partial<RolePolicy> | null;
  if (typeof body !== 'object' || body === null || body.applicationId !== applicationId) {
    // The applicationId received is not quoted: no upstream text in messages.
    throw new UpstreamError('malformed', `the policy from ${url} is not the one of the token's application`);
  }
  // Validated before the changeId comparison: a malformed answer is a failure even when it
  // repeats the cached changeId, so it can never extend the cached policy's life past maxStaleMs.
  const mistake = await policyMistakeSliced(body, nextTurn);
  if (mistake !== undefined) throw new UpstreamError('malformed', `the policy from ${url} is malformed: ${mistake}`);
  if (held !== undefined && body.changeId === held.policy.changeId) return { kind: 'confirmed', notModified: false, digest };
  // Large policies are compiled in slices, so that other applications' requests are not held up.
  return { kind: 'new', policy: await compilePolicyYielding(body as RolePolicy), digest };
}

/** SHA-256 of `body`, hashed {@link BYTES_PER_TURN} bytes per turn of the event loop. */
async function sha256Sliced(body: Buffer): Promise<string> {
  const hash = createHash('sha256');
  for (let at = 0; at < body.length; at += BYTES_PER_TURN) {
    if (at > 0) await nextTurn();
    hash.update(body.subarray(at, at + BYTES_PER_TURN));
  }
  return hash.digest('base64url');
}
