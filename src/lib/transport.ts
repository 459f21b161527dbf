/**
 * What carries an upstream request: undici on Node.js (and Bun, Deno), the platform `fetch` on
 * Cloudflare Workers, where undici has no sockets. A transport only sends and hands back the raw
 * answer; every rule (timeout, size cap, no redirects, status and content-type checks) is applied
 * once, in `upstream.ts`, whichever transport carried the request.
 *
 * Chosen once per process by runtime detection rather than a `workerd` export condition: the
 * choice is one line, the published files stay the same for every runtime (no second build to keep
 * in step), and a bundler that ignores conditions still gets the right transport.
 */
import type { Dispatcher } from 'undici';

/** The request as a transport sends it. */
export interface SendOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** undici only; the `fetch` transport has no use for it. */
  dispatcher: Dispatcher;
}

/** An answer whose body has not been read yet. */
export interface RawAnswer {
  statusCode: number;
  /** Lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  /** The body as it arrives, chunk by chunk (a chunked body too). */
  body: AsyncIterable<Uint8Array>;
  /** Drops a body that will not be read (or not to its end); never throws. */
  discard(): void;
}

export interface Transport {
  readonly name: 'undici' | 'fetch';
  /** Loads the client (once per process); not counted in a request's timeout. */
  load?(): Promise<void>;
  /** Sends the request; `signal` (made for this one call) aborts it. Rejects with the client's own error. */
  send(url: string, options: SendOptions, signal: AbortSignal): Promise<RawAnswer>;
}

/**
 * True in Cloudflare's workerd (Workers, wrangler dev, miniflare). Its `nodejs_compat` sets
 * `process.versions.node`, so that cannot tell it from Node.js; its user agent can.
 */
export function onWorkerd(): boolean {
  return (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/** The platform `fetch` where undici cannot run: workerd, or a runtime without Node.js APIs. */
export function prefersFetch(): boolean {
  const versions = (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions;
  return onWorkerd() || typeof versions?.node !== 'string';
}

/**
 * False in workerd: once a request has answered, workerd cancels whatever it left running (a
 * refresh in the background would never finish, and whoever waited for it would wait forever).
 * There, the request that finds cached keys or a policy stale refreshes them itself and waits
 * (bounded by the timeout), serving the stale copy if that fails.
 */
export function backgroundWorkAllowed(): boolean {
  return !onWorkerd();
}

/** Slack on top of a fetch's own timeout before a shared fetch is given up as abandoned. */
const ABANDONED_SLACK_MS = 1_000;

/**
 * True when a shared fetch started at `startedAt` must have ended by `now` unless the request that
 * started it was cancelled (workerd then drops it without settling it): start another one.
 */
export function abandoned(startedAt: number | undefined, now: number, timeoutMs: number): boolean {
  return !backgroundWorkAllowed() && startedAt !== undefined && now - startedAt > timeoutMs + ABANDONED_SLACK_MS;
}

/**
 * Waits for `shared`, a fetch another request may have started. In workerd, at most its timeout
 * (plus slack): a request that was cancelled leaves its fetch unsettled, and this one then goes
 * on with `fallback` (its caller answers from what it holds, or 503) instead of hanging.
 */
export function joinShared<T>(shared: Promise<T>, timeoutMs: number, fallback: T): Promise<T> {
  if (backgroundWorkAllowed()) return shared;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const givenUp = new Promise<T>((resolve) => { timer = setTimeout(() => { resolve(fallback); }, timeoutMs + ABANDONED_SLACK_MS); });
  return Promise.race([shared, givenUp]).finally(() => { clearTimeout(timer); });
}
