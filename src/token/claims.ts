/**
 * Claim checks after the signature is known to be good: issuer, expiry, not-before, tenant
 * audience, and the presence of the claims the permission check depends on (`sub`, `app`).
 */
import { TokenExpiredError, TokenInvalidError, TokenNotYetValidError } from '../errors.js';
import { quotedForLog } from '../lib/log-text.js';
import type { IamClaims } from '../types.js';
import { normalizeArs } from './ars.js';

export interface ClaimPolicy {
  /** The accepted issuers (one or more), compared exactly. */
  issuers: readonly string[];
  /** Accepted tenant ids; `undefined` accepts any. */
  audience: ReadonlySet<string> | undefined;
  clockToleranceSec: number;
}

export function checkClaims(payload: Record<string, unknown>, policy: ClaimPolicy, nowMs: number): IamClaims {
  const { iss, exp, nbf, iat, aud, tid, sub, app, jti, acc } = payload;
  if (typeof iss !== 'string' || !policy.issuers.includes(iss)) throw issuerMismatch(iss, policy.issuers);
  if (!Number.isSafeInteger(exp)) throw new TokenInvalidError('token exp claim is missing or not an integer');
  const nowSec = Math.floor(nowMs / 1000);
  if ((exp as number) <= nowSec - policy.clockToleranceSec) throw new TokenExpiredError();
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf)) throw new TokenInvalidError('token nbf claim is not a number');
    if (nbf > nowSec + policy.clockToleranceSec) throw new TokenNotYetValidError();
  }
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat))) {
    throw new TokenInvalidError('token iat claim is not a number');
  }
  optionalString(jti, 'jti');
  optionalString(acc, 'acc');
  optionalString(aud, 'aud');
  optionalString(tid, 'tid');
  if (aud !== undefined && tid !== undefined && aud !== tid) {
    throw new TokenInvalidError('token tid does not match its aud');
  }
  if (policy.audience && (typeof aud !== 'string' || !policy.audience.has(aud))) {
    const accepted = [...policy.audience].map(shown).join(', ');
    throw new TokenInvalidError(`token audience (tenant) ${shown(aud)} is not accepted (audience: ${accepted})`, { detail: 'token audience (tenant) is not accepted' });
  }
  if (typeof sub !== 'string' || sub.length === 0) throw new TokenInvalidError('token sub claim is missing');
  if (typeof app !== 'string' || app.length === 0) throw new TokenInvalidError('token app claim is missing');
  // `payload` is this verification's own freshly parsed object, frozen below its top level by the
  // verifier: normalise `ars` in place.
  payload.ars = Object.freeze(normalizeArs(payload.ars, true));
  return payload as IamClaims;
}

/**
 * Expected and actual, for the log line that explains a first-hour mistake (localhost vs
 * 127.0.0.1); the caller's 401 says only that it is not the expected one.
 */
export function issuerMismatch(iss: unknown, issuers: readonly string[]): TokenInvalidError {
  const expected = issuers.length === 1 ? `the expected ${shown(issuers[0])}` : `one of ${issuers.map(shown).join(', ')}`;
  return new TokenInvalidError(`token issuer ${shown(iss)} is not ${expected}`, { detail: 'token issuer is not the expected one' });
}

function optionalString(value: unknown, claim: string): void {
  if (value !== undefined && typeof value !== 'string') {
    throw new TokenInvalidError(`token ${claim} claim is not a string`);
  }
}

/** A claim value for a log message: quoted, cut at 200 characters and escaped, or its type when not a string. */
function shown(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value !== 'string') return `(a ${value === null ? 'null' : typeof value})`;
  return quotedForLog(value);
}
