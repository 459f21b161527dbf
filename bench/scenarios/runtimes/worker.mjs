// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- bundled as is by wrangler, not compiled
// @ts-nocheck -- bundled by wrangler for workerd; workerd.mjs drives it.
/* global BENCH_JWK, BENCH_TOKEN, crypto, URL, Response -- workerd's globals; the first two from wrangler's --define */
/**
 * The Worker of the workerd bench: `GET /bench?case=<a|b|c>&n=<N>` runs N verifications of one case
 * of verify.mjs, awaited one by one, and answers `{ ok }` (ok: every one verified); `n=0` answers at
 * once (the driver's round trip). workerd's clock stands still while code runs, so workerd.mjs
 * times the requests from outside. BENCH_JWK (the public JWK) and BENCH_TOKEN are set by wrangler's
 * --define at bundle time.
 */
import { createPublicKey, verify } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { createAuthorizer } from 'iam-authz';

const BASE_URL = 'https://iam.example.com';
const authorizer = createAuthorizer({ baseUrl: BASE_URL, localJwks: { keys: [BENCH_JWK] }, tokenCache: false });
const token = String(BENCH_TOKEN);
const authorization = `Bearer ${token}`;
const lastDot = token.lastIndexOf('.');
const signingInput = Buffer.from(token.slice(0, lastDot), 'latin1');
const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
const publicKey = createPublicKey({ key: BENCH_JWK, format: 'jwk' });
let webKey;

const cases = {
  a: async () => (await authorizer.authenticate(authorization)).claims.sub === 'actor-alice',
  b: () => verify('sha256', signingInput, publicKey, signature),
  c: () => crypto.subtle.verify('RSASSA-PKCS1-v1_5', webKey, signature, signingInput),
};

export default {
  /** @param {Request} request @returns {Promise<Response>} */
  async fetch(request) {
    const url = new URL(request.url);
    const fn = cases[url.searchParams.get('case')];
    const n = Number(url.searchParams.get('n') ?? 0);
    if (!fn || !Number.isInteger(n) || n < 0) return new Response('bad request', { status: 400 });
    webKey ??= await crypto.subtle.importKey('jwk', BENCH_JWK, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
    let ok = true;
    for (let i = 0; i < n; i++) ok = (await fn()) === true && ok;
    return Response.json({ ok });
  },
};
