/**
 * Helpers shared by the verifier tests: hand-made tokens (raw JSON, any `alg`, any signature),
 * a tracked authorizer factory, and `expectRefused`, which checks the error code, the status and
 * that nothing in the error (message, stack, cause chain) repeats the token text.
 */
import { constants, createHmac, sign, type KeyObject } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { IamAuthzError, type Authorizer, type AuthorizerOptions, type IamAuthzErrorCode } from '../../src/index.js';
import { b64url, type SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import { Authorizers as TrackedAuthorizers, claims, KEY, NOW_MS, useIam, type Iam } from '../helpers/index.js';

/** Base URL used with a static JWKS (no network). */
export const BASE = 'https://iam.example.test';
export const ISSUER = `${BASE}/authentication/v1`;

/** The codes `authenticate` can reject with, and the status each one must carry. */
export type VerifierCode = Extract<IamAuthzErrorCode, 'ERR_TOKEN_MISSING' | 'ERR_TOKEN_INVALID' | 'ERR_TOKEN_EXPIRED' | 'ERR_TOKEN_NOT_YET_VALID' | 'ERR_JWKS_UNAVAILABLE'>;

export const STATUS: Readonly<Record<VerifierCode, 401 | 503>> = {
  ERR_TOKEN_MISSING: 401,
  ERR_TOKEN_INVALID: 401,
  ERR_TOKEN_EXPIRED: 401,
  ERR_TOKEN_NOT_YET_VALID: 401,
  ERR_JWKS_UNAVAILABLE: 503,
};

/** Creates authorizers and closes them all at the end of a file. */
export class Authorizers extends TrackedAuthorizers {
  /** An authorizer for {@link BASE} with a static JWKS holding `KEY`, at `NOW_MS`. */
  static(options: Partial<AuthorizerOptions> = {}): Authorizer {
    return this.create({ baseUrl: BASE, localJwks: { keys: [KEY.jwk] }, now: () => NOW_MS, ...options });
  }
}

/**
 * Registers the hooks of a verifier test file: the loopback IAM of test/helpers/iam.ts (its JWKS
 * serves `KEY`) for the tests that fetch keys, and {@link Authorizers} closed after the file.
 */
export function useLoopbackJwks(): { readonly authorizers: Authorizers; readonly iam: Iam } {
  const iam = useIam();
  const authorizers = new Authorizers();
  afterAll(() => authorizers.closeAll());
  return { authorizers, iam };
}

/** The default IAM header of a token signed by `key`. */
export function iamHeader(key: SigningKey = KEY, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { alg: 'RS256', kid: key.kid, cty: 't1', ...extra };
}

/** `base64url(headerJson) . base64url(payloadJson)` from raw JSON text (written by hand where needed). */
export function signingInput(headerJson: string, payloadJson: string): string {
  return `${b64url(headerJson)}.${b64url(payloadJson)}`;
}

/** An RSA signature over `input` for `alg` (RS256 unless told; RS* PKCS#1 v1.5, PS* PSS), base64url. */
export function rsaSign(input: string, key: KeyObject, alg = 'RS256'): string {
  const bits = /^[RP]S(256|384|512)$/.exec(alg)?.[1] ?? '256';
  const hash = `sha${bits}`;
  const signer = alg.startsWith('PS') ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(bits) / 8 } : key;
  return sign(hash, Buffer.from(input, 'latin1'), signer).toString('base64url');
}

/** An HMAC-SHA256 signature over `input` with `secret`, base64url. */
export function hmacSign(input: string, secret: string | Buffer): string {
  return createHmac('sha256', secret).update(input).digest('base64url');
}

/**
 * A compact token from raw header and payload JSON, signed by `key` with the RSA algorithm the
 * header names (RS256 when it names none or a non-RSA one, e.g. `none`: a real RSA signature anyway).
 */
export function signRaw(headerJson: string, payloadJson: string, key: SigningKey = KEY): string {
  const input = signingInput(headerJson, payloadJson);
  return `${input}.${rsaSign(input, key.privateKey, headerAlg(headerJson))}`;
}

function headerAlg(headerJson: string): string {
  try {
    const alg = (JSON.parse(headerJson) as { alg?: unknown }).alg;
    return typeof alg === 'string' ? alg : 'RS256';
  } catch {
    return 'RS256';
  }
}

/** A compact token whose header and payload are given as objects, signed by `key` per `header.alg`. */
export function signObjects(header: Record<string, unknown>, payload: Record<string, unknown>, key: SigningKey = KEY): string {
  return signRaw(JSON.stringify(header), JSON.stringify(payload), key);
}

/** Valid claims for {@link BASE}. */
export function baseClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return claims(BASE, overrides);
}

/** A valid token for {@link BASE}: default claims and header, overridable. */
export function token(overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
  return signObjects(iamHeader(key, header), baseClaims(overrides), key);
}

/** Every substring worth hiding: the whole token and each of its segments (when long enough to be meaningful). */
function secretsOf(tokenText: string): string[] {
  const parts = [tokenText, ...tokenText.split('.')];
  return parts.filter((p) => p.length >= 8);
}

function errorTexts(error: unknown, depth = 0): string[] {
  if (depth > 5 || typeof error !== 'object' || error === null) return typeof error === 'string' ? [error] : [];
  const e = error as { message?: unknown; stack?: unknown; cause?: unknown };
  const texts: string[] = [];
  if (typeof e.message === 'string') texts.push(e.message);
  if (typeof e.stack === 'string') texts.push(e.stack);
  texts.push(JSON.stringify(error));
  return [...texts, ...errorTexts(e.cause, depth + 1)];
}

/** Asserts that `error` repeats none of `secrets`, in its message, stack or causes. */
export function expectNoLeak(error: unknown, secrets: readonly string[]): void {
  const texts = errorTexts(error);
  for (const secret of secrets) {
    for (const text of texts) expect(text.includes(secret), `error text leaks ${JSON.stringify(secret.slice(0, 40))}`).toBe(false);
  }
}

export interface RefusedOptions {
  /** The whole `Authorization` value (may be `undefined`); default `Bearer <token>`. */
  authorization?: string | undefined;
  /** More strings that must not appear in the error (e.g. decoded claims). */
  hidden?: readonly string[];
}

/**
 * Runs `authz.authenticate` and asserts it rejects with an {@link IamAuthzError} of `code` (and the
 * status that goes with it), whose texts never contain the token. Returns the error.
 */
export async function expectRefused(authz: Authorizer, tokenText: string, code: VerifierCode, options: RefusedOptions = {}): Promise<IamAuthzError> {
  const authorization = 'authorization' in options ? options.authorization : `Bearer ${tokenText}`;
  let caught: unknown;
  try {
    await authz.authenticate(authorization);
  } catch (error) {
    caught = error;
  }
  expect(caught, 'authenticate should have rejected').toBeInstanceOf(IamAuthzError);
  const error = caught as IamAuthzError;
  expect({ code: error.code, status: error.status }).toEqual({ code, status: STATUS[code] });
  expectNoLeak(error, [...secretsOf(tokenText), ...(options.hidden ?? [])]);
  return error;
}

/** Asserts that `authz` accepts `tokenText` (the control for a hostile variant). */
export async function expectAccepted(authz: Authorizer, tokenText: string): Promise<void> {
  const identity = await authz.authenticate(`Bearer ${tokenText}`);
  expect(identity.token).toBe(tokenText);
}

/** Replaces one segment (0 header, 1 payload, 2 signature) of a compact token. */
export function withSegment(tokenText: string, index: 0 | 1 | 2, segment: string): string {
  const parts = tokenText.split('.');
  parts[index] = segment;
  return parts.join('.');
}

/** The segment `index` of a compact token. */
export function segment(tokenText: string, index: 0 | 1 | 2): string {
  return tokenText.split('.')[index]!;
}
