/**
 * The upstreams of the runtime scenario table (table.mjs), on 127.0.0.1: the development IAM
 * (iam-authz-dev, built: real RSA keys and signatures, JWKS and policy API) and a small node:http
 * fault server — a PS256 JWKS, an upstream that never answers, redirects to a working copy of the
 * IAM's JWKS or policy (following one would grant), and bodies over the `maxBytes` cap, with a
 * declared length and chunked. Plain JavaScript over node:http and node:crypto, so that Node, Bun
 * and Deno host them in the process that runs the table (the workerd driver, on Node, too).
 */
import { constants, generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import { startDevIam } from 'iam-authz-dev';

/** @param {string[]} driver what DRIVER may do in vehicle-service (the policy change edits it) */
export const configWith = (driver) => /** @type {any} */ ({
  idps: [{ key: 'dev', builtin: true }],
  applications: [{
    id: 'app-1',
    serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }],
    roles: [
      { key: 'DRIVER', permissions: { 'vehicle-service': driver } },
      { key: 'OWNER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } },
    ],
  }],
  actors: [
    { id: 'actor-alice', idp: 'dev', subject: 'alice', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }], 'tenant-2': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
    { id: 'actor-bob', idp: 'dev', subject: 'bob', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
  ],
});

/** Over `maxBytes` (64 KiB in app.mjs): 400 keys of about 1 KB. */
const PAD_KEYS = 400;
const padKey = (/** @type {number} */ i) => `{"kty":"RSA","kid":"pad-${i}","n":"${'A'.repeat(1000)}","e":"AQAB"},`;

export async function startUpstreams() {
  const iam = await startDevIam({ config: configWith(['READ']) });
  // A PS256 key of our own (the development IAM signs RS256): its JWKS is served by the fault server.
  const pss = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pssJwks = { keys: [{ ...pss.publicKey.export({ format: 'jwk' }), kid: 'ps-1', alg: 'PS256', use: 'sig' }] };
  /** @type {Set<import('node:http').ServerResponse>} */
  const hanging = new Set();
  let redirectsFollowed = 0;
  const faults = createServer((req, res) => {
    const url = req.url ?? '';
    if (url === '/pss-jwks') { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(pssJwks)); return; }
    if (url === '/hang') { hanging.add(res); return; } // never answers
    if (url === '/redirect-jwks') { res.writeHead(302, { location: `${faultBase}/followed/authentication/v1/.well-known/jwks.json` }).end(); return; }
    if (url === '/redirect-policy') { res.writeHead(302, { location: `${faultBase}/followed/policy/v1/roles` }).end(); return; }
    if (url.startsWith('/followed/')) {
      redirectsFollowed++;
      fetch(`${iam.baseUrl}${url.slice('/followed'.length)}`, { headers: { authorization: req.headers.authorization ?? '' } })
        .then(async (upstream) => { res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(await upstream.text()); }, () => res.destroy());
      return;
    }
    if (url === '/oversized') {
      // The length is declared: a client can refuse it before reading the body.
      const body = `{"keys":[${Array.from({ length: PAD_KEYS }, (_, i) => padKey(i)).join('')}{}]}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }).end(body);
      return;
    }
    if (url === '/oversized-chunked') {
      // Chunked (no content-length): only counting the bytes as they come can stop it.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"keys":[');
      let sent = 0;
      const more = () => { while (sent < PAD_KEYS && res.write(padKey(sent++))); if (sent < PAD_KEYS) res.once('drain', more); else res.end('{}]}'); };
      more();
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((resolve) => { faults.listen(0, '127.0.0.1', () => { resolve(undefined); }); });
  const faultBase = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (faults.address()).port}`;

  return {
    iam,
    faultBase,
    /** Requests that reached a redirect's target (a client that followed it). */
    redirectsFollowed: () => redirectsFollowed,
    /** `token`'s header and claims, signed again with PS256 under the fault server's key. */
    resignPs256(/** @type {string} */ token) {
      const [header = '', payload = ''] = token.split('.');
      const head = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(header, 'base64url').toString()), alg: 'PS256', kid: 'ps-1' })).toString('base64url');
      const input = `${head}.${payload}`;
      const signature = sign('sha256', Buffer.from(input), { key: pss.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
      return `${input}.${signature.toString('base64url')}`;
    },
    async close() {
      for (const res of hanging) res.destroy();
      faults.closeAllConnections();
      await new Promise((resolve) => { faults.close(() => { resolve(undefined); }); });
      await iam.close();
    },
  };
}
