/**
 * The least verifier that makes the same decision as iam-authz for the HTTP benchmark's route,
 * written by hand with nothing but what the decision needs: the measured limit of the
 * distinct-token figure. Beyond the ceiling (`floor.ts`: one raw verify and one payload parse) it
 * does every check iam-authz refuses a token on, and no more:
 * - the Bearer scheme; the compact form in canonical unpadded base64url (the regex and the last
 *   character's spare bits), so that one token has one spelling;
 * - the header (decoded and checked once per distinct header text, as iam-authz does): `alg` in
 *   the allow-list, a `kid`, no `crit`, no `b64: false`, the token format `cty`;
 * - the payload: valid UTF-8, a JSON object; the key by `kid`; one RS256 verify;
 * - the claims: `iss`, integer `exp`, `nbf`, `iat`, the tenant (`aud`/`tid`), `sub`, `app`;
 * - the decision: some `ars` entry names `VIN=<vin>` with a role that grants READ.
 * What it leaves out, and iam-authz does: the claims frozen deeply and their nesting bounded, `ars`
 * normalised, an `Identity` and a `Decision` built and attached to the request, decision events,
 * errors that say why. That part is what the library adds; the rest any verifier must do.
 */
import { isUtf8 } from 'node:buffer';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const SEXTET = new Uint8Array(128);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
for (let i = 0; i < ALPHABET.length; i++) SEXTET[ALPHABET.charCodeAt(i)] = i;

function canonical(token: string, start: number, end: number): boolean {
  const rest = (end - start) % 4;
  const last = SEXTET[token.charCodeAt(end - 1)] ?? 0;
  return !(rest === 1 || (rest === 2 && (last & 0x0f) !== 0) || (rest === 3 && (last & 0x03) !== 0));
}

function jsonObject(token: string, start: number, end: number): Record<string, unknown> | undefined {
  const bytes = Buffer.from(token.slice(start, end), 'base64url');
  if (!isUtf8(bytes)) return undefined;
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export interface LeastOptions {
  issuer: string;
  tenant: string;
  /** The IAM's key set, as served at `/.well-known/jwks.json`. */
  jwks: { keys: ({ kid?: string } & Record<string, unknown>)[] };
  /** The role keys whose policy grants the permission asked for. */
  granting: ReadonlySet<string>;
  /** The clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

/** 200, 401 or 403 for `authorization` asking the route's permission on `VIN=<vin>`. */
export function createLeastVerifier(options: LeastOptions): (authorization: string | undefined, vin: string) => 200 | 401 | 403 {
  const keys = new Map<string, KeyObject>();
  for (const jwk of options.jwks.keys) if (typeof jwk.kid === 'string') keys.set(jwk.kid, createPublicKey({ key: jwk as never, format: 'jwk' }));
  const headers = new Map<string, KeyObject>();
  const { issuer, tenant, granting, now: clock = Date.now } = options;
  return (authorization, vin) => {
    if (authorization === undefined || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return 401;
    const token = authorization.slice(7);
    if (!COMPACT.test(token)) return 401;
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    if (!canonical(token, 0, first) || !canonical(token, first + 1, second) || !canonical(token, second + 1, token.length)) return 401;
    const headerText = token.slice(0, first);
    let key = headers.get(headerText);
    if (key === undefined) {
      const header = jsonObject(token, 0, first);
      if (header === undefined || header.alg !== 'RS256' || typeof header.kid !== 'string' || Object.hasOwn(header, 'crit')) return 401;
      if (Object.hasOwn(header, 'b64') && header.b64 !== true) return 401;
      if (header.cty !== 't1') return 401;
      key = keys.get(header.kid);
      if (key === undefined) return 401;
      if (headers.size < 32) headers.set(headerText, key);
    }
    const payload = jsonObject(token, first + 1, second);
    if (payload === undefined) return 401;
    if (!verify('sha256', Buffer.from(token.slice(0, second), 'latin1'), key, Buffer.from(token.slice(second + 1), 'base64url'))) return 401;
    const { iss, exp, nbf, iat, aud, tid, sub, app, ars } = payload;
    const now = Math.floor(clock() / 1000);
    if (iss !== issuer || !Number.isSafeInteger(exp) || (exp as number) <= now) return 401;
    if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) return 401;
    if (iat !== undefined && typeof iat !== 'number') return 401;
    if (aud !== tenant || (tid !== undefined && tid !== aud)) return 401;
    if (typeof sub !== 'string' || sub.length === 0 || typeof app !== 'string' || app.length === 0) return 401;
    if (!Array.isArray(ars)) return 403;
    const resource = `VIN=${vin}`;
    for (const entry of ars as unknown[]) {
      if (typeof entry !== 'object' || entry === null) continue;
      const { r, c } = entry as { r?: unknown; c?: unknown };
      if (!Array.isArray(c) || !Array.isArray(r) || !(c as unknown[]).includes(resource)) continue;
      for (const role of r as unknown[]) if (typeof role === 'string' && granting.has(role)) return 200;
    }
    return 403;
  };
}

/** The role keys of the example's IAM configuration that grant `permission` in `service`. */
export function grantingRoles(configPath: string, service: string, permission: string): Set<string> {
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as { applications: { roles: { key: string; permissions: Record<string, string[]> }[] }[] };
  const roles = new Set<string>();
  for (const app of config.applications) for (const role of app.roles) if (role.permissions[service]?.includes(permission)) roles.add(role.key);
  return roles;
}
