/**
 * The one HTTP client used for every outgoing request (JWKS and policy GETs, the token client's
 * POST), and the one place that translates undici's errors: a total timeout, a body-size cap and
 * no redirects followed.
 */
import { request, type Dispatcher } from 'undici';

/** Why an upstream call failed; stable strings, used in events and error messages. */
export type UpstreamFailureReason = 'timeout' | 'network' | 'status' | 'redirect' | 'oversize' | 'malformed';

/** An upstream call failed. Internal: callers wrap it in their own `IamAuthzError`. */
export class UpstreamError extends Error {
  readonly reason: UpstreamFailureReason;
  readonly statusCode: number | undefined;
  /**
   * The headers and (capped) body of a 4xx/5xx answer, when {@link RequestOptions.errorBodyMaxBytes}
   * asked for them and the body fitted; otherwise `undefined`.
   */
  readonly response: ErrorResponseBody | undefined;
  constructor(
    reason: UpstreamFailureReason,
    message: string,
    options?: { cause?: unknown; statusCode?: number; response?: ErrorResponseBody },
  ) {
    super(message, options);
    this.name = 'UpstreamError';
    this.reason = reason;
    this.statusCode = options?.statusCode;
    this.response = options?.response;
  }
}

/** What is kept of a 4xx/5xx answer for error reporting (e.g. problem details). */
export interface ErrorResponseBody {
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface GetOptions {
  dispatcher: Dispatcher;
  /** Total time for connect, headers and body. */
  timeoutMs: number;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  headers: Record<string, string>;
  /** Aborts the request (e.g. when its owner closes); it then fails as a `network` error. */
  signal?: AbortSignal;
  /** Statuses answered without a body check (e.g. 304); anything else outside 2xx fails. */
  acceptStatuses?: readonly number[];
}

export interface GetResult {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * undici's redirect interceptor honours a per-request `maxRedirections`, and 0 turns it off: a
 * dispatcher the user composed with `interceptors.redirect()` would otherwise follow a 3xx to
 * another host before the check below ever sees it. Not in undici's request types, hence a spread.
 */
const NO_REDIRECTS = { maxRedirections: 0 } as object;

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
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new UpstreamError('timeout', `no complete answer within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const onOwnerAbort = (): void => { controller.abort(new UpstreamError('network', 'aborted: the client was closed')); };
  if (options.signal?.aborted) onOwnerAbort();
  else options.signal?.addEventListener('abort', onOwnerAbort, { once: true });
  try {
    const res = await request(url, {
      method: options.method,
      headers: options.headers,
      ...(options.body === undefined ? {} : { body: options.body }),
      dispatcher: options.dispatcher,
      signal: controller.signal,
      ...NO_REDIRECTS,
    });
    const { statusCode } = res;
    // 304 is a 3xx but not a redirect: unexpected when no validator was sent, a plain status failure.
    if (statusCode >= 300 && statusCode < 400 && statusCode !== 304 && !options.acceptStatuses?.includes(statusCode)) {
      discard(res.body);
      throw new UpstreamError('redirect', `answered ${statusCode}; redirects are not followed`, { statusCode });
    }
    if ((statusCode < 200 || statusCode >= 300) && !options.acceptStatuses?.includes(statusCode)) {
      const errorBodyMaxBytes = options.errorBodyMaxBytes ?? 0;
      const body = statusCode >= 400 && errorBodyMaxBytes > 0 ? await readErrorBody(res, errorBodyMaxBytes) : undefined;
      if (body === undefined) discard(res.body);
      throw new UpstreamError('status', `answered HTTP ${statusCode}`, {
        statusCode,
        ...(body === undefined ? {} : { response: { headers: res.headers, body } }),
      });
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      discard(res.body);
      throw new UpstreamError('oversize', `body of ${declared} bytes exceeds ${options.maxBytes}`, { statusCode });
    }
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      total += buf.length;
      if (total > options.maxBytes) {
        discard(res.body);
        throw new UpstreamError('oversize', `body exceeds ${options.maxBytes} bytes`, { statusCode });
      }
      chunks.push(buf);
    }
    return { statusCode, headers: res.headers, body: Buffer.concat(chunks, total) };
  } catch (error) {
    throw translateUpstreamError(error, controller.signal);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOwnerAbort);
  }
}

/** Reads an error answer's body up to `maxBytes`; `undefined` (body dropped) when longer or broken. */
async function readErrorBody(res: Dispatcher.ResponseData, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  // Leaving the loop early destroys the body, which then emits an abort error: keep it handled.
  res.body.on('error', () => undefined);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      total += buf.length;
      if (total > maxBytes) return undefined;
      chunks.push(buf);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks, total);
}

/**
 * Drops a body we will not read. undici's body emits an abort error when destroyed before its end;
 * without a listener that error is an uncaught exception, i.e. an IAM answering 500 would crash
 * the process.
 */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Parse a JSON body; a parse failure is an upstream `malformed` failure. */
export function parseJsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (error) {
    throw new UpstreamError('malformed', 'body is not valid JSON', { cause: error });
  }
}

function translateUpstreamError(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (signal.aborted && signal.reason instanceof UpstreamError) return signal.reason;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamError('timeout', 'timed out', { cause: error });
  }
  const detail = typeof code === 'string' ? code : 'request failed';
  return new UpstreamError('network', `network error (${detail})`, { cause: error });
}
