/**
 * The one HTTP GET used for every outgoing request (JWKS, policy), and the one place that
 * translates undici's errors: a total timeout, a body-size cap and no redirects followed.
 */
import { request, type Dispatcher } from 'undici';

/** Why an upstream call failed; stable strings, used in events and error messages. */
export type UpstreamFailureReason = 'timeout' | 'network' | 'status' | 'redirect' | 'oversize' | 'malformed';

/** An upstream call failed. Internal: callers wrap it in their own `IamAuthzError`. */
export class UpstreamError extends Error {
  readonly reason: UpstreamFailureReason;
  readonly statusCode: number | undefined;
  constructor(reason: UpstreamFailureReason, message: string, options?: { cause?: unknown; statusCode?: number }) {
    super(message, options);
    this.name = 'UpstreamError';
    this.reason = reason;
    this.statusCode = options?.statusCode;
  }
}

export interface GetOptions {
  dispatcher: Dispatcher;
  /** Total time for connect, headers and body. */
  timeoutMs: number;
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  headers: Record<string, string>;
  /** Statuses answered without a body check (e.g. 304); anything else outside 2xx fails. */
  acceptStatuses?: readonly number[];
}

export interface GetResult {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET `url`; rejects with an {@link UpstreamError} on any failure. Never follows a redirect. */
export async function httpGet(url: string, options: GetOptions): Promise<GetResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(new UpstreamError('timeout', `no complete answer within ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  try {
    const res = await request(url, {
      method: 'GET',
      headers: options.headers,
      dispatcher: options.dispatcher,
      signal: controller.signal,
    });
    const { statusCode } = res;
    if (statusCode >= 300 && statusCode < 400 && !options.acceptStatuses?.includes(statusCode)) {
      discard(res.body);
      throw new UpstreamError('redirect', `answered ${statusCode}; redirects are not followed`, { statusCode });
    }
    if ((statusCode < 200 || statusCode >= 300) && !options.acceptStatuses?.includes(statusCode)) {
      discard(res.body);
      throw new UpstreamError('status', `answered HTTP ${statusCode}`, { statusCode });
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
  }
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
