/**
 * Turns an {@link IamAuthzError} into the HTTP answer every adapter sends: the status, RFC 6750
 * `WWW-Authenticate` (or `Retry-After` for 503), and an RFC 9457 `application/problem+json` body.
 * The body never holds the token or a stack, and the decision only when asked for.
 */
import { IamAuthzError, PermissionDeniedError } from '../errors.js';
import type { Decision } from '../types.js';

/** RFC 9457 problem details, with the library's stable `code`. */
export interface ProblemDetails {
  /** Always `about:blank`: the `code` says what happened. */
  readonly type: string;
  /** The HTTP reason phrase of `status`. */
  readonly title: string;
  /** 401, 403 or 503. */
  readonly status: number;
  /** What went wrong, for a human; never contains the token. */
  readonly detail: string;
  /** The stable error code, e.g. `ERR_TOKEN_EXPIRED`. */
  readonly code: string;
  /** Only with `exposeDecision`. */
  readonly decision?: Decision;
}

/** How {@link toErrorResponse} renders an error. */
export interface ErrorResponseOptions {
  /** `realm` of the `WWW-Authenticate` challenge. */
  readonly realm: string;
  /** Put the denial's decision (roles, reason, changeId) in 403 bodies, and the full message (expected issuer, tenants) in 401 bodies. */
  readonly exposeDecision: boolean;
  /** `Retry-After` seconds on 503 answers. */
  readonly retryAfterSec: number;
}

/** An HTTP answer for an {@link IamAuthzError}: status, headers and problem+json body. */
export interface ErrorResponse {
  /** HTTP status: 401, 403 or 503. */
  readonly status: number;
  /** `WWW-Authenticate` (401, 403) or `Retry-After` (503), lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** The `application/problem+json` body. */
  readonly body: ProblemDetails;
}

const TITLES: Readonly<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden', 503: 'Service Unavailable' };

/** The HTTP answer for an error, as every adapter sends it; for rendering errors yourself. */
export function toErrorResponse(error: IamAuthzError, options: ErrorResponseOptions): ErrorResponse {
  const { status, code } = error;
  // A 503's message names upstream URLs and statuses (for logs); the client learns only that it may retry.
  // A 401's message may name the expected issuer or tenants (for logs): the caller gets `detail`.
  const detail = status === 403 ? 'the caller lacks the permission this request needs'
    : status === 503 ? 'authorization is temporarily unavailable; retry later'
    : options.exposeDecision ? error.message : error.detail;
  const headers: Record<string, string> = {};
  const realm = `realm=${quote(options.realm)}`;
  if (code === 'ERR_TOKEN_MISSING') headers['www-authenticate'] = `Bearer ${realm}`;
  else if (status === 401) headers['www-authenticate'] = `Bearer ${realm}, error="invalid_token", error_description=${quote(detail)}`;
  else if (status === 403) headers['www-authenticate'] = `Bearer ${realm}, error="insufficient_scope", error_description=${quote(detail)}`;
  else headers['retry-after'] = String(options.retryAfterSec);
  const body: ProblemDetails = { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code };
  if (options.exposeDecision && error instanceof PermissionDeniedError) return { status, headers, body: { ...body, decision: error.decision } };
  return { status, headers, body };
}

/** An RFC 9110 quoted-string: backslash-escapes `"` and `\`, replaces anything not printable ASCII. */
function quote(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`;
}

/** Checks a `realm` option once, at construction. */
export function checkRealm(realm: unknown, where?: string): string {
  if (typeof realm !== 'string' || realm.length === 0 || /[^\x20-\x7e]/.test(realm)) {
    throw new TypeError(`${where === undefined ? '' : `${where}: `}"realm" must be a non-empty string of printable ASCII`);
  }
  return realm;
}

