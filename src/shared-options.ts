/**
 * The options both components of `createAuthorizer` read — where the IAM is (`baseUrl`, `issuer`),
 * how to reach it (`dispatcher`) and what time it is (`now`) — resolved once and passed down to the
 * authenticator and the decider, which validate the rest of the options themselves.
 */
import type { Dispatcher } from 'undici';
import { isArray } from './lib/is-array.js';
import { consoleLogger, createLog, debugRequested, isLogger, type Log, type Logger } from './lib/logger.js';
import { authorizerChecks as checks } from './lib/option-checks.js';

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
  /**
   * Where the library logs: any object with `debug`, `info`, `warn` and `error` methods (pino,
   * winston, `console`), called as `logger.debug(fields, message)` — pino's order; the message alone
   * is complete, and `String(fields)` is the message. At `debug`: every refusal, its code and reason
   * (for a denial the service, permission, reference, the token's roles on it and the roles that
   * would have granted). At `warn`, a few lines per minute per failure: every 503 and `ready()`
   * failure (a JWKS or policy endpoint answering 404, an outage), naming the URL and status. Never a
   * token or an upstream body. Values from the request or the token are cut and their line breaks
   * and control characters written as `\uXXXX` in the message, so no caller can forge a line; the
   * fields keep them as they are. A logger that throws is ignored (one process warning). Default: none,
   * or a console logger on stderr when the environment has `IAM_AUTHZ_DEBUG=1` or `DEBUG=iam-authz`.
   */
  logger?: Logger;
}

/** The names of {@link SharedOptions}. */
export const SHARED_OPTIONS: readonly (keyof SharedOptions)[] = ['baseUrl', 'issuer', 'dispatcher', 'now', 'logger'];

/** {@link SharedOptions}, checked and with their defaults (the dispatcher is made by the caller, last). */
export interface SharedConfig {
  /** `baseUrl` without trailing slashes. */
  readonly baseUrl: string | undefined;
  /** The accepted issuers, in the order given, without duplicates. */
  readonly issuers: readonly string[];
  readonly now: () => number;
  /** The `logger` option (or the environment's console logger), wrapped; `undefined`: nothing is logged and nothing is computed for logs. */
  readonly log: Log | undefined;
}

/** What each component is constructed with besides its own options. */
export interface SharedRuntime extends SharedConfig {
  readonly dispatcher: Dispatcher;
}

export function resolveSharedOptions(options: SharedOptions): SharedConfig {
  if (typeof options.baseUrl === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(options.baseUrl)) {
    // The first-hour mistake: a host name alone. Its own value, with the scheme, is the fix.
    const host = /^[\w.-]{1,100}(:\d{1,5})?(\/[\w./-]{0,100})?$/.test(options.baseUrl) ? options.baseUrl : 'iam.example.com';
    checks.fail(`"baseUrl" must be an http(s) URL: add the scheme, e.g. https://${host}`);
  }
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
  if (options.logger !== undefined && !isLogger(options.logger)) checks.fail('"logger" must be an object with debug, info, warn and error methods (pino, winston, console)');
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const logger = options.logger ?? (debugRequested(env) ? consoleLogger : undefined);
  const log = logger === undefined ? undefined : createLog(logger, now);
  return { baseUrl, issuers: [...new Set(issuers as string[])], now, log };
}
