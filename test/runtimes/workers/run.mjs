// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- as smoke.mjs: run as is by Node 24, not compiled
// @ts-nocheck -- a plain Node 24 script (wrangler and miniflare need Node >= 22); .ci/workers runs it.
/* global process, setTimeout, clearTimeout, Headers, Buffer, fetch */
/**
 * The Cloudflare Workers suite: worker.mjs, bundled by wrangler (its default conditions pick the
 * package's files through the exports map) and run in workerd by miniflare, answers the scenario
 * table — valid, expired, forged, wrong tenant, denied, no token, IAM down, a hanging, redirecting
 * or oversized JWKS or policy API, a key rotation and a policy change — through the fetch and Hono
 * adapters, with the authorizer made at module scope and in the first request. The IAM is the
 * development IAM (iam-authz-dev, built) (node:http on 127.0.0.1, real RSA keys and signatures); the faults
 * come from a small node:http server here.
 *
 * Usage: node run.mjs <folder holding node_modules/wrangler and node_modules/miniflare>
 * Prints one line per check and `N passed, N failed`; exits 1 on any failure.
 */
import { spawnSync } from 'node:child_process';
import { constants, generateKeyPairSync, sign } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { reporter } from '../report.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const tools = process.argv[2];
if (!tools) throw new Error('usage: node run.mjs <folder with wrangler and miniflare installed>');
const { startDevIam } = await import('iam-authz-dev');
const toolRequire = createRequire(join(tools, 'node_modules/'));
const { Miniflare } = await import(pathToFileURL(toolRequire.resolve('miniflare')).href);

const { check, done } = reporter();

// ---- The IAM and the fault server, on loopback.
const roles = (driver) => [
  { key: 'DRIVER', permissions: { 'vehicle-service': driver } },
  { key: 'OWNER', permissions: { 'vehicle-service': ['READ', 'WRITE'] } },
];
const configWith = (driver) => ({
  idps: [{ key: 'dev', builtin: true }],
  applications: [{ id: 'app-1', serviceDefinitions: [{ key: 'vehicle-service', permissions: ['READ', 'WRITE'] }], roles: roles(driver) }],
  actors: [
    { id: 'actor-alice', idp: 'dev', subject: 'alice', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['DRIVER'], c: ['VIN=WVW1'] }], 'tenant-2': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
    { id: 'actor-bob', idp: 'dev', subject: 'bob', account: 'acc-1', application: 'app-1', tenants: { 'tenant-1': [{ r: ['OWNER'], c: ['VIN=WVW1'] }] } },
  ],
});
const iam = await startDevIam({ config: configWith(['READ']) });
// A PS256 key of our own (the development IAM signs RS256): its JWKS is served by the fault server.
const pss = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pssJwks = { keys: [{ ...pss.publicKey.export({ format: 'jwk' }), kid: 'ps-1', alg: 'PS256', use: 'sig' }] };
/** `token`'s header and claims, signed again with PS256 under the key above. */
function resignPs256(token) {
  const [header, payload] = token.split('.');
  const head = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(header, 'base64url').toString()), alg: 'PS256', kid: 'ps-1' })).toString('base64url');
  const input = `${head}.${payload}`;
  const signature = sign('sha256', Buffer.from(input), { key: pss.privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
  return `${input}.${signature.toString('base64url')}`;
}
const hanging = new Set();
let redirectsFollowed = 0;
const faults = createServer((req, res) => {
  if (req.url === '/pss-jwks') { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(pssJwks)); return; }
  if (req.url === '/hang') { hanging.add(res); return; } // never answers
  // Redirects to a working copy of the IAM's JWKS or policy: following one would grant.
  if (req.url === '/redirect-jwks') { res.writeHead(302, { location: `${faultBase}/followed/authentication/v1/.well-known/jwks.json` }).end(); return; }
  if (req.url === '/redirect-policy') { res.writeHead(302, { location: `${faultBase}/followed/policy/v1/roles` }).end(); return; }
  if (req.url.startsWith('/followed/')) {
    redirectsFollowed++;
    fetch(`${iam.baseUrl}${req.url.slice('/followed'.length)}`, { headers: { authorization: req.headers.authorization ?? '' } })
      .then(async (upstream) => { res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(await upstream.text()); }, () => res.destroy());
    return;
  }
  if (req.url === '/huge') {
    // Chunked (no content-length): only counting the bytes as they come can stop it.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"keys":[');
    let sent = 0;
    const more = () => { while (sent < 400 && res.write(`{"kty":"RSA","kid":"pad-${sent++}","n":"${'A'.repeat(1000)}","e":"AQAB"},`)); if (sent < 400) res.once('drain', more); else res.end('{}]}'); };
    more();
    return;
  }
  res.writeHead(404).end();
});
await new Promise((resolve) => { faults.listen(0, '127.0.0.1', resolve); });
const faultBase = `http://127.0.0.1:${faults.address().port}`;

// ---- Bundle: a scratch folder where `iam-authz` resolves by name to this package (its exports map).
const work = mkdtempSync(join(tmpdir(), 'iam-authz-workers-'));
let mf;
try {
  mkdirSync(join(work, 'node_modules'));
  symlinkSync(root, join(work, 'node_modules/iam-authz'), 'dir');
  symlinkSync(realpathSync(join(root, 'node_modules/hono')), join(work, 'node_modules/hono'), 'dir');
  cpSync(join(here, 'worker.mjs'), join(work, 'worker.mjs'));
  cpSync(join(here, 'wrangler.jsonc'), join(work, 'wrangler.jsonc'));
  const bundled = spawnSync(process.execPath, [toolRequire.resolve('wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', join(work, 'out'),
    '--define', `IAM_BASE_URL:${JSON.stringify(iam.baseUrl)}`, '--define', `FAULT_BASE_URL:${JSON.stringify(faultBase)}`], {
    cwd: work, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1' },
  });
  check('wrangler bundles the Worker', bundled.status === 0, `${bundled.stdout}\n${bundled.stderr}`);
  if (bundled.status !== 0) throw new Error('no bundle');

  // modulesRoot: module names are paths relative to it, and workerd refuses a name with '..'.
  mf = new Miniflare({ modules: true, modulesRoot: join(work, 'out'), scriptPath: join(work, 'out/worker.js'), compatibilityDate: '2026-04-01', compatibilityFlags: ['nodejs_compat'] });
  await runScenarios();
} catch (error) {
  check('the suite ran to its end', false, `${error?.name}: ${error?.message}`);
} finally {
  await mf?.dispose().catch(() => undefined);
  for (const res of hanging) res.destroy();
  faults.closeAllConnections();
  await new Promise((resolve) => { faults.close(resolve); });
  await iam.close();
  rmSync(work, { recursive: true, force: true });
}
process.exit(done() ? 0 : 1);

// ---- The scenario table.
async function call(path, token) {
  // A hang is a failure, not a stuck suite: every answer must come within 10 s.
  let timer;
  const deadline = new Promise((resolve) => { timer = setTimeout(resolve, 10_000, { status: 'no answer within 10 s', headers: new Headers(), body: undefined }); });
  const answer = (async () => {
    const res = await mf.dispatchFetch(`http://worker.test${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const text = await res.text();
    let body;
    try { body = JSON.parse(text); } catch { body = text; }
    return { status: res.status, headers: res.headers, body };
  })();
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks status, headers and body of one answer. */
function expect(name, got, status, code) {
  const detail = `got ${got.status} ${JSON.stringify(got.body).slice(0, 200)}`;
  if (status === 200) {
    check(name, got.status === 200 && got.body?.ok === true && typeof got.body.sub === 'string', detail);
    return;
  }
  const problem = (got.headers.get('content-type') ?? '').startsWith('application/problem+json');
  const challenge = got.headers.get('www-authenticate') ?? '';
  const headerOk = status === 503 ? /^\d+$/.test(got.headers.get('retry-after') ?? '')
    : status === 403 ? challenge.includes('error="insufficient_scope"')
    : code === 'ERR_TOKEN_MISSING' ? challenge.startsWith('Bearer ') : challenge.includes('error="invalid_token"');
  const codeOk = code === undefined || got.body?.code === code;
  check(name, got.status === status && problem && headerOk && codeOk && got.body?.status === status, `${detail} www-authenticate=${challenge} retry-after=${got.headers.get('retry-after')}`);
}

async function runScenarios() {
  const now = Math.floor(Date.now() / 1000);
  const alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  const bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
  const otherTenant = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-2' });
  const expired = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1', claims: { exp: now - 3600, iat: now - 7200 } });
  const forged = `${bob.slice(0, bob.lastIndexOf('.'))}.${'A'.repeat(342)}`;
  const combos = ['global', 'lazy'].flatMap((style) => ['fetch', 'hono'].map((adapter) => `${style}/${adapter}`));

  for (const combo of combos) {
    // Cold: the first two requests arrive together; one fetches the JWKS and the policy, the other waits for it.
    const pair = await Promise.all([call(`/${combo}/iam/READ/WVW1`, alice), call(`/${combo}/iam/READ/WVW1`, alice)]);
    pair.forEach((got, i) => { expect(`${combo}: concurrent valid request ${i + 1} → 200`, got, 200); });
    expect(`${combo}: owner WRITE → 200`, await call(`/${combo}/iam/WRITE/WVW1`, bob), 200);
    expect(`${combo}: no token → 401`, await call(`/${combo}/iam/READ/WVW1`), 401, 'ERR_TOKEN_MISSING');
    expect(`${combo}: expired → 401`, await call(`/${combo}/iam/READ/WVW1`, expired), 401, 'ERR_TOKEN_EXPIRED');
    expect(`${combo}: forged signature → 401`, await call(`/${combo}/iam/READ/WVW1`, forged), 401, 'ERR_TOKEN_INVALID');
    expect(`${combo}: wrong tenant → 401`, await call(`/${combo}/iam/READ/WVW1`, otherTenant), 401);
    expect(`${combo}: denied (DRIVER WRITE) → 403`, await call(`/${combo}/iam/WRITE/WVW1`, alice), 403, 'ERR_PERMISSION_DENIED');
    expect(`${combo}: IAM down → 503`, await call(`/${combo}/down/READ/WVW1`, alice), 503, 'ERR_JWKS_UNAVAILABLE');
    const ps256 = resignPs256(alice);
    expect(`${combo}: PS256 token → 200`, await call(`/${combo}/pss/AUTH/WVW1`, ps256), 200);
    expect(`${combo}: forged PS256 signature → 401`, await call(`/${combo}/pss/AUTH/WVW1`, `${ps256.slice(0, ps256.lastIndexOf('.'))}.${'A'.repeat(342)}`), 401, 'ERR_TOKEN_INVALID');
    for (const [profile, code] of [['jwks', 'ERR_JWKS_UNAVAILABLE'], ['policy', 'ERR_POLICY_UNAVAILABLE']]) {
      for (const fault of ['hang', 'redirect', 'huge']) {
        expect(`${combo}: ${fault} ${profile} upstream → 503`, await call(`/${combo}/${profile}-${fault}/READ/WVW1`, alice), 503, code);
      }
    }
  }

  check('no redirect was followed (the redirect targets were never asked)', redirectsFollowed === 0, `${redirectsFollowed} requests`);

  // Key rotation: a token signed with a key whose kid the Worker has never seen.
  iam.rotateKeys();
  const rotated = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
  for (const combo of combos) expect(`${combo}: token of a rotated key (new kid) → 200`, await call(`/${combo}/iam/WRITE/WVW1`, rotated), 200);

  // Policy change, granting: DRIVER may now WRITE (the denial refetches the policy).
  iam.setConfig(configWith(['READ', 'WRITE']));
  await sleep(100);
  for (const combo of combos) expect(`${combo}: policy change grants DRIVER WRITE → 200`, await call(`/${combo}/iam/WRITE/WVW1`, alice), 200);

  // Policy change, revoking: DRIVER loses READ. Only revalidation (ttlMs 300 ms) can notice it;
  // maxStaleMs is long, so waiting out the stale window cannot be what picks it up.
  iam.setConfig(configWith(['WRITE']));
  for (const combo of combos) {
    let got;
    for (let attempt = 0; attempt < 20; attempt++) {
      await sleep(200);
      got = await call(`/${combo}/iam/READ/WVW1`, alice);
      if (got.status !== 200) break;
    }
    expect(`${combo}: policy change revokes DRIVER READ → 403 in a later request`, got, 403, 'ERR_PERMISSION_DENIED');
  }
}

function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}
