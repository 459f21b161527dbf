/**
 * The uncached path decodes a token's bytes into one shared scratch buffer (issue #14 §2). A
 * verification that has to wait — its signature failed and the keys are being refetched — must keep
 * its own bytes: the verifications that run meanwhile reuse the buffer. Were the bytes not copied,
 * the waiting token would be checked against another caller's signed bytes.
 */
import { describe, expect, test } from 'vitest';
import { generateSigningKey } from 'iam-authz-dev';
import { KEY, useIam } from '../helpers/index.js';

const REPLACEMENT = generateSigningKey({ kid: KEY.kid });
const iam = useIam();

describe('the shared scratch buffer', () => {
  test('a token waiting for a key refetch is verified with its own bytes, whatever verifies meanwhile', async () => {
    let release: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    const serve = iam.handler;
    iam.handler = async (req, res) => {
      await gate;
      await serve(req, res);
    };
    const authz = iam.authorizer({ jwks: { minRefreshIntervalMs: 1_000 }, tokenCache: false });
    await authz.authenticate(iam.bearer({ jti: 'warm' }));

    iam.keys = [REPLACEMENT.jwk];
    gate = new Promise((resolve) => { release = resolve; });
    iam.clock.advance(1_000);
    // Signed by the replacement under the same kid: fails with the held key, waits for the refetch.
    const waiting = authz.authenticate(iam.bearer({ jti: 'waiting' }, {}, REPLACEMENT));
    await expect.poll(() => iam.requests.length).toBe(2);
    // Meanwhile other callers verify inline with the key still held, through the same buffer.
    for (let i = 0; i < 5; i++) {
      expect((await authz.authenticate(iam.bearer({ jti: `other-${i}` }))).claims.jti).toBe(`other-${i}`);
    }
    release();
    expect((await waiting).claims.jti).toBe('waiting');
  });
});
