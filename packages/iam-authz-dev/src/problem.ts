/** Small HTTP helpers of the development IAM: problem+json answers and bounded body reading. */
import type { IncomingMessage, ServerResponse } from 'node:http';

const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  406: 'Not Acceptable', 413: 'Content Too Large', 415: 'Unsupported Media Type', 500: 'Internal Server Error',
};

export function sendProblem(res: ServerResponse, status: number, detail: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail });
  res.writeHead(status, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...headers });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export class BodyTooLargeError extends Error {}

/** Reads the request body, refusing more than `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (total > maxBytes) throw new BodyTooLargeError();
    chunks.push(buf);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/** The bearer token of an `Authorization` header (scheme case-insensitive), or `undefined`. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}

/** True when an `Accept` header admits `type` (exact, `major/*` or `*\/*`, with q > 0). */
export function accepts(header: string | undefined, type: string, exact = false): boolean {
  if (header === undefined) return false;
  const [major] = type.split('/');
  return header.split(',').some((part) => {
    const [range = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) return false;
    return range === type || (!exact && (range === `${major ?? ''}/*` || range === '*/*'));
  });
}

/** The media type of a `Content-Type` header, without parameters, lower-cased. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}
