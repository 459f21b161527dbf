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
