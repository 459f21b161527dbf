/**
 * The options both components of `createAuthorizer` read — where the IAM is (`baseUrl`, `issuer`),
 * how to reach it (`dispatcher`) and what time it is (`now`) — resolved once and passed down to the
 * authenticator and the decider, which validate the rest of the options themselves.
 */
import type { Dispatcher } from 'undici';
import { isArray } from './lib/is-array.js';
import { optionChecks, type OptionChecks } from './lib/option-checks.js';

/** The checks of every component of the authorizer: their `TypeError`s start `createAuthorizer:`, the name users call. */
export const checks: OptionChecks = optionChecks('createAuthorizer');

/** The options of {@link AuthorizerOptions} that both the authenticator and the decider read. */
export interface SharedOptions {
  /** The IAM's base URL, e.g. `https://iam.example.com`. Needed unless both `issuer` and `jwksUri`/`localJwks` are given. */
  baseUrl?: string;
  /**
   * Expected `iss`, compared exactly; a list accepts several (IAM migrations, regional deployments).
   * Default `${baseUrl}/authentication/v1`.
   */
  issuer?: string | readonly string[];
  /**
   * undici Dispatcher for every outgoing request. Default: an `EnvHttpProxyAgent` (honours
   * `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`), closed by `close()`. Ignored on Cloudflare Workers,
   * where requests go through the platform `fetch`.
   */
  dispatcher?: Dispatcher;
  /** Clock in ms since the epoch; for tests. Default `Date.now`. */
  now?: () => number;
}

/** The names of {@link SharedOptions}. */
export const SHARED_OPTIONS: readonly (keyof SharedOptions)[] = ['baseUrl', 'issuer', 'dispatcher', 'now'];

/** {@link SharedOptions}, checked and with their defaults (the dispatcher is made by the caller, last). */
export interface SharedConfig {
  /** `baseUrl` without trailing slashes. */
  readonly baseUrl: string | undefined;
  /** The accepted issuers, in the order given, without duplicates. */
  readonly issuers: readonly string[];
  readonly now: () => number;
}

/** What each component is constructed with besides its own options. */
export interface SharedRuntime extends SharedConfig {
  readonly dispatcher: Dispatcher;
}

export function resolveSharedOptions(options: SharedOptions): SharedConfig {
  const baseUrl = options.baseUrl === undefined ? undefined : checks.httpUrl('baseUrl', options.baseUrl, 'base').replace(/\/+$/, '');
  const issuerOption: unknown = options.issuer ?? (baseUrl === undefined ? undefined : `${baseUrl}/authentication/v1`);
  if (issuerOption === undefined) checks.fail('"baseUrl" or "issuer" is required');
  const issuers = typeof issuerOption === 'string' ? [issuerOption] : issuerOption;
  if (!isArray(issuers) || (issuers as unknown[]).length === 0 || !(issuers as unknown[]).every((i) => typeof i === 'string' && i.length > 0)) {
    checks.fail('"issuer" must be a non-empty string or a non-empty array of them');
  }
  if (options.dispatcher !== undefined && typeof (options.dispatcher as { dispatch?: unknown } | null)?.dispatch !== 'function') {
    checks.fail('"dispatcher" must be an undici Dispatcher');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') checks.fail('"now" must be a function');
  return { baseUrl, issuers: [...new Set(issuers as string[])], now };
}

/** A non-empty array of non-empty strings, or `fallback` when `undefined`. */
export function stringList(name: string, value: unknown, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v.length > 0)) {
    checks.fail(`"${name}" must be a non-empty array of non-empty strings`);
  }
  return [...(value as string[])];
}
