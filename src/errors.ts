import { forLog } from './lib/log-text.js';
import type { Decision } from './types.js';

/**
 * The error model: every failure the library reports is an {@link IamAuthzError} with an HTTP
 * `status`, a stable `code`, and its whole HTTP answer — `headers` (RFC 6750 `WWW-Authenticate`,
 * `Retry-After`), an RFC 9457 problem body, and `getResponse()`. This module is the one place
 * an answer is built: every adapter, and any error handler of yours, sends the same thing.
 * Messages and bodies never contain the token text or an upstream body.
 */

/** Every code an {@link IamAuthzError} can carry. Stable across minor versions. */
export type IamAuthzErrorCode =
  | 'ERR_TOKEN_MISSING'
  | 'ERR_TOKEN_INVALID'
  | 'ERR_TOKEN_EXPIRED'
  | 'ERR_TOKEN_NOT_YET_VALID'
  | 'ERR_TOKEN_REJECTED'
  | 'ERR_JWKS_UNAVAILABLE'
  | 'ERR_POLICY_UNAVAILABLE'
  | 'ERR_PERMISSION_DENIED'
  | 'ERR_AUTHORIZER_CLOSED'
  | 'ERR_TOKEN_EXCHANGE_FAILED';

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

/** Base class of every error the library throws or rejects with at request time. */
export class IamAuthzError extends Error {
  /** Stable machine-readable code; match on this, not on `message`. */
  readonly code: IamAuthzErrorCode;
  /**
   * HTTP status: what a server should answer with (401, 403 or 503 for request-time errors), or
   * what the IAM answered (for `ERR_TOKEN_EXCHANGE_FAILED`).
   */
  readonly status: number;
  /**
   * What the caller may be told (the problem body's `detail` of a 401). Usually the message; shorter
   * where the message, meant for logs, names configuration (the expected issuer or tenants).
   */
  readonly detail: string;

  constructor(code: IamAuthzErrorCode, status: number, message: string, options?: { cause?: unknown; detail?: string }) {
    super(message, options);
    this.code = code;
    this.status = status;
    this.name = new.target.name;
    this.detail = options?.detail ?? message;
  }

  /** `status` under the name Fastify's and http-errors' error handlers read. */
  get statusCode(): number {
    return this.status;
  }

  /**
   * Headers of the answer, lower-case names: `WWW-Authenticate` (401, 403) or `Retry-After` (503).
   * Koa, Fastify and Express's default error handlers send them as they are.
   */
  get headers(): Readonly<Record<string, string>> {
    return answerOf(this).headers;
  }

  /** The RFC 9457 `application/problem+json` body of the answer (never the token, a stack or upstream text). */
  get problemDetails(): ProblemDetails {
    return answerOf(this).body;
  }

  /**
   * The complete answer as a WHATWG `Response`: status, headers, problem+json body. Hono's default
   * error handler (and `HTTPException`-aware code) renders any error with `getResponse()`.
   */
  getResponse(): Response {
    return toResponse(answerOf(this));
  }
}

/** 401: no bearer token was presented (no header, another scheme, or `Bearer` with nothing after it). */
export class TokenMissingError extends IamAuthzError {
  constructor(message = 'no bearer token in the Authorization header') {
    super('ERR_TOKEN_MISSING', 401, message);
  }
}

/** 401: the token is malformed, badly signed, or was issued for someone else. */
export class TokenInvalidError extends IamAuthzError {
  constructor(message: string, options?: { cause?: unknown; detail?: string }) {
    super('ERR_TOKEN_INVALID', 401, message, options);
  }
}

/** 401: the token's `exp` has passed (beyond the clock tolerance). */
export class TokenExpiredError extends IamAuthzError {
  constructor(message = 'token has expired') {
    super('ERR_TOKEN_EXPIRED', 401, message);
  }
}

/** 401: the token's `nbf` is still in the future (beyond the clock tolerance). */
export class TokenNotYetValidError extends IamAuthzError {
  constructor(message = 'token is not valid yet (nbf)') {
    super('ERR_TOKEN_NOT_YET_VALID', 401, message);
  }
}

/** 503: no key could be had because the JWKS endpoint failed and no cached key fits. */
export class JwksUnavailableError extends IamAuthzError {
  /**
   * True when the endpoint's answer points at a misconfiguration (404, 401/403, a redirect, a
   * non-JSON page) rather than an outage; the message names the URL and status.
   */
  readonly misconfigured: boolean;
  constructor(message: string, options?: { cause?: unknown; misconfigured?: boolean }) {
    super('ERR_JWKS_UNAVAILABLE', 503, message, options);
    this.misconfigured = options?.misconfigured ?? false;
  }
}

/** 503: no usable role policy for the caller's application (the policy API failed, nothing cached). */
export class PolicyUnavailableError extends IamAuthzError {
  /**
   * True when the policy API's answer points at a misconfiguration (404, a redirect, a non-JSON
   * page, or 401/403 to every token) rather than an outage; the message names the URL and status.
   */
  readonly misconfigured: boolean;
  constructor(message: string, options?: { cause?: unknown; misconfigured?: boolean }) {
    super('ERR_POLICY_UNAVAILABLE', 503, message, options);
    this.misconfigured = options?.misconfigured ?? false;
  }
}

/**
 * 401 or 403: the IAM's policy API refused the caller's own token (its status is kept: 401, e.g. a
 * revoked user or a token expired at the IAM, or 403), while it accepts other tokens of the same
 * application. Only this caller is refused; nothing else is affected.
 */
export class TokenRejectedError extends IamAuthzError {
  constructor(status: 401 | 403, message: string) {
    super('ERR_TOKEN_REJECTED', status, message);
  }
}

/**
 * 503: `authenticate`, `authorize` or `ready` was called after `close()`. The authorizer does not
 * reopen its connections; a server that is shutting down answers 503 and the client retries
 * elsewhere.
 */
export class AuthorizerClosedError extends IamAuthzError {
  constructor() {
    super('ERR_AUTHORIZER_CLOSED', 503, 'the authorizer is closed');
  }
}

/** 403: the caller is authenticated but does not hold the permission. Carries the decision. */
export class PermissionDeniedError extends IamAuthzError {
  /** Why the permission was denied; for the developer, not for the caller. */
  readonly decision: Decision;
  constructor(decision: Decision, service: string, permission: string) {
    super('ERR_PERMISSION_DENIED', 403, `permission ${forLog(permission)} on ${forLog(service)} denied (${decision.reason})`);
    this.decision = decision;
  }
}

/**
 * The token client's exchange failed. `status` is the IAM's HTTP status (4xx/5xx), 503 when the IAM
 * could not be reached, or 502 when it answered something that is not a token.
 */
export class TokenExchangeError extends IamAuthzError {
  /**
   * The `title: detail` of the IAM's problem+json refusal, when it sent one: upstream text, kept out
   * of the message and the cause, with anything token-like redacted and cut at 300 characters.
   */
  readonly problem: string | undefined;
  constructor(status: number, message: string, options?: { cause?: unknown; problem?: string | undefined }) {
    super('ERR_TOKEN_EXCHANGE_FAILED', status, message, options);
    this.problem = options?.problem;
  }
}

/** True for any error thrown by this library. */
export function isIamAuthzError(value: unknown): value is IamAuthzError {
  return value instanceof IamAuthzError;
}

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
  if (options.exposeDecision && error instanceof PermissionDeniedError) return { status, headers, body: { ...body, decision: error.decision } };
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
