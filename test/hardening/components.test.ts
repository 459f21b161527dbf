/**
 * The authorizer is two components, each resolved from its own options and built alone: an
 * authenticator (token → identity: keys, verification, token cache) that has no policy, and a
 * decider (identity + query → decision: policy, engine, log) that has no keys. `createAuthorizer`
 * only composes them, and every import points down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveAuthenticatorOptions } from '../../src/authenticator/options.js';
import { createAuthenticator, type Authenticator } from '../../src/authenticator/authenticator.js';
import { resolveDeciderOptions } from '../../src/decider/options.js';
import { createDecider } from '../../src/decider/decider.js';
import { resolveSharedOptions, type SharedRuntime } from '../../src/shared-options.js';
import { KEY, useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();
let shared: SharedRuntime;
let authenticator: Authenticator;
const dispatcher = new Agent();

beforeAll(() => {
  shared = { ...resolveSharedOptions({ baseUrl: iam.url, now: iam.clock.now }), dispatcher };
  authenticator = createAuthenticator(resolveAuthenticatorOptions({ localJwks: { keys: [KEY.jwk] }, applications: ['app-1'] }, shared), shared);
});
afterAll(async () => {
  authenticator.close();
  await dispatcher.close();
});

describe('each component is built from its own options', () => {
  test('the authenticator verifies a real token with no policy: it never calls the policy API', async () => {
    const identity = await authenticator.authenticate(iam.bearer());
    expect(identity.claims.sub).toBe('actor-alice');
    await expect(authenticator.authenticate(iam.bearer({ app: 'other' }))).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID', status: 401 });
    await expect(authenticator.authenticate(iam.bearer({ iss: 'https://elsewhere' }))).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    expect(iam.requestsTo('policy')).toHaveLength(0);
  });

  test('the decider decides for an identity with no keys, every entry point through the policy', async () => {
    const decider = createDecider(resolveDeciderOptions({ policy: { minRefreshIntervalMs: 0 } }, shared), shared);
    try {
      const identity = await authenticator.authenticate(iam.bearer());
      const resource = { type: 'VIN', value: 'WVW1' };
      expect((await decider.authorize(identity, { service: VEHICLE, permission: 'READ', resource })).granted).toBe(true);
      expect((await decider.authorize(identity, { service: VEHICLE, permission: 'WRITE', resource })).reason).toBe('PERMISSION_NOT_GRANTED');
      expect(await decider.accessible(identity, { service: VEHICLE, permission: 'READ', type: 'VIN' })).toStrictEqual(['WVW1']);
      expect(await decider.permissionsFor(identity, { service: VEHICLE, resource })).toStrictEqual([{ permission: 'READ', roles: ['DRIVER'] }]);
      expect(iam.requestsTo('policy').length).toBeGreaterThan(0);
      decider.close();
      await expect(decider.authorize(identity, { service: VEHICLE, permission: 'READ', resource })).rejects.toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED' });
    } finally {
      decider.close();
    }
  });

  test('each validates only its own options, with the message users know', () => {
    const base = resolveSharedOptions({ baseUrl: 'https://iam.example.test' });
    expect(() => resolveAuthenticatorOptions({ clockToleranceSec: -1 }, base)).toThrow(/^createAuthorizer: "clockToleranceSec"/);
    expect(() => resolveDeciderOptions({ clockToleranceSec: -1 } as never, base)).not.toThrow();
    expect(() => resolveDeciderOptions({ decisionSampleRate: 2 }, base)).toThrow(/^createAuthorizer: "decisionSampleRate"/);
    expect(() => resolveAuthenticatorOptions({ decisionSampleRate: 2 } as never, base)).not.toThrow();
  });
});

/** The relative modules a source file imports. */
function importsOf(file: string): string[] {
  const text = readFileSync(new URL(`../../src/${file}`, import.meta.url), 'utf8');
  return [...text.matchAll(/^import [^;]*? from '(\.[^']+)';$/gm)].map((m) => m[1] as string);
}

/** The source files of a component folder, as paths under src/. */
function filesOf(folder: string): string[] {
  return readdirSync(new URL(`../../src/${folder}/`, import.meta.url)).filter((f) => f.endsWith('.ts')).map((f) => `${folder}/${f}`);
}

/** What no file of a component imports: the composition above it, or the other component and its side. */
const FORBIDDEN = {
  authenticator: /^\.\.\/(authorizer|options|decider\/.*|policy\/.*|engine\/.*)\.js$/,
  decider: /^\.\.\/(authorizer|options|authenticator\/.*|token\/.*|jwks\/.*)\.js$/,
};

describe('the arrows point one way', () => {
  test('authorizer.ts composes: it imports no verification, key, policy or engine module, and is short', () => {
    const imports = importsOf('authorizer.ts');
    expect(imports).toContain('./authenticator/authenticator.js');
    expect(imports).toContain('./decider/decider.js');
    expect(imports.filter((i) => /^\.\/(token|jwks|policy|engine)\//.test(i))).toStrictEqual([]);
    const lines = readFileSync(new URL('../../src/authorizer.ts', import.meta.url), 'utf8').split('\n').length;
    expect(lines).toBeLessThanOrEqual(130);
  });

  test.each<[string, RegExp]>([
    ...(['authenticator', 'decider'] as const).flatMap((folder) => filesOf(folder).map((file): [string, RegExp] => [file, FORBIDDEN[folder]])),
    ['shared-options.ts', /^\.\/(authorizer|options|authenticator\/.*|decider\/.*)\.js$/],
  ])('%s imports nothing above it or beside it', (file, forbidden) => {
    expect(importsOf(file).filter((i) => forbidden.test(i))).toStrictEqual([]);
  });

  test.each(['authenticator', 'decider'])('%s/options.ts does not import its component', (folder) => {
    expect(importsOf(`${folder}/options.ts`)).not.toContain(`./${folder}.js`);
  });
});
