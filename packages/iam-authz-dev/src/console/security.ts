/**
 * The console's guards: the same-origin check of mutating requests, the per-session CSRF token,
 * and the security headers of every answer (a strict Content-Security-Policy: only the console's
 * own script and style). Which `Host` names it answers is the IAM's rule, in `../host-rule.ts`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { problem, type ConsoleRequest, type ConsoleResponse } from './http.js';

/** Name of the session cookie (HttpOnly, SameSite=Strict, Path=/console). */
export const SESSION_COOKIE = 'iam-console-session';
/** Header carrying the CSRF token of `GET /console/api/session` on mutating requests. */
export const CSRF_HEADER = 'x-csrf-token';

export const PAGE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
  "form-action 'none'", "frame-ancestors 'none'", "base-uri 'none'",
].join('; ');

/** Sent with every console answer, page or API. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Why a request must be refused as cross-origin, or `undefined`. `host` is the request's (already allowed) `Host`. */
export function crossOriginRefusal(req: ConsoleRequest, host: string): string | undefined {
  const site = req.headers['sec-fetch-site'];
  // A page of another site may make the browser send a GET too; no console answer is for it.
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  if (SAFE_METHODS.has(req.method)) return undefined;
  const origin = req.headers.origin;
  // Browsers send Origin on every non-GET request; scripts (curl) send none and rely on the CSRF token.
  if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`) return 'cross-origin request refused (Origin does not match Host)';
  return undefined;
}

/** The answer to a change without the CSRF token of its session. */
export function csrfRefused(): ConsoleResponse {
  return problem(403, 'a valid X-CSRF-Token is required: GET /console/api/session (keeping its cookie) gives one');
}

/** Stateless sessions: a random id in an HttpOnly cookie, and its CSRF token = HMAC(secret, id). */
export class Sessions {
  readonly #secret = randomBytes(32);

  /** The CSRF token for the request's session, and a `set-cookie` when it had none. */
  open(req: ConsoleRequest): { csrfToken: string; setCookie?: string } {
    const existing = sessionId(req);
    if (existing !== undefined) return { csrfToken: this.#tokenOf(existing) };
    const id = randomBytes(32).toString('base64url');
    return { csrfToken: this.#tokenOf(id), setCookie: `${SESSION_COOKIE}=${id}; Path=/console; HttpOnly; SameSite=Strict` };
  }

  /** True when the request carries a session cookie and the CSRF token of that session. */
  verify(req: ConsoleRequest): boolean {
    const id = sessionId(req);
    const presented = req.headers[CSRF_HEADER];
    if (id === undefined || presented === undefined) return false;
    const expected = Buffer.from(this.#tokenOf(id));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #tokenOf(id: string): string {
    return createHmac('sha256', this.#secret).update(id).digest('base64url');
  }
}

function sessionId(req: ConsoleRequest): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === SESSION_COOKIE && value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value)) return value;
  }
  return undefined;
}
