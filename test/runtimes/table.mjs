/**
 * The runtime scenario table, one definition for every runtime: valid (two cold requests at once),
 * owner, no token, expired, forged, wrong tenant, denied, IAM down, PS256 and a forged PS256, a
 * hanging, redirecting or oversized (declared and chunked) JWKS or policy API, a key rotation (a new
 * kid) and a policy change (granting, then revoking), through the fetch adapter and Hono, with the
 * authorizers made at once and in the first request (app.mjs). Each row checks status, headers and
 * body, and its answer is recorded (minus transport headers) so that compare.mjs can hold every
 * runtime's answers against Node's. suite.mjs runs it in-process on Node, Bun and Deno;
 * workers/run.mjs runs it in workerd.
 */
import { configWith } from './upstreams.mjs';

/**
 * Headers that belong to the transport, not to the answer: left out of the recorded answers.
 * `mf-content-encoding` is how miniflare's dispatchFetch reports that workerd gzipped a body.
 */
const TRANSPORT_HEADERS = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'content-encoding', 'mf-content-encoding']);

/**
 * @typedef {{ status: number | string, headers: Record<string, string>, body: unknown }} Answer
 * @typedef {(url: string, init: { headers: Record<string, string> }) => Promise<Response>} Dispatch
 * @typedef {(name: string, ok: boolean, detail?: string) => void} Check
 */

/** @param {Response} response @returns {Promise<Answer>} */
async function answerOf(response) {
  const text = await response.text();
  /** @type {unknown} */
  let body;
  try { body = JSON.parse(text); } catch { body = text; }
  /** @type {Record<string, string>} */
  const headers = {};
  for (const [name, value] of [...response.headers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
  }
  return { status: response.status, headers, body };
}

/** @param {number} ms */
export function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}

/**
 * Runs every row. Returns the answers by row name.
 * @param {{ dispatch: Dispatch, upstreams: Awaited<ReturnType<typeof import('./upstreams.mjs').startUpstreams>>, check: Check }} options
 * @returns {Promise<Record<string, Answer>>}
 */
export async function runTable({ dispatch, upstreams, check }) {
  const { iam } = upstreams;
  /** @type {Record<string, Answer>} */
  const answers = {};

  /** @param {string} path @param {string} [token] @returns {Promise<Answer>} */
  async function call(path, token) {
    // A hang is a failure, not a stuck suite: every answer must come within 10 s.
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    /** @type {Promise<Answer>} */
    const deadline = new Promise((resolve) => { timer = setTimeout(resolve, 10_000, { status: 'no answer within 10 s', headers: {}, body: undefined }); });
    try {
      return await Promise.race([dispatch(`http://worker.test${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(answerOf), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Checks status, headers and body of one answer, and records it.
   * @param {string} name @param {Answer} got @param {number} status @param {string} [code]
   */
  function expect(name, got, status, code) {
    answers[name] = got;
    const body = /** @type {any} */ (got.body);
    const detail = `got ${got.status} ${JSON.stringify(body).slice(0, 200)}`;
    if (status === 200) {
      check(name, got.status === 200 && body?.ok === true && typeof body.sub === 'string', detail);
      return;
    }
    const problem = (got.headers['content-type'] ?? '').startsWith('application/problem+json');
    const challenge = got.headers['www-authenticate'] ?? '';
    const headerOk = status === 503 ? /^\d+$/.test(got.headers['retry-after'] ?? '')
      : status === 403 ? challenge.includes('error="insufficient_scope"')
      : code === 'ERR_TOKEN_MISSING' ? challenge.startsWith('Bearer ') : challenge.includes('error="invalid_token"');
    const codeOk = code === undefined || body?.code === code;
    check(name, got.status === status && problem && headerOk && codeOk && body?.status === status, `${detail} www-authenticate=${challenge} retry-after=${got.headers['retry-after']}`);
  }

  const now = Math.floor(Date.now() / 1000);
  const alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  const bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
  const otherTenant = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-2' });
  const expired = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1', claims: { exp: now - 3600, iat: now - 7200 } });
  const forged = `${bob.slice(0, bob.lastIndexOf('.'))}.${'A'.repeat(342)}`;
  const ps256 = upstreams.resignPs256(alice);
  const forgedPs256 = `${ps256.slice(0, ps256.lastIndexOf('.'))}.${'A'.repeat(342)}`;
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
    expect(`${combo}: PS256 token → 200`, await call(`/${combo}/pss/AUTH/WVW1`, ps256), 200);
    expect(`${combo}: forged PS256 signature → 401`, await call(`/${combo}/pss/AUTH/WVW1`, forgedPs256), 401, 'ERR_TOKEN_INVALID');
    for (const [profile, code] of [['jwks', 'ERR_JWKS_UNAVAILABLE'], ['policy', 'ERR_POLICY_UNAVAILABLE']]) {
      for (const fault of ['hang', 'redirect', 'oversized', 'oversized-chunked']) {
        expect(`${combo}: ${fault} ${profile} upstream → 503`, await call(`/${combo}/${profile}-${fault}/READ/WVW1`, alice), 503, code);
      }
    }
  }

  check('no redirect was followed (the redirect targets were never asked)', upstreams.redirectsFollowed() === 0, `${upstreams.redirectsFollowed()} requests`);

  // Key rotation: a token signed with a key whose kid the authorizers have never seen.
  iam.rotateKeys();
  const rotated = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
  for (const combo of combos) expect(`${combo}: token of a rotated key (new kid) → 200`, await call(`/${combo}/iam/WRITE/WVW1`, rotated), 200);

  // Policy change, granting: DRIVER may now WRITE (the denial refetches the policy).
  iam.setConfig(configWith(['READ', 'WRITE']));
  await sleep(100);
  for (const combo of combos) expect(`${combo}: policy change grants DRIVER WRITE → 200`, await call(`/${combo}/iam/WRITE/WVW1`, alice), 200);

  // Policy change, revoking: DRIVER loses READ. Only revalidation (ttlMs 300 ms) can notice it;
  // maxStaleMs is long, so waiting out the stale window cannot be what picks it up. Node, Bun and
  // Deno revalidate in the background (a request may still get the old answer), workerd in the
  // request: the first answer that is no longer 200 is the one recorded.
  iam.setConfig(configWith(['WRITE']));
  for (const combo of combos) {
    /** @type {Answer} */
    let got = { status: 'not asked', headers: {}, body: undefined };
    for (let attempt = 0; attempt < 20; attempt++) {
      await sleep(200);
      got = await call(`/${combo}/iam/READ/WVW1`, alice);
      if (got.status !== 200) break;
    }
    expect(`${combo}: policy change revokes DRIVER READ → 403 in a later request`, got, 403, 'ERR_PERMISSION_DENIED');
  }
  return answers;
}
