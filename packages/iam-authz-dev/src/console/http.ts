/**
 * The console's own request/response shapes: plain data, no node:http, so the console is a pure
 * handler that any server (the dev IAM's node:http wrapper, a test, a fetch-style host) can mount.
 * Also the answers every route shares (JSON, RFC 9457 problems) and the capped reading of a body.
 */

/** One request to the console, as the hosting server received it. */
export interface ConsoleRequest {
  /** HTTP method, e.g. `GET`. */
  readonly method: string;
  /** Path and query, e.g. `/console/api/config`. */
  readonly url: string;
  /** Header names in lower case; repeated headers joined with `, ` (the `cookie` header with `; `). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body, read only when the route needs it and only up to the size cap. */
  readonly body: AsyncIterable<Uint8Array>;
}

/** The console's answer to one request, for the hosting server to write. */
export interface ConsoleResponse {
  /** HTTP status code. */
  readonly status: number;
  /** Response headers, names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body: text (HTML, CSS, script, JSON) or bytes. */
  readonly body: string | Uint8Array;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict',
  413: 'Content Too Large', 415: 'Unsupported Media Type', 428: 'Precondition Required', 500: 'Internal Server Error',
};

/** An RFC 9457 problem answer; `extra` adds members such as `field`. */
export function problem(status: number, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): ConsoleResponse {
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra });
  return { status, headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers }, body };
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): ConsoleResponse {
  return { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }, body: JSON.stringify(value) };
}

/** The body did not fit the cap; the console answers 413. */
export class BodyTooLarge extends Error {}

/**
 * Reads the body as UTF-8, refusing more than `maxBytes` (a `content-length` over the cap is refused
 * before reading). The iterator is not closed on refusal: closing a node:http request destroys the
 * socket before the 413 could be written; the host closes the connection after answering.
 */
export async function readText(req: ConsoleRequest, maxBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw new BodyTooLarge();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const iterator = req.body[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) break;
    total += next.value.byteLength;
    if (total > maxBytes) throw new BodyTooLarge();
    chunks.push(next.value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** Deepest nesting of a parsed JSON value, counted without recursion (a hostile body cannot overflow the stack). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (typeof v !== 'object' || v === null) continue;
    if (d >= max) return true;
    for (const child of Object.values(v)) stack.push({ v: child, d: d + 1 });
  }
  return false;
}

/** Deepest JSON nesting accepted in a request body (a config needs 6). */
const MAX_JSON_DEPTH = 32;

/** Parses a JSON body within the size and depth caps; a response when it cannot. */
export async function readJsonBody(req: ConsoleRequest, maxBodyBytes: number): Promise<{ value: unknown } | ConsoleResponse> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return problem(415, 'content-type must be application/json');
  let text: string;
  try {
    text = await readText(req, maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLarge) return problem(413, `body larger than ${maxBodyBytes} bytes`, {}, { connection: 'close' });
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return problem(400, 'body is not valid JSON', { field: '$' });
  }
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) return problem(400, `body nests deeper than ${MAX_JSON_DEPTH} levels`, { field: '$' });
  return { value };
}

/** `value` as a JSON object, or `undefined` when it is not one (null and arrays included). */
export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
