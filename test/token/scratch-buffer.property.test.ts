/**
 * The shared scratch buffer under any mix of tokens (issue #14 §2): tokens of random sizes —
 * some larger than the buffer, so it grows between two verifications — and random claims, verified
 * with the cache off and all in flight at once. Every identity must be exactly its own token's
 * claims; a token whose signature belongs to another token's bytes must be refused.
 */
import fc from 'fast-check';
import { decodeJwt } from 'jose';
import { beforeAll, expect, test } from 'vitest';
import type { Authorizer } from '../../src/index.js';
import { useIam } from '../helpers/index.js';

const iam = useIam();
let authz: Authorizer;
beforeAll(async () => {
  authz = iam.authorizer({ tokenCache: false, maxTokenBytes: 65_536 });
  await authz.ready();
});

const arsArbitrary = fc.array(fc.record({ r: fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 3 }), c: fc.array(fc.string({ minLength: 1, maxLength: 40 }).map((v) => `VIN=${v}`), { maxLength: 4 }) }), { maxLength: 200 });

test('every identity is its own token\'s claims, whatever the sizes and the order (property)', async () => {
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(fc.string({ maxLength: 30 }), arsArbitrary), { minLength: 1, maxLength: 8 }), async (specs) => {
    const tokens = specs.map(([jti, ars], i) => iam.token({ jti: `${i}:${jti}`, ars }));
    // A forgery: the first token's header and payload with the last token's signature.
    const first = tokens[0] as string;
    const last = tokens[tokens.length - 1] as string;
    const forged = `${first.slice(0, first.lastIndexOf('.'))}${last.slice(last.lastIndexOf('.'))}`;
    const results = await Promise.all([...tokens, forged].map((t) => authz.authenticate(`Bearer ${t}`).then((id) => id.claims.jti, () => 'refused')));
    expect(results.slice(0, -1)).toStrictEqual(tokens.map((t) => decodeJwt(t).jti));
    expect(results.at(-1)).toBe(first === last ? decodeJwt(first).jti : 'refused');
  }), { numRuns: 40 });
});
