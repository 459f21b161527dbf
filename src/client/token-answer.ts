/**
 * Reading the IAM's answers on the caller side: the issued token's `exp`/`iat` (decoded, never
 * verified: the consuming service verifies), and a problem+json error body's `title`/`detail`.
 * Nothing here ever puts token text into a message.
 */

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Times read from an issued token, in seconds since the epoch. */
export interface TokenTimes {
  exp: number;
  iat: number | undefined;
}

/**
 * The body of a successful exchange as a compact JWS and its times, or the mistake that makes it
 * not one (a short phrase without any of the body's text).
 */
export function readIssuedToken(body: Buffer): { token: string; times: TokenTimes } | { mistake: string } {
  // A trailing newline is tolerated; anything else around the token is not.
  const token = body.toString('utf8').replace(/\r?\n$/, '');
  if (!COMPACT.test(token)) return { mistake: 'the answer is not a compact JWS (three base64url segments)' };
  const [headerPart, payloadPart] = token.split('.') as [string, string, string];
  if (decodeJsonObject(headerPart) === undefined) return { mistake: 'the answer\'s JOSE header is not a JSON object' };
  const payload = decodeJsonObject(payloadPart);
  if (payload === undefined) return { mistake: 'the answer\'s payload is not a JSON object' };
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { mistake: 'the answer has no numeric "exp" claim' };
  return { token, times: { exp, iat: typeof iat === 'number' && Number.isFinite(iat) ? iat : undefined } };
}

function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(segment, 'base64url')));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch {
    // The parse error quotes the decoded text; it is dropped, not kept as a cause.
    return undefined;
  }
}

const MAX_PROBLEM_CHARS = 200;
/** Things that look like credentials: JOSE objects (`eyJ…`, dots included) and long base64(url) runs. */
const TOKENISH = /eyJ[A-Za-z0-9_.-]*|[A-Za-z0-9_+/=-]{40,}/g;

/**
 * `title: detail` of an RFC 9457 problem+json (or JSON) error body, sanitised for a message:
 * control characters removed, anything token-like and the given secrets redacted, length capped.
 * `undefined` when the body is not such a document.
 */
export function problemSummary(
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
  secrets: readonly string[],
): string | undefined {
  const type = headers['content-type'];
  const contentType = (Array.isArray(type) ? type[0] : type)?.toLowerCase() ?? '';
  if (!/^application\/(?:problem\+)?json\b/.test(contentType)) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { title, detail } = doc as { title?: unknown; detail?: unknown };
  const parts = [title, detail].filter((p): p is string => typeof p === 'string' && p.trim().length > 0);
  if (parts.length === 0) return undefined;
  let text = parts.join(': ');
  for (const secret of secrets) {
    if (secret.length > 0) text = text.split(secret).join('[redacted]');
  }
  // eslint-disable-next-line no-control-regex
  text = text.replace(TOKENISH, '[redacted]').replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return text.length > MAX_PROBLEM_CHARS ? `${text.slice(0, MAX_PROBLEM_CHARS)}…` : text;
}
