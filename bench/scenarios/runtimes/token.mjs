/**
 * The key and token every runtime of `npm run bench:runtimes` verifies (verify.mjs on Node, Bun and
 * Deno; workerd.mjs for workerd): RS256, RSA 2048, the claims of bench/lib/fixture.ts.
 */
import { generateSigningKey, signJwt } from 'iam-authz-dev';

export const BASE_URL = 'https://iam.example.com';

/** A new signing key and a token it signed, valid for a day. */
export function benchKeyAndToken() {
  const key = generateSigningKey({ kid: 'bench-key-1' });
  const nowSec = Math.floor(Date.now() / 1000);
  const token = signJwt({
    jti: 'jti-bench', iss: `${BASE_URL}/authentication/v1`, sub: 'actor-alice', aud: 'tenant-1', tid: 'tenant-1',
    exp: nowSec + 24 * 3600, iat: nowSec, acc: 'acc-1', app: 'app-1', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }],
  }, key, { cty: 't1' });
  return { key, token };
}
