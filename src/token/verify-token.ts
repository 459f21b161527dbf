/**
 * The verifier: compact token → verified {@link Identity}. Order matters: structure and header
 * first (cheap, no key needed), then the signature, and only then the claims, so nothing about an
 * unsigned payload is ever reported.
 */
import { TokenInvalidError } from '../errors.js';
import type { VerificationKey } from '../jwks/import-jwks.js';
import type { KeySet } from '../jwks/key-set.js';
import type { IamTokenHeader, Identity } from '../types.js';
import { checkClaims, type ClaimPolicy } from './claims.js';
import { copyParts, decodeJsonSegment, signedParts, signedPartsInScratch, splitCompact, type CompactSplit } from './compact.js';
import { freezeTree } from './freeze-tree.js';
import { checkHeader, type HeaderPolicy } from './header.js';
import { needsWebCrypto, verifySignature, verifySignatureInPool, type SupportedAlgorithm } from './signature.js';

export interface VerifyPolicy extends HeaderPolicy, ClaimPolicy {
  /** Verifications allowed in libuv's thread pool at once; 0 verifies every signature on the event loop. */
  poolVerifications: number;
}

/** Most distinct header segments remembered; an IAM has a handful (one per key and format). */
const MAX_HEADERS = 32;

/**
 * Verifies tokens under one policy. Header segments that have verified once are remembered with
 * their checked, frozen header: every token from one key shares the same header text, so the
 * second one skips its decode, JSON parse and checks. Only headers of tokens whose signature
 * verified are remembered, so a caller cannot fill the memory with forged ones.
 */
export class TokenVerifier {
  /**
   * The key set of a token's issuer: each accepted issuer's keys are separate, so a key is never
   * looked up in another accepted issuer's set. A token naming no accepted issuer is checked with
   * the first issuer's keys, only so that a mismatch is reported (expected vs actual) about a token
   * whose signature verified; the claim check then refuses it.
   */
  readonly #keySetOf: (issuer: unknown) => KeySet;
  readonly #policy: VerifyPolicy;
  readonly #now: () => number;
  readonly #headers = new Map<string, IamTokenHeader>();
  /** The remembered header met last, with its segment: checked first. */
  #lastHeader: { readonly segment: string; readonly header: IamTokenHeader } | undefined;
  /** Signature checks running in the thread pool now; past the limit, the next one runs inline. */
  #inPool = 0;

  constructor(keySetOf: (issuer: unknown) => KeySet, policy: VerifyPolicy, now: () => number) {
    this.#keySetOf = keySetOf;
    this.#policy = policy;
    this.#now = now;
  }

  /** Synchronous when the keys are at hand (the usual case), a Promise when they must be fetched. */
  verify(token: string): Identity | Promise<Identity> {
    const split = splitCompact(token);
    // The header of the last token is usually this one's too: compared in place, no slice, no hash.
    const last = this.#lastHeader;
    let headerSegment: string | undefined;
    let known: IamTokenHeader | undefined;
    if (last !== undefined && last.segment.length === split.first && token.startsWith(last.segment)) known = last.header;
    else {
      headerSegment = token.slice(0, split.first);
      known = this.#headers.get(headerSegment);
      if (known) this.#lastHeader = { segment: headerSegment, header: known };
    }
    const header = known ?? checkedHeader(decodeJsonSegment(token, 0, split.first, 'header'), this.#policy);
    // Decoded and its nesting bounded before any RSA work; frozen below the top level now, the top
    // level once the claims are checked (the normalised `ars` is written into it).
    const payload = decodeJsonSegment(token, split.first + 1, split.second, 'payload');
    freezeTree(payload, 'payload', false);
    const keySet = this.#keySetOf(payload.iss);
    const keys = keySet.peek(header.kid);
    const newHeaderSegment = known ? undefined : headerSegment;
    if (keys) return this.#finish(keySet, token, split, header, payload, keys, newHeaderSegment);
    return keySet.resolve(header.kid).then((resolved) => this.#finish(keySet, token, split, header, payload, resolved, newHeaderSegment));
  }

  clear(): void {
    this.#headers.clear();
    this.#lastHeader = undefined;
  }

  #finish(keySet: KeySet, token: string, split: CompactSplit, header: IamTokenHeader, payload: Record<string, unknown>, keys: readonly VerificationKey[], newHeaderSegment: string | undefined): Identity | Promise<Identity> {
    const alg = header.alg as SupportedAlgorithm; // checkHeader allowed it, and options only allow supported ones
    if (this.#inPool < this.#policy.poolVerifications || needsWebCrypto(alg)) {
      // Off the event loop while the pool has room; bounded, so a burst cannot queue without end.
      const { signingInput, signature } = signedParts(token, split);
      this.#inPool++;
      return verifiedInPool(keys, alg, signingInput, signature).finally(() => { this.#inPool--; }).then((ok) => {
        if (ok) return this.#accept(token, header, payload, newHeaderSegment);
        return this.#afterFailure(keySet, token, header, payload, keys, alg, signingInput, signature, newHeaderSegment);
      });
    }
    // Verified on the spot: the bytes can live in the shared scratch buffer, and are copied only
    // when the failure path goes asynchronous (a refetch of the keys).
    const parts = signedPartsInScratch(token, split);
    if (!verifiedBy(keys, alg, parts.signingInput, parts.signature)) {
      const { signingInput, signature } = copyParts(parts);
      return this.#afterFailure(keySet, token, header, payload, keys, alg, signingInput, signature, newHeaderSegment);
    }
    return this.#accept(token, header, payload, newHeaderSegment);
  }

  #afterFailure(keySet: KeySet, token: string, header: IamTokenHeader, payload: Record<string, unknown>, keys: readonly VerificationKey[], alg: SupportedAlgorithm, signingInput: Buffer, signature: Buffer, newHeaderSegment: string | undefined): Identity | Promise<Identity> {
    {
      // Perhaps the IAM replaced the key under this kid: refetch (cooldown-bounded, shared) and
      // verify once more with the new key; a forged token costs at most one refetch per cooldown.
      const refetch = keySet.refetchAfterFailure?.(header.kid, keys);
      if (!refetch) throw new TokenInvalidError('token signature is invalid');
      return refetch.then(async (fresh) => {
        const ok = fresh !== undefined && (needsWebCrypto(alg) ? await verifiedInPool(fresh, alg, signingInput, signature) : verifiedBy(fresh, alg, signingInput, signature));
        if (!ok) throw new TokenInvalidError('token signature is invalid');
        return this.#accept(token, header, payload, newHeaderSegment);
      });
    }
  }

  #accept(token: string, header: IamTokenHeader, payload: Record<string, unknown>, newHeaderSegment: string | undefined): Identity {
    if (newHeaderSegment !== undefined && this.#headers.size < MAX_HEADERS) this.#headers.set(newHeaderSegment, header);
    const claims = checkClaims(payload, this.#policy, this.#now());
    // Deeply frozen (the levels below by freezeTree): the token cache hands the same Identity to
    // every request presenting the token, so no request may change what another one sees.
    return Object.freeze({ token, header, claims: Object.freeze(claims) });
  }
}

/** {@link verifiedBy} in the thread pool, key after key (there is usually one). */
async function verifiedInPool(keys: readonly VerificationKey[], alg: SupportedAlgorithm, signingInput: Buffer, signature: Buffer): Promise<boolean> {
  for (const candidate of keys) {
    if (candidate.alg !== undefined && candidate.alg !== alg) continue;
    if (await verifySignatureInPool(alg, signingInput, candidate.key, signature)) return true;
  }
  return false;
}

/** True when one of `keys` (allowed for `alg`) verifies `signature` over `signingInput`. */
function verifiedBy(keys: readonly VerificationKey[], alg: SupportedAlgorithm, signingInput: Buffer, signature: Buffer): boolean {
  for (const candidate of keys) {
    if (candidate.alg !== undefined && candidate.alg !== alg) continue;
    if (verifySignature(alg, signingInput, candidate.key, signature)) return true;
  }
  return false;
}

/** Depth-bounded and frozen first, then checked: the result is remembered and shared. */
function checkedHeader(decoded: Record<string, unknown>, policy: VerifyPolicy): IamTokenHeader {
  freezeTree(decoded, 'header');
  return checkHeader(decoded, policy);
}
