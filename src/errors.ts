/**
 * The error model: every failure the library reports is an {@link IamAuthzError} with an HTTP
 * `status`, a stable `code`, and its whole HTTP answer — `headers` (RFC 6750 `WWW-Authenticate`,
 * `Retry-After`), an RFC 9457 problem body, and `getResponse()`, built in error-response.ts.
 * Messages and bodies never contain the token text or an upstream body.
 */
import { answerOf, toResponse, type ProblemDetails } from './error-response.js';
import { forLog } from './lib/log-text.js';
import type { Decision } from './types.js';

export { toErrorResponse, toResponse, withAnswerOptions, type ErrorResponse, type ErrorResponseOptions, type ProblemDetails } from './error-response.js';

/** Every code an {@link IamAuthzError} can carry. Stable across minor versions. */
export type IamAuthzErrorCode =
  | 'ERR_TOKEN_MISSING'
  | 'ERR_TOKEN_INVALID'
  | 'ERR_TOKEN_EXPIRED'
  | 'ERR_TOKEN_NOT_YET_VALID'
  | 'ERR_TOKEN_REJECTED'
  | 'ERR_TOKEN_REVOKED'
  | 'ERR_JWKS_UNAVAILABLE'
  | 'ERR_POLICY_UNAVAILABLE'
  | 'ERR_PERMISSION_DENIED'
  | 'ERR_AUTHORIZER_CLOSED'
  | 'ERR_TOKEN_EXCHANGE_FAILED';

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

/**
 * 401: the token was revoked (`authorizer.revoke`): its `jti`, or its subject for tokens issued
 * before a moment. Refused until the token's own `exp`, like an invalid token
 * (`WWW-Authenticate: Bearer error="invalid_token"`).
 */
export class TokenRevokedError extends IamAuthzError {
  constructor(message = 'the token was revoked') {
    super('ERR_TOKEN_REVOKED', 401, message);
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
