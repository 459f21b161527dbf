/**
 * The optional logger of `createAuthorizer`: the user's (pino, winston, `console`, anything with
 * `debug/info/warn/error`), or a console logger turned on by `IAM_AUTHZ_DEBUG=1` / `DEBUG=iam-authz`.
 * Wrapped so that a logger that throws never breaks a request, and so that `warn` lines about one
 * failure (one kind, URL and status) come a few times a minute, not once per request.
 *
 * Calling convention: `logger.level(fields, message)`. It is pino's own (`(obj, msg)`: structured
 * fields plus the message); `console` prints both; winston takes the fields object as its message,
 * and the object's `toString()` is the message, so winston's text formats print the sentence and
 * its JSON format the fields. Every message is whole on its own (code, reason, service, permission,
 * reference, roles), so no logger loses what matters whichever argument it reads.
 */
import { escapeForLog } from './log-text.js';
import { settledValue } from './settled.js';
import { warnOnce } from './warn-once.js';

/**
 * A logger: any object with these four methods (pino, winston and `console` fit as they are).
 * @inline
 */
export interface Logger {
  /** Called as `debug(fields, message)`; see the `logger` option. */
  debug(fields: LogFields, message: string): unknown;
  /** Called as `info(fields, message)`; the library logs nothing at this level today. */
  info(fields: LogFields, message: string): unknown;
  /** Called as `warn(fields, message)`: failed fetches, outages and misconfigurations, rate-limited. */
  warn(fields: LogFields, message: string): unknown;
  /** Called as `error(fields, message)`; the library logs nothing at this level today. */
  error(fields: LogFields, message: string): unknown;
}

/**
 * The structured part of a line: `event` names what happened; never a token or an upstream body.
 * @inline
 */
export interface LogFields {
  /** What happened, e.g. `iam-authz.refused`, `iam-authz.upstream-failed`. */
  readonly event: string;
  readonly [field: string]: unknown;
}

/** How often a `warn` line of one key may be written per window. */
export const WARN_LINES_PER_WINDOW = 3;
/** The rate-limit window of `warn` lines, in ms. */
export const WARN_WINDOW_MS = 60_000;
/** Keys remembered at once; beyond it the memory starts over (a flood of distinct keys is itself rate-limited by it). */
const MAX_KEYS = 1_000;

/** The library's side of a logger: never throws, and rate-limits `warn`. */
export interface Log {
  debug(fields: LogFields, message: string): void;
  /** Writes at most {@link WARN_LINES_PER_WINDOW} lines per `key` per {@link WARN_WINDOW_MS}; the next line after a quiet spell counts the ones left out. */
  warn(key: string, fields: LogFields, message: string): void;
}

/** Whether the environment asks for the console logger: `IAM_AUTHZ_DEBUG=1`/`true`, or `DEBUG` naming `iam-authz` (globs and `-exclusions` as the `debug` package reads them). */
export function debugRequested(env: Readonly<Record<string, string | undefined>> | undefined): boolean {
  if (!env) return false;
  const flag = env['IAM_AUTHZ_DEBUG']?.trim().toLowerCase();
  if (flag !== undefined && flag !== '' && flag !== '0' && flag !== 'false' && flag !== 'no' && flag !== 'off') return true;
  const patterns = (env['DEBUG'] ?? '').split(/[\s,]+/).filter((p) => p.length > 0);
  const matches = (pattern: string): boolean => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test('iam-authz');
  if (patterns.some((p) => p.startsWith('-') && matches(p.slice(1)))) return false;
  return patterns.some((p) => !p.startsWith('-') && matches(p));
}

/**
 * The `IAM_AUTHZ_DEBUG` logger: one line per call on stderr, `iam-authz <level>: <message>`; a line
 * break or control character in the message is written as a `\uXXXX` escape, so every line is one.
 */
export const consoleLogger: Logger = {
  debug: (_fields, message) => { console.error(`iam-authz debug: ${escapeForLog(message)}`); },
  info: (_fields, message) => { console.error(`iam-authz info: ${escapeForLog(message)}`); },
  warn: (_fields, message) => { console.error(`iam-authz warn: ${escapeForLog(message)}`); },
  error: (_fields, message) => { console.error(`iam-authz error: ${escapeForLog(message)}`); },
};

/** Whether `value` has the four methods of a {@link Logger}. */
export function isLogger(value: unknown): value is Logger {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['debug'] === 'function' && typeof v['info'] === 'function' && typeof v['warn'] === 'function' && typeof v['error'] === 'function';
}

/**
 * Wraps `logger` for the library: errors of the logger are swallowed (one process warning says so),
 * `warn` is rate-limited on `now`. The message handed on never holds a raw line break or control
 * character (values are escaped where messages are built; this is the last line of defence); the
 * fields are handed on as they are.
 */
export function createLog(logger: Logger, now: () => number): Log {
  const windows = new Map<string, { start: number; written: number; dropped: number }>();
  const call = (level: 'debug' | 'warn', fields: LogFields, text: string): void => {
    const message = escapeForLog(text);
    // The fields' toString is the message: winston, which reads the first argument as its message, prints the sentence.
    const line = Object.defineProperty({ ...fields }, 'toString', { value: () => message, enumerable: false });
    try {
      const result: unknown = logger[level](line, message);
      // An async logger's rejection is its own matter, and must not become an unhandled rejection.
      if (typeof (result as Promise<unknown> | undefined)?.then === 'function') (result as Promise<unknown>).then(undefined, loggerThrew);
    } catch {
      loggerThrew();
    }
  };
  return {
    debug(fields, message) {
      call('debug', fields, message);
    },
    warn(key, fields, message) {
      const at = now();
      let w = windows.get(key);
      if (!w || at - w.start >= WARN_WINDOW_MS || at < w.start) {
        const dropped = w?.dropped ?? 0;
        if (!w && windows.size >= MAX_KEYS) windows.clear();
        w = { start: at, written: 0, dropped: 0 };
        windows.set(key, w);
        if (dropped > 0) {
          w.written += 1;
          call('warn', { ...fields, suppressed: dropped }, `${message} (${dropped} more like it in the last minute were not logged)`);
          return;
        }
      }
      if (w.written >= WARN_LINES_PER_WINDOW) {
        w.dropped += 1;
        return;
      }
      w.written += 1;
      call('warn', fields, message);
    },
  };
}

/** What an `IamAuthzError` is to the log (read by shape: this layer does not import the errors). */
interface Refusal { readonly code: string; readonly status: number; readonly message: string; readonly misconfigured?: unknown }

function isRefusal(error: unknown): error is Refusal {
  const e = error as Partial<Refusal> | null;
  return error instanceof Error && typeof e?.code === 'string' && e.code.startsWith('ERR_') && typeof e.status === 'number';
}

/**
 * `fn`, logging the `IamAuthzError` it rejects with; denials are logged by the decider, with their
 * roles. A promise known to be fulfilled already (a cached token, a remembered grant, a token
 * verified on the spot: see `settledValue`) has nothing to log and is handed on as it is, so that
 * a guard still reads it without waiting a tick; anything else is followed for its rejection. What
 * `fn` throws synchronously becomes a rejection, as from an async function.
 */
export function logged<A extends unknown[], R>(log: Log, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  const logRefused = (error: unknown): void => {
    if (isRefusal(error)) logRefusal(log, error);
  };
  return (...args: A): Promise<R> => {
    let result: Promise<R>;
    try {
      result = fn(...args);
    } catch (error) {
      logRefused(error);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rethrown as it came, like the async function it replaces
      return Promise.reject(error);
    }
    if (settledValue(result) !== undefined) return result;
    return result.then(undefined, (error: unknown) => {
      logRefused(error);
      throw error;
    });
  };
}

/**
 * A 503 (the keys or the policy cannot be had) is the operator's matter: `warn`, a few lines a
 * minute per message (the message names the URL and status). Anything else is one caller's
 * refusal: `debug`. Messages never hold a token.
 */
function logRefusal(log: Log, error: Refusal): void {
  const misconfigured = error.misconfigured === true;
  if (error.status === 503 && error.code !== 'ERR_AUTHORIZER_CLOSED') {
    const what = misconfigured ? 'misconfigured' : 'unavailable';
    log.warn(`${error.code} ${error.message}`, { event: 'iam-authz.unavailable', code: error.code, status: error.status, misconfigured, reason: error.message }, `${error.code} (${what}): ${error.message}`);
    return;
  }
  log.debug({ event: 'iam-authz.refused', code: error.code, status: error.status, reason: error.message }, `${error.code}: ${error.message}`);
}

function loggerThrew(): void {
  warnOnce('IAM_AUTHZ_LOGGER_THREW', 'iam-authz: the "logger" threw or rejected; its lines are dropped and requests are answered as if it did not exist');
}

/** A list for a log message: `[A, B]`, at most `max` items (`…` and the count beyond), each cut at 100 characters and escaped. */
export function listForLog(items: readonly string[], max = 20): string {
  const shown = items.slice(0, max).map((i) => escapeForLog(i.length > 100 ? `${i.slice(0, 100)}…` : i));
  return `[${shown.join(', ')}${items.length > max ? `, … ${items.length - max} more` : ''}]`;
}

/**
 * A JWKS or policy fetch that failed, for the operator: at `warn`, a few lines a minute per URL and
 * kind of failure, also while the cached copy is still served (the 503s come only later). The
 * message names the URL and the failure (a status, a timeout, a malformed body), never a body.
 */
export function logUpstreamFailure(log: Log | undefined, what: string, url: string, failure: { readonly reason: string; readonly misconfigured: boolean; readonly message: string; readonly statusCode?: number | undefined }): void {
  if (!log) return;
  const kind = failure.misconfigured ? 'misconfigured' : 'unavailable';
  log.warn(`${what} ${url} ${failure.reason} ${String(failure.statusCode)}`, { event: 'iam-authz.upstream-failed', what, url, reason: failure.reason, status: failure.statusCode, misconfigured: failure.misconfigured }, `${what} ${url} failed (${kind}): ${failure.message}`);
}
