/**
 * The soak's cast and its oracle: the development IAM's configuration, the kinds of token the
 * clients send, and, for each request, the answers that are acceptable. A seeded PRNG drives every
 * choice, so a seed replays the same sequence of requests (timing still varies from run to run).
 */
import { randomUUID } from 'node:crypto';
import type { DevIam, DevIamConfig } from 'iam-authz-dev';
import { generateSigningKey, signJwt, type SigningKey } from '../../../packages/iam-authz-dev/src/sign-jwt.js';

export const SERVICE = 'vehicle-service';
export const TENANT = 'tenant-1';
export const REFUSED = 'mallory';
const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7'];
const VINS = ['V0', 'V1', 'V2', 'V3', 'V4', 'V5', 'V6', 'V7', 'V8', 'V9'];
const GRANTS: Record<string, readonly string[]> = { DRIVER: ['READ'], OWNER: ['READ', 'WRITE'] };

/** A seeded PRNG picks the traffic (mulberry32, shared with the tests). */
export { prng } from '../../../test/helpers/prng.js';

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

type Ars = { r: string[]; c: string[] }[];

function arsOf(user: string): Ars {
  if (user === REFUSED) return [{ r: ['OWNER'], c: ['VIN=V0', 'VIN=V1'] }];
  const i = Number(user.slice(1));
  return [{ r: ['OWNER'], c: [`VIN=V${i}`] }, { r: ['DRIVER'], c: [`VIN=V${(i + 1) % USERS.length}`, 'VIN=V9'] }];
}

export function soakConfig(): DevIamConfig {
  return {
    idps: [{ key: 'dev', builtin: true }],
    applications: [{
      id: 'app-1',
      serviceDefinitions: [{ key: SERVICE, permissions: ['READ', 'WRITE'] }],
      roles: Object.entries(GRANTS).map(([key, permissions]) => ({ key, permissions: { [SERVICE]: [...permissions] } })),
    }],
    actors: [...USERS, REFUSED].map((user) => ({
      id: user, idp: 'dev', subject: user, account: 'acc-1', application: 'app-1', tenants: { [TENANT]: arsOf(user) },
    })),
  };
}

/** What the spec's check decides for `user` asking `permission` on `VIN=vin`. */
export function expectedStatus(user: string, vin: string, permission: string): 200 | 403 {
  for (const ref of arsOf(user)) {
    if (!ref.c.includes(`VIN=${vin}`)) continue;
    if (ref.r.some((role) => GRANTS[role]?.includes(permission))) return 200;
  }
  return 403;
}

export type TokenKind = 'valid' | 'refused-user' | 'expired' | 'forged' | 'unknown-kid' | 'same-kid-replaced' | 'malformed';
export const KINDS: readonly TokenKind[] = ['valid', 'refused-user', 'expired', 'forged', 'unknown-kid', 'same-kid-replaced', 'malformed'];
const WEIGHTS: readonly [TokenKind, number][] = [
  ['valid', 45], ['refused-user', 15], ['expired', 8], ['forged', 8], ['unknown-kid', 8], ['same-kid-replaced', 8], ['malformed', 12],
];
const TOTAL_WEIGHT = WEIGHTS.reduce((sum, [, w]) => sum + w, 0);

export interface PlannedRequest {
  kind: TokenKind;
  method: 'GET' | 'PUT';
  vin: string;
  /** The `Authorization` header value, or `undefined` to send none. */
  authorization: string | undefined;
  /** Statuses that are correct for this request. */
  acceptable: ReadonlySet<number>;
  /** The answer the spec's check gives when nothing fails; `undefined` for tokens that must never pass. */
  expected: number | undefined;
  user: string | undefined;
}

/**
 * Pre-signed tokens, so the clients measure the service, not RSA signing. Re-minted at every key
 * rotation; `replacement` is the key that the proxy publishes under the IAM's current kid.
 */
export class TokenBook {
  readonly #iam: DevIam;
  readonly #attacker = generateSigningKey();
  readonly replacement: SigningKey = generateSigningKey();
  #currentKid = '';
  #valid = new Map<string, string[]>();
  #expired: string[] = [];
  #forged: string[] = [];
  #replaced = new Map<string, string>();
  readonly #unknownKid: string[] = [];
  /** The signature segment of every valid token handed out: none may appear in an event. */
  readonly signatures = new Set<string>();

  constructor(iam: DevIam) {
    this.#iam = iam;
    for (let i = 0; i < 64; i++) this.#unknownKid.push(this.#sign(this.#attacker, 'u0', { kid: `unknown-${randomUUID()}` }));
    this.remint();
  }

  get currentKid(): string {
    return this.#currentKid;
  }

  /** Signs fresh tokens with the IAM's current key (after construction and after each rotation). */
  remint(): void {
    const probe = this.#iam.mintToken({ actor: 'u0', tenantId: TENANT });
    this.#currentKid = (JSON.parse(Buffer.from(probe.split('.')[0] as string, 'base64url').toString()) as { kid: string }).kid;
    this.#valid = new Map([...USERS, REFUSED].map((user) => [user, [0, 1, 2].map(() => this.#iam.mintToken({ actor: user, tenantId: TENANT }))]));
    for (const tokens of this.#valid.values()) for (const token of tokens) this.signatures.add(token.slice(token.lastIndexOf('.') + 1));
    const past = Math.floor(Date.now() / 1000) - 3600;
    this.#expired = USERS.map((user) => this.#iam.mintToken({ actor: user, tenantId: TENANT, claims: { iat: past - 60, exp: past } }));
    this.#forged = USERS.map((user) => this.#sign(this.#attacker, user, { kid: this.#currentKid }));
    this.#replaced = new Map(USERS.map((user) => [user, this.#sign(this.replacement, user, { kid: this.#currentKid })]));
  }

  #sign(key: SigningKey, user: string, header: Record<string, unknown>): string {
    const iat = Math.floor(Date.now() / 1000);
    const probe = this.#iam.mintToken({ actor: 'u0', tenantId: TENANT });
    const iss = (JSON.parse(Buffer.from(probe.split('.')[1] as string, 'base64url').toString()) as { iss: string }).iss;
    return signJwt(
      { jti: randomUUID(), iss, sub: user, aud: TENANT, tid: TENANT, acc: 'acc-1', app: 'app-1', iat, exp: iat + 3600, ars: arsOf(user) },
      key,
      { alg: 'RS256', cty: 't1', ...header },
    );
  }

  /** One request, chosen by `random`. */
  plan(random: () => number): PlannedRequest {
    let roll = random() * TOTAL_WEIGHT;
    let kind: TokenKind = 'valid';
    for (const [k, w] of WEIGHTS) {
      if ((roll -= w) < 0) { kind = k; break; }
    }
    const method = random() < 0.5 ? 'GET' : 'PUT';
    const permission = method === 'GET' ? 'READ' : 'WRITE';
    const vin = pick(random, VINS);
    const user = kind === 'refused-user' ? REFUSED : pick(random, USERS);
    const expected = expectedStatus(user, vin, permission);
    const bearer = (token: string) => `Bearer ${token}`;
    const refused = new Set([401, 503]);
    switch (kind) {
      case 'valid':
        // 401 is correct while the proxy publishes the replaced key under this token's kid.
        return { kind, method, vin, user, expected, authorization: bearer(pick(random, this.#valid.get(user) as string[])), acceptable: new Set([expected, 401, 503]) };
      case 'refused-user':
        // A cached policy decides without asking the IAM, so the spec's answer is correct too.
        return { kind, method, vin, user, expected, authorization: bearer(pick(random, this.#valid.get(user) as string[])), acceptable: new Set([expected, 401, 503]) };
      case 'same-kid-replaced':
        return { kind, method, vin, user, expected, authorization: bearer(this.#replaced.get(user) as string), acceptable: new Set([expected, 401, 503]) };
      case 'expired':
        return { kind, method, vin, user, expected: undefined, authorization: bearer(pick(random, this.#expired)), acceptable: refused };
      case 'forged':
        return { kind, method, vin, user, expected: undefined, authorization: bearer(pick(random, this.#forged)), acceptable: refused };
      case 'unknown-kid':
        return { kind, method, vin, user, expected: undefined, authorization: bearer(pick(random, this.#unknownKid)), acceptable: refused };
      default:
        return { kind, method, vin, user: undefined, expected: undefined, authorization: this.#malformed(random), acceptable: refused };
    }
  }

  #malformed(random: () => number): string | undefined {
    const valid = pick(random, this.#valid.get('u0') as string[]);
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    const variants: (() => string | undefined)[] = [
      () => undefined,
      () => 'Basic dXNlcjpwYXNz',
      () => 'Bearer ',
      () => `Bearer ${valid.slice(0, Math.floor(random() * valid.length))}`,
      () => `Bearer ${valid.slice(0, -3)}${valid.endsWith('A') ? 'B' : 'A'}AA`,
      () => `Bearer ${valid.split('.').reverse().join('.')}`,
      () => `Bearer ${b64('['.repeat(4000))}.${b64('{}')}.c2ln`,
      () => `Bearer ${b64('{"alg":"none","kid":"x","cty":"t1"}')}.${valid.split('.')[1] ?? ''}.`,
      () => `Bearer ${b64('{"alg":"HS256","kid":"x","cty":"t1"}')}.${valid.split('.')[1] ?? ''}.c2ln`,
      () => `Bearer ${'A'.repeat(9_000)}.${'B'.repeat(10)}.${'C'.repeat(10)}`,
      () => `Bearer ${valid} ${valid}`,
    ];
    return pick(random, variants)();
  }
}
