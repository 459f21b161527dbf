/**
 * The uncached path decodes a token's bytes into one shared scratch buffer (issue #14 §2). A
 * verification that has to wait — its signature failed and the keys are being refetched — must keep
 * its own bytes: the verifications that run meanwhile reuse the buffer. Were the bytes not copied,
 * the waiting token would be checked against another caller's signed bytes.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer } from '../../src/index.js';
import { generateSigningKey } from 'iam-authz-dev';
import { Clock, json, KEY, mint, startLoopback, type Loopback } from '../helpers/index.js';

const REPLACEMENT = generateSigningKey({ kid: KEY.kid });
const open: (Authorizer | Loopback)[] = [];
afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

describe('the shared scratch buffer', () => {
  test('a token waiting for a key refetch is verified with its own bytes, whatever verifies meanwhile', async () => {
    let keys: object[] = [KEY.jwk];
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    const jwks = await startLoopback(async (_req, res) => {
      await gate;
      json(res, 200, { keys });
    });
    const clock = new Clock();
    const authz = createAuthorizer({ baseUrl: jwks.url, now: clock.now, jwks: { minRefreshIntervalMs: 1_000 }, tokenCache: false });
    open.push(jwks, authz);
    await authz.authenticate(`Bearer ${mint(jwks.url, { jti: 'warm' })}`);

    keys = [REPLACEMENT.jwk];
    gate = new Promise((resolve) => { release = resolve; });
    clock.advance(1_000);
    // Signed by the replacement under the same kid: fails with the held key, waits for the refetch.
    const waiting = authz.authenticate(`Bearer ${mint(jwks.url, { jti: 'waiting' }, {}, REPLACEMENT)}`);
    await expect.poll(() => jwks.requests.length).toBe(2);
    // Meanwhile other callers verify inline with the key still held, through the same buffer.
    for (let i = 0; i < 5; i++) {
      expect((await authz.authenticate(`Bearer ${mint(jwks.url, { jti: `other-${i}` })}`)).claims.jti).toBe(`other-${i}`);
    }
    release();
    expect((await waiting).claims.jti).toBe('waiting');
  });
});
