/**
 * The authenticator: an `Authorization` header in, a verified {@link Identity} out. It owns the key
 * sets (one local set, or a remote set per issuer), the verifier and the verified-token cache.
 */
import type { AuthenticatorConfig } from './options.js';
import { authenticateFailed, authenticateTrace, tokenCacheHit } from '../diagnostics.js';
import { AuthorizerClosedError, IamAuthzError, TokenInvalidError, TokenRevokedError } from '../errors.js';
import { StaticKeySet, type KeySet } from '../jwks/key-set.js';
import { RemoteKeySet, type KeySetStatus } from '../jwks/remote-key-set.js';
import type { SharedRuntime } from '../shared-options.js';
import { quotedForLog } from '../lib/log-text.js';
import { settled } from '../lib/settled.js';
import { extractBearer } from '../token/extract.js';
import { TokenCache, type CacheEntry } from '../token/token-cache.js';
import { TokenVerifier } from '../token/verify-token.js';
import type { IamClaims, Identity } from '../types.js';

export interface Authenticator {
  /** Verifies `Bearer <token>`: the identity, or a 401 (bad token) / 503 (no keys) `IamAuthzError`. */
  readonly authenticate: (authorization: string | undefined) => Promise<Identity>;
  /** The accepted applications (the `applications` option), or `undefined` for any. */
  readonly applications: ReadonlySet<string> | undefined;
  /** Fetches the signing keys of `issuer` now (an accepted issuer). */
  readonly ready: (issuer: string) => Promise<void>;
  /** Where each issuer's keys stand: plain JSON, key ids only. */
  readonly status: () => Record<string, KeySetStatus>;
  /** Refuses every later call, and releases key sets and cache. */
  readonly close: () => void;
}

/**
 * `isRevoked` says whether verified claims were revoked (`authorizer.revoke`): asked on every path,
 * the cached one included, before an identity is handed out.
 */
export function createAuthenticator(config: AuthenticatorConfig, shared: SharedRuntime, isRevoked: (claims: IamClaims) => boolean = NEVER): Authenticator {
  const { now } = shared;
  const { maxTokenBytes, applications } = config;
  const cache = config.tokenCache === false ? undefined : new TokenCache(config.tokenCache.max, config.tokenCache.maxTtlMs);
  // A kid gone from the JWKS, or naming another key now: nothing verified with the old key is reused.
  const keySets = createKeySets(config, shared, () => {
    cache?.clear();
    verifier.clear();
  });
  const allKeySets = [...new Set(keySets.values())];
  const primaryKeySet = keySets.get(shared.issuers[0] as string) as KeySet;
  const verifier = new TokenVerifier((issuer) => (typeof issuer === 'string' ? keySets.get(issuer) : undefined) ?? primaryKeySet, {
    algorithms: config.algorithms,
    tokenFormats: config.tokenFormats,
    issuers: shared.issuers,
    audience: config.audience,
    clockToleranceSec: config.clockToleranceSec,
    poolVerifications: config.poolVerifications,
  }, now);
  let closed = false;

  /** Traced only while someone listens (`iam-authz/otel`): otherwise one property check. */
  function authenticate(authorization: string | undefined): Promise<Identity> {
    if (!authenticateTrace.hasSubscribers) return cachedByHeader(authorization) ?? verifyBearer(authorization);
    return tracedAuthenticate(authorization);
  }

  /**
   * The cached path, allocation-free: the very `Authorization` value seen before, whose token is
   * still cached and whose key set needs no refresh in this request, gets the entry's settled
   * promise of its identity. Everything else (a first sight, a header spelled differently,
   * a refresh to wait for, a closed authenticator) goes through {@link verifyBearer}.
   */
  function cachedByHeader(authorization: string | undefined): Promise<Identity> | undefined {
    if (cache === undefined || closed || typeof authorization !== 'string') return undefined;
    const entry = cache.byHeader(authorization, now());
    if (entry === undefined || keySets.get(entry.identity.claims.iss)?.touch?.() !== undefined) return undefined;
    if (isRevoked(entry.identity.claims)) return refusedAuthentication(new TokenRevokedError());
    if (tokenCacheHit.hasSubscribers) tokenCacheHit.publish(HIT);
    return (entry.promise ??= settled(entry.identity));
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

  /**
   * A token not in the cache (or no cache), verified on the spot when its keys are at hand: the
   * identity comes back as a settled promise (see `settled`), which a guard reads without a tick.
   * A cached token under another header spelling takes {@link fromCache}; keys to fetch,
   * {@link verifiedLater}.
   */
  function verifyBearer(authorization: string | undefined): Promise<Identity> {
    let identity: Identity;
    try {
      if (closed) throw new AuthorizerClosedError();
      const token = extractBearer(authorization, maxTokenBytes);
      const entry = cache?.entry(token, now());
      if (entry) return fromCache(entry, token, authorization);
      const generation = cache?.generation ?? 0;
      const verified = verifier.verify(token);
      if (verified instanceof Promise) return verifiedLater(verified, authorization, generation);
      identity = accepted(verified, authorization, generation);
    } catch (error) {
      return refusedAuthentication(error);
    }
    return settled(identity);
  }

  /** A verified identity, of an accepted application, cached: checked before caching, so a cache hit is always of an accepted application. */
  function accepted(identity: Identity, authorization: string | undefined, generation: number): Identity {
    if (applications && !applications.has(identity.claims.app)) throw foreignApplication(identity.claims.app, applications);
    if (isRevoked(identity.claims)) throw new TokenRevokedError();
    const entry = cache?.set(identity, now(), generation);
    if (entry) cache?.remember(authorization as string, entry);
    return identity;
  }

  /** {@link verifyBearer} once the keys were fetched. */
  async function verifiedLater(verifying: Promise<Identity>, authorization: string | undefined, generation: number): Promise<Identity> {
    try {
      return accepted(await verifying, authorization, generation);
    } catch (error) {
      return refusedAuthentication(error);
    }
  }

  function refusedAuthentication(error: unknown): Promise<never> {
    if (authenticateFailed.hasSubscribers && error instanceof IamAuthzError) {
      authenticateFailed.publish({ code: error.code, status: error.status, message: error.message });
    }
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as it came
    return Promise.reject(error);
  }

  /** A token the cache holds, presented under a header spelling the front table has not seen. */
  async function fromCache(entry: CacheEntry, token: string, authorization: string | undefined): Promise<Identity> {
    try {
      const hit = entry.identity;
      if (isRevoked(hit.claims)) throw new TokenRevokedError();
      // A promise only where refreshes cannot run in the background (workerd): this request
      // refreshes the keys, and the hit stands only if the token's key survived the refresh.
      const refreshing = keySets.get(hit.claims.iss)?.touch?.();
      if (!refreshing || (await refreshing, cache?.get(token, now()) === hit)) {
        if (tokenCacheHit.hasSubscribers) tokenCacheHit.publish(HIT);
        // The same header next time: found by cachedByHeader, without extracting the token.
        cache?.remember(authorization as string, entry);
        return hit;
      }
      const generation = cache?.generation ?? 0;
      const verified = verifier.verify(token);
      return accepted(verified instanceof Promise ? await verified : verified, authorization, generation);
    } catch (error) {
      return refusedAuthentication(error);
    }
  }

  return {
    authenticate,
    applications,
    async ready(issuer) {
      await (keySets.get(issuer) as KeySet).ready();
    },
    status() {
      const out: Record<string, KeySetStatus> = {};
      for (const [issuer, keySet] of keySets) out[issuer] = keySet instanceof RemoteKeySet ? keySet.status() : { ...LOCAL_STATUS, keyIds: [] };
      return out;
    },
    close() {
      closed = true;
      for (const k of allKeySets) k.close?.();
      cache?.clear();
    },
  };
}

/** issuer → its key set: one local set shared by every issuer, or a remote set per issuer. */
function createKeySets(config: AuthenticatorConfig, shared: SharedRuntime, onKeysRemoved: () => void): Map<string, KeySet> {
  const { localJwks, jwksUris } = config;
  if (localJwks || !jwksUris) {
    const local = new StaticKeySet(localJwks ?? { keys: [] }, config.algorithms);
    return new Map(shared.issuers.map((issuer) => [issuer, local]));
  }
  return new Map([...jwksUris].map(([issuer, uri]) => [issuer, new RemoteKeySet({
    uri,
    dispatcher: shared.dispatcher,
    algorithms: config.algorithms,
    now: shared.now,
    onKeysRemoved,
    ...config.jwks,
    log: shared.log,
  })]));
}

function foreignApplication(app: string, accepted: ReadonlySet<string>): TokenInvalidError {
  return new TokenInvalidError(`token application ${quotedForLog(app)} is not accepted (applications: ${[...accepted].map(quotedForLog).join(', ')})`, { detail: 'token application is not accepted' });
}

/** A local JWK Set never ages nor fails: always fresh (its key ids are not loaded until first use, so none are listed). */
const LOCAL_STATUS: Readonly<KeySetStatus> = Object.freeze({ state: 'fresh', ageMs: null, nextRefreshAt: null, consecutiveFailures: 0, backoffMs: 0, keyIds: [] });

const NEVER = (): boolean => false;

/** The message of every token-cache-hit event: nothing to say but that it happened. */
const HIT = Object.freeze({});
