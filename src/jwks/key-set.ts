/** Where the verifier gets keys from: a static JWK Set or the remote JWKS endpoint. */
import { TokenInvalidError } from '../errors.js';
import { importJwks, type KeyIndex, type VerificationKey } from './import-jwks.js';

export interface KeySet {
  /**
   * Keys for `kid` when they can be had without waiting (warm cache); `undefined` means "call
   * {@link KeySet.resolve}". Never throws.
   */
  peek(kid: string): readonly VerificationKey[] | undefined;
  /** Keys for `kid`, fetching if needed. Throws `ERR_TOKEN_INVALID` or `ERR_JWKS_UNAVAILABLE`. */
  resolve(kid: string): Promise<readonly VerificationKey[]>;
  /** Loads the keys ahead of the first request. */
  ready(): Promise<void>;
  /**
   * Called on verified-token cache hits, which never look a key up: starts a background refresh
   * when the keys are older than the cache max-age, so that a kid removed from the JWKS is noticed
   * (and the token cache cleared) even when every request is a cache hit. Where no background work
   * is allowed (workerd), refreshes in the caller's request instead and returns the promise to wait for.
   */
  touch?(): Promise<void> | undefined;
  /**
   * After a signature failed with `tried` (the keys held for `kid`): refetches the JWKS — bounded by
   * the cooldown and shared, as for an unknown kid — and resolves with the keys now held for `kid`
   * when they differ from `tried` (a key replaced under the same kid), else `undefined`.
   */
  refetchAfterFailure?(kid: string, tried: readonly VerificationKey[]): Promise<readonly VerificationKey[] | undefined>;
  /** Stops any network activity. */
  close?(): void;
}

/**
 * A JWK Set given in the options: imported once, on first use, never fetched. Not at construction:
 * a Worker may build its authorizer at global scope, where workerd allows no asynchronous work.
 */
export class StaticKeySet implements KeySet {
  readonly #jwks: { keys: unknown[] };
  readonly #algorithms: ReadonlySet<string>;
  #loading: Promise<KeyIndex> | undefined;
  #index: KeyIndex | undefined;

  constructor(jwks: { keys: unknown[] }, algorithms: ReadonlySet<string>) {
    this.#jwks = { keys: [...jwks.keys] };
    this.#algorithms = algorithms;
  }

  peek(kid: string): readonly VerificationKey[] | undefined {
    return this.#index?.get(kid);
  }

  async resolve(kid: string): Promise<readonly VerificationKey[]> {
    const keys = (await this.#load()).get(kid);
    if (!keys) throw new TokenInvalidError('no key in the JWKS matches the token kid');
    return keys;
  }

  async ready(): Promise<void> {
    await this.#load();
  }

  #load(): Promise<KeyIndex> {
    return (this.#loading ??= importJwks(this.#jwks, this.#algorithms).then((index) => (this.#index = index)));
  }
}
