/**
 * `createAuthorizer` options: the public type, made of the shared options and those of each
 * component, and their resolution — the shared ones once, then each component's by the component's
 * own resolver. Every option is checked once, at construction, with a `TypeError` that names it.
 */
import type { Dispatcher } from 'undici';
import { AUTHENTICATOR_OPTIONS, resolveAuthenticatorOptions, type AuthenticatorConfig, type AuthenticatorOptions, type JwkSet } from './authenticator/options.js';
import { DECIDER_OPTIONS, resolveDeciderOptions, type DeciderConfig, type DeciderOptions } from './decider/options.js';
import type { JwksOptions } from './jwks/options.js';
import { authorizerChecks as checks } from './lib/option-checks.js';
import { lazyProxyAgent } from './lib/undici.js';
import type { PolicyOptions } from './policy/options.js';
import { resolveRevocationOptions, type RevocationOptions } from './revocation/options.js';
import { resolveSharedOptions, SHARED_OPTIONS, type SharedOptions, type SharedRuntime } from './shared-options.js';
import type { TokenCacheOptions } from './token/cache-options.js';

export type { JwksOptions, JwkSet, PolicyOptions, TokenCacheOptions };

/** Options of {@link createAuthorizer}; validated once, with a `TypeError` naming the option. */
export interface AuthorizerOptions extends SharedOptions, AuthenticatorOptions, DeciderOptions {
  /** How revocations (`authorizer.revoke`) are kept. */
  revocation?: RevocationOptions;
}

export interface ResolvedOptions {
  readonly shared: SharedRuntime;
  /** Whether the dispatcher was made here, and so is closed by `close()`. */
  readonly ownsDispatcher: boolean;
  readonly authenticator: AuthenticatorConfig;
  readonly decider: DeciderConfig;
  readonly revocation: Required<RevocationOptions>;
}

const KNOWN = [...SHARED_OPTIONS, ...AUTHENTICATOR_OPTIONS, ...DECIDER_OPTIONS, 'revocation'];

export function resolveOptions(options: AuthorizerOptions): ResolvedOptions {
  if (typeof options !== 'object' || (options as unknown) === null) checks.fail('options must be an object');
  checks.onlyKnown(undefined, options, KNOWN);
  const shared = resolveSharedOptions(options);
  const authenticator = resolveAuthenticatorOptions(options, shared);
  const decider = resolveDeciderOptions(options, shared);
  const revocation = resolveRevocationOptions(options.revocation, checks);
  // Made last: nothing after this can throw, so an agent is never left behind unclosed.
  // Its keep-alive covers the refresh cadence of the caches it serves.
  const ttlMs = Math.max(authenticator.jwksUris ? authenticator.jwks.ttlMs : 0, decider.policyUrls.size > 0 ? decider.policy.ttlMs : 0);
  const dispatcher: Dispatcher = options.dispatcher ?? lazyProxyAgent(ttlMs);
  return { shared: { ...shared, dispatcher }, ownsDispatcher: options.dispatcher === undefined, authenticator, decider, revocation };
}
