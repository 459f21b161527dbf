/**
 * `createAuthorizer`: the entry point that wires options, the key set, the verifier and the
 * verified-token cache together. Each piece lives in its own module; this file only orchestrates.
 */
import { RemoteKeySet } from './jwks/remote-key-set.js';
import { StaticKeySet, type KeySet } from './jwks/key-set.js';
import { resolveOptions, type AuthorizerOptions, type ResolvedOptions } from './options.js';
import { extractBearer } from './token/extract.js';
import { TokenCache } from './token/token-cache.js';
import { verifyToken, type VerifyPolicy } from './token/verify-token.js';
import type { Identity } from './types.js';

export interface Authorizer {
  /**
   * Verifies the `Authorization` header value (`Bearer <token>`) and resolves with the caller's
   * identity. Rejects with an `IamAuthzError`: 401 for a missing, invalid or expired token, 503 when
   * the signing keys cannot be had.
   */
  authenticate(authorization: string | undefined): Promise<Identity>;
  /** Fetches the JWKS now instead of on the first request. Rejects with 503 when it cannot. */
  ready(): Promise<void>;
  /** Releases sockets and timers owned by the authorizer. */
  close(): Promise<void>;
}

/** Creates an {@link Authorizer}. Throws a `TypeError` naming the option when an option is invalid. */
export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  const config = resolveOptions(options);
  const keySet = createKeySet(config);
  const cache = config.tokenCache === false ? undefined : new TokenCache(config.tokenCache.max, config.tokenCache.maxTtlMs);
  if (cache) keySet.onKeysRemoved = () => { cache.clear(); };
  const policy: VerifyPolicy = {
    algorithms: config.algorithms,
    tokenFormats: config.tokenFormats,
    issuer: config.issuer,
    audience: config.audience,
    clockToleranceSec: config.clockToleranceSec,
  };
  const { now, maxTokenBytes } = config;

  async function authenticate(authorization: string | undefined): Promise<Identity> {
    const token = extractBearer(authorization, maxTokenBytes);
    if (cache) {
      const hit = cache.get(token, now());
      if (hit) return hit;
    }
    const identity = await verifyToken(token, keySet, policy, now);
    cache?.set(identity, now());
    return identity;
  }

  return {
    authenticate,
    ready: () => keySet.ready(),
    async close() {
      cache?.clear();
      if (config.ownsDispatcher) await config.dispatcher.close();
    },
  };
}

function createKeySet(config: ResolvedOptions): KeySet {
  if (config.staticJwks) return new StaticKeySet(config.staticJwks, config.algorithms);
  return new RemoteKeySet({
    uri: config.jwksUri as string,
    dispatcher: config.dispatcher,
    algorithms: config.algorithms,
    now: config.now,
    ...config.jwks,
  });
}
