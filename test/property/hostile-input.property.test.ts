/**
 * Property tests over the public API (issue #9 §3): for arbitrary strings, bytes, JSON shapes and
 * mutated real tokens, `authenticate` settles — never hangs — with an identity or an
 * `IamAuthzError` (401, or 503 for key trouble), never another error type; `authorize` on any
 * identity with any resource settles with a decision or an `IamAuthzError`; and through each
 * adapter (Express 5, Express 4, Koa, Fastify on loopback, against the development IAM) the answer
 * to any `Authorization` header and any resource is 200/401/403/503, never a 500.
 */
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer, IamAuthzError, type Authorizer } from '../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { FRAMEWORKS, startApp, type RunningApp } from '../adapters/apps.js';

const CONFIG = fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url));
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** What a hostile caller splices into a token: its own alphabet, separators, padding, noise. */
const SPLICE = [...B64URL.split(''), '.', '=', '+', '/', ' ', '\t', '%', '"', '\\', 'é', '\u0000', '\uffff'];

let iam: DevIam;
let authorizer: Authorizer;
let valid: string;

beforeAll(async () => {
  iam = await startDevIam({ config: CONFIG, console: false });
  authorizer = createAuthorizer({ baseUrl: iam.baseUrl, maxTokenBytes: 64 * 1024 });
  valid = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => {
  await authorizer.close();
  await iam.close();
});

/** A real token, then changed the way an attacker would: characters replaced, inserted, removed, segments swapped or cut. */
const mutatedToken = fc.record({
  edits: fc.array(fc.record({ at: fc.nat(), kind: fc.constantFrom('replace', 'insert', 'delete'), ch: fc.constantFrom(...SPLICE) }), { minLength: 1, maxLength: 4 }),
  shape: fc.constantFrom('as-is', 'swap-header-payload', 'drop-signature', 'double-dot', 'extra-segment', 'truncate'),
}).map(({ edits, shape }) => {
  let t = valid;
  const [h, p, s] = t.split('.') as [string, string, string];
  if (shape === 'swap-header-payload') t = `${p}.${h}.${s}`;
  if (shape === 'drop-signature') t = `${h}.${p}.`;
  if (shape === 'double-dot') t = `${h}..${p}.${s}`;
  if (shape === 'extra-segment') t = `${t}.${s}`;
  if (shape === 'truncate') t = t.slice(0, t.length >> 1);
  for (const { at, kind, ch } of edits) {
    const i = at % (t.length + 1);
    t = kind === 'insert' ? t.slice(0, i) + ch + t.slice(i) : kind === 'replace' ? t.slice(0, i) + ch + t.slice(i + 1) : t.slice(0, i) + t.slice(i + 1);
  }
  return t;
});

/**
 * Signed by the IAM's real key, so the signature verifies and the claims and header are what is
 * tested (`alg` stays RS256: the signer signs what it names; algorithm confusion has its own tests).
 */
const signedOddClaims = fc.record({
  claims: fc.dictionary(fc.constantFrom('iss', 'sub', 'aud', 'tid', 'app', 'exp', 'nbf', 'iat', 'ars', 'acc', 'jti', '__proto__', 'constructor', 'x'), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 5 }),
  header: fc.dictionary(fc.constantFrom('kid', 'cty', 'crit', 'b64', 'jku', 'x5u', 'typ'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
}).map(({ claims, header }) => iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims, header }));

/** Any `Authorization` value at all, for the direct API. */
const anyAuthorization = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ maxLength: 300 }).map((s) => `Bearer ${s}`),
  fc.uint8Array({ maxLength: 300 }).map((b) => `Bearer ${Buffer.from(b).toString('base64url')}.${Buffer.from(b).toString('base64url')}.${Buffer.from(b).toString('base64url')}`),
  fc.tuple(fc.jsonValue(), fc.jsonValue()).map(([h, p]) => `Bearer ${Buffer.from(JSON.stringify(h)).toString('base64url')}.${Buffer.from(JSON.stringify(p)).toString('base64url')}.c2ln`),
  mutatedToken.map((t) => `Bearer ${t}`),
  signedOddClaims.map((t) => `Bearer ${t}`),
  fc.constant(undefined),
);

/** Header values an HTTP client can send (visible ASCII, space, tab). */
const headerSafe = (s: string): string => s.replace(/[^\t\x20-\x7e]/g, '');

const TIMEOUT = Symbol('timeout');
function settle(promise: Promise<unknown>, ms = 5_000): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMEOUT>((resolve) => { timer = setTimeout(() => { resolve(TIMEOUT); }, ms); });
  return Promise.race([promise.then((v) => v, (e: unknown) => e), timeout]).finally(() => { clearTimeout(timer); });
}

function expectTypedFailureOrIdentity(outcome: unknown): void {
  expect(outcome).not.toBe(TIMEOUT);
  if (outcome instanceof Error) {
    expect(outcome, `${outcome.name}: ${outcome.message}`).toBeInstanceOf(IamAuthzError);
    expect([401, 503]).toContain((outcome as { status?: unknown }).status);
  } else {
    expect(outcome).toHaveProperty('claims');
  }
}

describe('authenticate and authorize on arbitrary input', () => {
  test('authenticate settles with an identity or a 401/503 IamAuthzError', async () => {
    await fc.assert(
      fc.asyncProperty(anyAuthorization, async (authorization) => {
        expectTypedFailureOrIdentity(await settle(authorizer.authenticate(authorization)));
      }),
      { numRuns: 400 },
    );
  });

  test('authorize on a (possibly odd) verified identity with any resource settles with a decision or an IamAuthzError', async () => {
    const resource = fc.oneof(
      fc.record({ type: fc.string({ maxLength: 20 }), value: fc.string({ unit: 'binary', maxLength: 40 }) }),
      fc.record({ node: fc.string({ unit: 'binary', maxLength: 40 }) }),
      fc.anything() as fc.Arbitrary<never>,
    );
    await fc.assert(
      fc.asyncProperty(signedOddClaims, resource, fc.string({ maxLength: 12 }), async (token, res, permission) => {
        const identity = await settle(authorizer.authenticate(`Bearer ${token}`));
        if (identity instanceof Error) return; // refused: covered above
        const outcome = await settle(authorizer.authorize(identity as never, { service: 'vehicle-service', permission: permission || 'READ', resource: res }));
        expect(outcome).not.toBe(TIMEOUT);
        if (outcome instanceof Error) expect(outcome, outcome.message).toBeInstanceOf(IamAuthzError);
        else expect(typeof (outcome as { granted: unknown }).granted).toBe('boolean');
      }),
      { numRuns: 150 },
    );
  });
});

describe.each(FRAMEWORKS)('%s guards on arbitrary requests', (framework) => {
  let app: RunningApp;
  beforeAll(async () => { app = await startApp(framework, authorizer); });
  afterAll(async () => { await app.close(); });

  test('any Authorization header and any resource: 200, 401, 403 or 503 — never 500', async () => {
    const authorization = fc.oneof(
      fc.string({ maxLength: 200 }).map(headerSafe),
      mutatedToken.map((t) => `Bearer ${headerSafe(t)}`),
      signedOddClaims.map((t) => `Bearer ${t}`),
      fc.constant(`Bearer ${valid}`),
      fc.constant(undefined),
    );
    const route = fc.constantFrom('/vehicle/', '/async/', '/node/', '/me');
    await fc.assert(
      fc.asyncProperty(authorization, route, fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }), fc.constantFrom('GET', 'PUT'), async (auth, path, resource, method) => {
        const url = `${app.url}${path}${path === '/me' ? '' : encodeURIComponent(resource)}`;
        const res = await fetch(url, { method: path === '/vehicle/' ? method : 'GET', headers: auth === undefined ? {} : { authorization: auth } });
        await res.arrayBuffer();
        expect([200, 401, 403, 503], `${method} ${path} → ${res.status}`).toContain(res.status);
      }),
      { numRuns: 60 },
    );
  });
});
