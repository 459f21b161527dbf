/**
 * The one HTTP client used for every outgoing request (JWKS and policy GETs, the token client's
 * POST), and the one place for its rules, whichever transport carries the request (undici, or
 * the platform `fetch` on Cloudflare Workers; see `transport.ts`): a total timeout, a body-size
 * cap and no redirects followed, and the translation of the client's errors.
 */
import type { Dispatcher } from 'undici';
import { decodeUtf8Sliced, parseJsonSliced } from './sliced-json.js';
import type { Closer } from './closer.js';
import { fetchTransport } from './fetch-transport.js';
import { prefersFetch, type RawAnswer, type Transport } from './transport.js';
import { undiciTransport } from './undici.js';

let transport: Transport | undefined;

/** The transport of this process, chosen on the first request. */
function chosenTransport(): Transport {
  return (transport ??= prefersFetch() ? fetchTransport : undiciTransport);
}

/** Tests only: run the upstream rules over the given transport (`undefined`: choose again). */
export function useTransportForTesting(name: 'undici' | 'fetch' | undefined): void {
  transport = name === undefined ? undefined : name === 'fetch' ? fetchTransport : undiciTransport;
}

/** Why an upstream call failed; stable strings, used in events and error messages. */
export type UpstreamFailureReason = 'timeout' | 'network' | 'status' | 'redirect' | 'oversize' | 'malformed';

/**
 * Statuses that say the URL itself is wrong (no such resource, or not one we may read), whoever
 * asks: a misconfiguration, not an outage. The policy client decides 401/403 itself when they
 * answer a caller's own token.
 */
const MISCONFIGURED_STATUSES: ReadonlySet<number> = new Set([401, 403, 404, 405, 410]);

/**
 * An upstream call failed. Internal: callers wrap it in their own `IamAuthzError`. Its message and
 * cause never hold a byte of the upstream body (an IAM, or whatever answers at a mistyped URL, may
 * echo tokens or anything else): only the URL, status, content-type, size and the failed check.
 */
export class UpstreamError extends Error {
  readonly reason: UpstreamFailureReason;
  readonly statusCode: number | undefined;
  /**
   * True when the answer says the endpoint is misconfigured rather than down: a redirect, 401, 403,
   * 404, 405, 410, or a 2xx whose content-type is not JSON (e.g. an HTML page).
   */
  readonly misconfigured: boolean;
  /**
   * The headers and (capped) body of a 4xx/5xx answer, when {@link RequestOptions.errorBodyMaxBytes}
   * asked for them and the body fitted; otherwise `undefined`.
   */
  readonly response: ErrorResponseBody | undefined;
  /** The `Retry-After` header of a 4xx/5xx answer, as sent (see `parseRetryAfter`). */
  readonly retryAfter: string | undefined;
  constructor(
    reason: UpstreamFailureReason,
    message: string,
    options?: { cause?: unknown; statusCode?: number; response?: ErrorResponseBody; misconfigured?: boolean; retryAfter?: string },
  ) {
    super(message, options);
    this.name = 'UpstreamError';
    this.reason = reason;
    this.statusCode = options?.statusCode;
    this.response = options?.response;
    this.misconfigured = options?.misconfigured ?? false;
    this.retryAfter = options?.retryAfter;
  }
}

/** What is kept of a 4xx/5xx answer for error reporting (e.g. problem details). */
export interface ErrorResponseBody {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface GetOptions {
  /** undici's dispatcher; unused on the `fetch` transport (Cloudflare Workers). */
  dispatcher: Dispatcher;
  /** Total time for connect, headers and body. */
  timeoutMs: number;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  headers: Record<string, string>;
  /**
   * Aborts the request when its owner closes; it then fails as a `network` error. Not an
   * `AbortSignal`: workerd refuses I/O through a signal made while serving another request.
   */
  closer?: Closer;
  /** Statuses answered without a body check (e.g. 304); anything else outside 2xx fails. */
  acceptStatuses?: readonly number[];
  /**
   * A 2xx answer must be JSON: one whose `content-type` names another media type (e.g. an HTML
   * login or error page) fails as a misconfiguration. A missing `content-type` is accepted.
   */
  expectJson?: boolean;
}

export interface GetResult {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET `url`; rejects with an {@link UpstreamError} on any failure. Never follows a redirect. */
export async function httpGet(url: string, options: GetOptions): Promise<GetResult> {
  return httpRequest(url, { ...options, method: 'GET' });
}

/** Options of {@link httpRequest}: those of {@link httpGet}, plus the method and a body. */
export interface RequestOptions extends GetOptions {
  method: 'GET' | 'POST';
  /** Request body, sent as is (set `content-type` in `headers`). */
  body?: string;
  /**
   * For a 4xx/5xx answer, read up to this many bytes of its body into {@link UpstreamError.response}
   * (e.g. to report problem details). A longer body, or one that fails to arrive, is dropped: the
   * failure is still the `status` one. Default `0`: error bodies are discarded unread.
   */
  errorBodyMaxBytes?: number;
}

/**
 * One HTTP request to `url`; resolves with a 2xx answer (or one listed in `acceptStatuses`) and its
 * body, rejects with an {@link UpstreamError} on any failure. Never follows a redirect.
 */
export async function httpRequest(url: string, options: RequestOptions): Promise<GetResult> {
  const client = chosenTransport();
  // Loading the HTTP client (once per process) is not the upstream's time: start the clock after it.
  await client.load?.();
  // Made per call, inside the request that needs it: never shared between requests (workerd refuses that).
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new UpstreamError('timeout', `${options.method} ${url}: no complete answer within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const onOwnerClose = (): void => { controller.abort(new UpstreamError('network', 'aborted: the client was closed')); };
  if (options.closer?.closed) onOwnerClose();
  const stopListening = options.closer?.onClose(onOwnerClose);
  try {
    const answer = await client.send(url, options, controller.signal);
    return await readAnswer(url, answer, options);
  } catch (error) {
    throw translateUpstreamError(error, controller.signal, `${options.method} ${url}`);
  } finally {
    clearTimeout(timer);
    stopListening?.();
  }
}

/** Checks an answer's status, content-type and size, and reads its body. */
async function readAnswer(url: string, res: RawAnswer, options: RequestOptions): Promise<GetResult> {
  const { statusCode } = res;
  const what = `${options.method} ${url}`;
  // 304 is a 3xx but not a redirect: unexpected when no validator was sent, a plain status failure.
  if (statusCode >= 300 && statusCode < 400 && statusCode !== 304 && !options.acceptStatuses?.includes(statusCode)) {
    res.discard();
    throw new UpstreamError('redirect', `${what} answered ${statusCode}; redirects are not followed`, { statusCode, misconfigured: true });
  }
  if ((statusCode < 200 || statusCode >= 300) && !options.acceptStatuses?.includes(statusCode)) {
    const errorBodyMaxBytes = options.errorBodyMaxBytes ?? 0;
    const retryAfter = headerValue(res.headers['retry-after']);
    const body = statusCode >= 400 && errorBodyMaxBytes > 0 ? await readBody(res, errorBodyMaxBytes).catch(() => undefined) : undefined;
    if (body === undefined) res.discard();
    throw new UpstreamError('status', `${what} answered HTTP ${statusCode}`, {
      statusCode,
      misconfigured: MISCONFIGURED_STATUSES.has(statusCode),
      ...(retryAfter === undefined ? {} : { retryAfter }),
      ...(body === undefined ? {} : { response: { headers: res.headers, body } }),
    });
  }
  const contentType = headerValue(res.headers['content-type']);
  if (options.expectJson && statusCode >= 200 && statusCode < 300 && contentType !== undefined && !isJsonMediaType(contentType)) {
    res.discard();
    throw new UpstreamError('malformed', `${what} answered HTTP ${statusCode} with content-type ${printable(contentType)}, not JSON`, { statusCode, misconfigured: true });
  }
  const body = await readBody(res, options.maxBytes);
  if (body === undefined) throw new UpstreamError('oversize', `${what}: body exceeds ${options.maxBytes} bytes`, { statusCode });
  return { statusCode, headers: res.headers, body };
}

/**
 * The body, or `undefined` (and the rest dropped) once it is known to exceed `maxBytes`: at once
 * from `content-length`, else while counting the chunks as they arrive (a chunked body too).
 */
async function readBody(res: RawAnswer, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(headerValue(res.headers['content-length']));
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.discard();
    return undefined;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      res.discard();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `application/json` and any `+json` type (`application/jwk-set+json`, `application/problem+json`). */
function isJsonMediaType(contentType: string): boolean {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type);
}

/**
 * A header value fit for a message: printable ASCII only, at most 60 characters. A content-type is
 * not the body, but it is still upstream text: keep it short and inert.
 */
function printable(value: string): string {
  const text = value.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

/**
 * Parse a JSON body; a parse failure is an upstream `malformed` failure. V8's `SyntaxError` quotes
 * the text around the fault, so it is never kept as the cause: only the size and, when V8 gives it,
 * the position of the fault.
 */
export function parseJsonBody(body: Buffer, url?: string): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw notJson(body, error, url);
  }
}

/**
 * {@link parseJsonBody} for bodies that may be large: decoded and parsed in slices, with the event
 * loop handed back in between (`parseJsonSliced`), so that no single turn holds it for long.
 */
export async function parseJsonBodySliced(body: Buffer, url?: string): Promise<unknown> {
  try {
    return await parseJsonSliced(await decodeUtf8Sliced(body));
  } catch (error) {
    throw notJson(body, error, url);
  }
}

function notJson(body: Buffer, error: unknown, url: string | undefined): UpstreamError {
  const position = /position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  const at = position === undefined ? '' : ` at byte ${position}`;
  const of = url === undefined ? '' : ` of ${url}`;
  return new UpstreamError('malformed', `the body${of} (${body.length} bytes) is not valid JSON${at}`);
}

/**
 * The HTTP client's own errors, as an {@link UpstreamError} whose cause is a copy without peer bytes: an
 * `HTTPParserError` carries the unparsable response bytes in `data`, which a logger serialising
 * the cause chain would print. (An error already made here is passed through.)
 */
function translateUpstreamError(error: unknown, signal: AbortSignal, what: string): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted && signal.reason instanceof UpstreamError) return signal.reason;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamError('timeout', `${what} timed out`, { cause: scrubbed(error) });
  }
  const detail = typeof code === 'string' ? code : 'request failed';
  return new UpstreamError('network', `${what}: network error (${detail})`, { cause: scrubbed(error) });
}

/** The name, code and (for errors that are not HTTP parse errors) message of `error`; nothing else. */
function scrubbed(error: unknown): Error {
  if (!(error instanceof Error)) return new Error('non-Error thrown by the HTTP client');
  const code = (error as { code?: unknown }).code;
  const parse = error.name === 'HTTPParserError' || (typeof code === 'string' && code.startsWith('HPE_'));
  const copy = new Error(parse ? 'the answer is not valid HTTP/1.1' : error.message);
  copy.name = error.name;
  if (typeof code === 'string') Object.assign(copy, { code });
  if (!parse && error.stack) copy.stack = error.stack;
  return copy;
}
