/**
 * An error's HTTP answer: the one place it is built — `WWW-Authenticate` (RFC 6750) or
 * `Retry-After`, and an RFC 9457 problem body — from the error and the answer options it carries
 * (those of the guard that rejected with it, else the defaults). Every adapter, and any error
 * handler of yours, sends the same thing. Never the token text or an upstream body.
 */
import type { IamAuthzError } from './errors.js';
import type { Decision } from './types.js';

/** RFC 9457 problem details, with the library's stable `code`. */
export interface ProblemDetails {
  /** Always `about:blank`: the `code` says what happened. */
  readonly type: string;
  /** The HTTP reason phrase of `status`. */
  readonly title: string;
  /** 401, 403 or 503. */
  readonly status: number;
  /** What went wrong, for a human; never contains the token or upstream text. */
  readonly detail: string;
  /** The stable error code, e.g. `ERR_TOKEN_EXPIRED`. */
  readonly code: string;
  /** Only with `exposeDecision`. */
  readonly decision?: Decision;
}

/** What shapes an error's answer; the errors an adapter's guards reject with carry the adapter's own. */
export interface ErrorResponseOptions {
  /** `realm` of the `WWW-Authenticate` challenge. Default `"iam"`. */
  readonly realm: string;
  /** Put the denial's decision (roles, reason, changeId) in 403 bodies, and the full message (expected issuer, tenants) in 401 bodies. Default `false`. */
  readonly exposeDecision: boolean;
  /** `Retry-After` seconds on 503 answers. Default `5`. */
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

/** The answer of an error no guard rejected with: what `authenticate()` or `check()` throw. */
const DEFAULT_ANSWER: ErrorResponseOptions = Object.freeze({ realm: 'iam', exposeDecision: false, retryAfterSec: 5 });

/**
 * Where an error keeps the answer options of the guard that rejected with it (the adapter's realm,
 * `exposeDecision`, `retryAfterSec`): an own, non-enumerable, read-only property under a symbol no
 * other module holds, so that the error renders from itself alone.
 */
const ANSWER_OPTIONS = Symbol('iam-authz.answerOptions');

type Answering = { readonly [ANSWER_OPTIONS]?: ErrorResponseOptions };

const TITLES: Readonly<Record<number, string>> = { 401: 'Unauthorized', 403: 'Forbidden', 503: 'Service Unavailable' };

/**
 * The HTTP answer for an error under explicit options; `error.headers`, `problemDetails` and
 * `getResponse()` use the options of the guard that rejected with it, else the defaults (realm
 * `"iam"`, 5 s, no decision).
 */
export function toErrorResponse(error: IamAuthzError, options: ErrorResponseOptions): ErrorResponse {
  const { status, code } = error;
  // A 503's message names upstream URLs and statuses (for logs); the client learns only that it may retry.
  // A 401's message may name the expected issuer or tenants (for logs): the caller gets `detail`.
  const detail = status === 403 ? 'the caller lacks the permission this request needs'
    : status === 503 ? 'authorization is temporarily unavailable; retry later'
    : status !== 401 ? 'the request could not be authorized'
    : options.exposeDecision ? error.message : error.detail;
  const headers: Record<string, string> = {};
  const realm = `realm=${quote(options.realm)}`;
  if (code === 'ERR_TOKEN_MISSING') headers['www-authenticate'] = `Bearer ${realm}`;
  else if (status === 401) headers['www-authenticate'] = `Bearer ${realm}, error="invalid_token", error_description=${quote(detail)}`;
  else if (status === 403) headers['www-authenticate'] = `Bearer ${realm}, error="insufficient_scope", error_description=${quote(detail)}`;
  else if (status === 503) headers['retry-after'] = String(options.retryAfterSec);
  const body: ProblemDetails = { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code };
  const { decision } = error as { decision?: Decision };
  if (options.exposeDecision && status === 403 && decision !== undefined) return { status, headers, body: { ...body, decision } };
  return { status, headers, body };
}

/** The `Response` for an {@link ErrorResponse}: its status and headers, and the problem+json body (none for HEAD). */
export function toResponse(answer: ErrorResponse, method?: string): Response {
  const headers = new Headers(answer.headers);
  headers.set('content-type', 'application/problem+json');
  return new Response(method === 'HEAD' ? null : JSON.stringify(answer.body), { status: answer.status, headers });
}

/** The error's answer under the options it carries (those of the guard that rejected with it), else the defaults. */
export function answerOf(error: IamAuthzError): ErrorResponse {
  return toErrorResponse(error, (error as Answering)[ANSWER_OPTIONS] ?? DEFAULT_ANSWER);
}

/**
 * The error, carrying the answer options of a guard that rejects with it (its adapter's realm,
 * `retryAfterSec`, `exposeDecision`). An error's options are set once and never changed: an error
 * that carries none gets these; one that carries others — shared by requests to two adapters, say
 * a policy outage every waiting request is rejected with — is copied, so that each adapter hands
 * on an error that renders its own answer, whenever it is rendered.
 */
export function withAnswerOptions<E extends IamAuthzError>(error: E, options: ErrorResponseOptions): E {
  const carried = (error as Answering)[ANSWER_OPTIONS];
  if (carried === options) return error;
  const answering = carried === undefined ? error : copyOf(error);
  Object.defineProperty(answering, ANSWER_OPTIONS, { value: options });
  return answering;
}

/** A copy of `error`: the same class, message, stack, cause and fields, without answer options. */
function copyOf<E extends IamAuthzError>(error: E): E {
  const copy = Object.create(Object.getPrototypeOf(error) as object) as E;
  for (const key of Reflect.ownKeys(error)) {
    if (key !== ANSWER_OPTIONS) Object.defineProperty(copy, key, Object.getOwnPropertyDescriptor(error, key) as PropertyDescriptor);
  }
  // V8 may keep `stack` as an accessor of the original's internals: the copy holds its text.
  Object.defineProperty(copy, 'stack', { value: error.stack, writable: true, configurable: true, enumerable: false });
  return copy;
}

/** An RFC 9110 quoted-string: backslash-escapes `"` and `\`, replaces anything not printable ASCII. */
function quote(value: string): string {
  return `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`;
}
