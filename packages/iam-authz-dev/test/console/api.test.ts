/**
 * The console's JSON API over real HTTP: validation naming the field, versioning (ETag/If-Match,
 * 409), the CSRF, origin and Host guards, the size cap, and the routes the page uses.
 */
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import { startDevIam } from '../../src/dev-iam.js';
import { ConsoleClient, exampleConfig, problemOf, send, startConsoleEnv, type ConsoleEnv } from './support.js';

let env: ConsoleEnv;
beforeEach(async () => { env = await startConsoleEnv(); });
afterEach(async () => { await env.close(); });

const fileConfig = async () => JSON.parse(await readFile(env.file!, 'utf8'));

describe('the page', () => {
  it('is served at /console with a strict CSP and its own script and style', async () => {
    const page = await send(`${env.iam.baseUrl}/console`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = page.headers['content-security-policy']!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).toContain('<script type="module" src="/console/page.js"></script>');
    expect(page.body).not.toMatch(/<script>|<style|\sstyle=|\son\w+=/);
    const js = await send(`${env.iam.baseUrl}/console/page.js`);
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // Transpiled from page.ts when run from the sources: no type annotations left.
    expect(js.body).toContain('function render()');
    expect(js.body).not.toMatch(/interface \w+ \{/);
    expect(js.body).not.toMatch(/(localStorage|sessionStorage)(\.\w|\[)/);
    const css = await send(`${env.iam.baseUrl}/console/page.css`);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await send(`${env.iam.baseUrl}/console/`)).status).toBe(200);
    expect((await send(`${env.iam.baseUrl}/console/nope`)).status).toBe(404);
    expect((await send(`${env.iam.baseUrl}/console`, { method: 'POST' })).status).toBe(405);
  });

  it('is absent with console: false', async () => {
    const iam = await startDevIam({ config: await exampleConfig(), console: false });
    try {
      expect((await send(`${iam.baseUrl}/console`)).status).toBe(404);
      expect((await send(`${iam.baseUrl}/console/api/config`)).status).toBe(404);
    } finally {
      await iam.close();
    }
  });
});

describe('GET /console/api/session and /config', () => {
  it('gives an HttpOnly, SameSite=Strict session cookie and its CSRF token', async () => {
    const res = await send(`${env.iam.baseUrl}/console/api/session`);
    expect(res.status).toBe(200);
    expect(res.headers['set-cookie']![0]).toMatch(/^iam-console-session=[\w-]{43}; Path=\/console; HttpOnly; SameSite=Strict$/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toStrictEqual({ csrfToken: expect.stringMatching(/^[\w-]{43}$/) });
    // The same session keeps its token; a new one gets another.
    const again = await send(`${env.iam.baseUrl}/console/api/session`, { headers: { cookie: env.client.cookie } });
    expect(again.headers['set-cookie']).toBeUndefined();
    expect(again.json().csrfToken).toBe(env.client.csrf);
    expect(res.json().csrfToken).not.toBe(env.client.csrf);
  });

  it('serves the config with a strong ETag, 304 on If-None-Match', async () => {
    const { etag, config } = await env.client.config();
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    expect(config).toStrictEqual(await exampleConfig());
    const again = await send(`${env.iam.baseUrl}/console/api/config`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

describe('PUT /console/api/config', () => {
  it('replaces the config, saves it to the file and answers the new ETag', async () => {
    const { etag, config } = await env.client.config();
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    const res = await env.client.put(config, etag);
    expect(res.status).toBe(200);
    expect(res.headers.etag).not.toBe(etag);
    expect(res.json()).toStrictEqual(config);
    expect(await fileConfig()).toStrictEqual(config);
    expect(env.iam.policyOf('app-1')?.roles[0]?.servicePolicies?.[0]?.permissions).toStrictEqual([{ key: 'READ' }, { key: 'WRITE' }]);
    expect((await env.client.config()).etag).toBe(res.headers.etag);
  });

  it.each([
    ['a permission the service does not list', (c: any) => { c.applications[0].roles[0].permissions['vehicle-service'].push('DELETE'); }, 'applications[0].roles[0].permissions.vehicle-service[1]'],
    ['a role on an unknown service', (c: any) => { c.applications[0].roles[1].permissions.nope = ['READ']; }, 'applications[0].roles[1].permissions.nope'],
    ['an actor of an unknown IdP', (c: any) => { c.actors[1].idp = 'corp'; }, 'actors[1].idp'],
    ['an access reference with no c and no n', (c: any) => { delete c.actors[0].tenants['tenant-1'][0].c; }, 'actors[0].tenants.tenant-1[0]'],
    ['a duplicate role key', (c: any) => { c.applications[0].roles[1].key = 'DRIVER'; }, 'applications[0].roles[1].key'],
    ['an empty service key', (c: any) => { c.applications[1].serviceDefinitions[0].key = ''; }, 'applications[1].serviceDefinitions[0].key'],
    ['a non-object', (c: any) => { c.actors = 'everyone'; }, 'actors'],
    // The page marks these invalid while typing; the API applies the same rules.
    ['an access reference with no roles', (c: any) => { c.actors[0].tenants['tenant-1'][0].r = []; }, 'actors[0].tenants.tenant-1[0].r'],
    ['a reference without "="', (c: any) => { c.actors[1].tenants['tenant-1'][0].c = ['VIN=WVW1', 'WVW2']; }, 'actors[1].tenants.tenant-1[0].c[1]'],
    ['a reference with nothing after "="', (c: any) => { c.actors[1].tenants['tenant-1'][0].c = ['VIN=']; }, 'actors[1].tenants.tenant-1[0].c[0]'],
  ])('refuses %s with 400 naming the field, changing nothing', async (_name, mutate, field) => {
    const before = await readFile(env.file!, 'utf8');
    const { etag, config } = await env.client.config();
    mutate(config);
    const res = await env.client.put(config, etag);
    expect(res.status).toBe(400);
    const problem = problemOf(res);
    expect(problem.field).toBe(field);
    expect(problem.detail).toContain(field);
    expect(await readFile(env.file!, 'utf8')).toBe(before);
    expect((await env.client.config()).etag).toBe(etag);
  });

  it('refuses a body that is not JSON, not JSON typed, or nested deeper than the cap', async () => {
    const { etag } = await env.client.config();
    expect(problemOf(await env.client.put('{"idps": [', etag))).toMatchObject({ status: 400, field: '$' });
    expect((await env.client.put('{}', etag, { 'content-type': 'text/plain' })).status).toBe(415);
    // Deep nesting inside an opaque member (an inline JWKS key) would pass the config validator and
    // overflow the stack when hashed or saved; it is refused before.
    const { config } = await env.client.config();
    const deep = JSON.stringify({ ...config, idps: [...config.idps, { key: 'x', issuer: 'https://x', jwks: { keys: [{}] } }] })
      .replace('"keys":[{}]', `"keys":[{"a":${'['.repeat(50_000)}${']'.repeat(50_000)}}]`);
    const res = await env.client.put(deep, etag);
    expect(problemOf(res)).toMatchObject({ status: 400, detail: expect.stringContaining('deeper') });
  });

  it('answers 409 with the current ETag when If-Match is stale, and 428 without If-Match', async () => {
    const { etag, config } = await env.client.config();
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    expect((await env.client.put(config, etag)).status).toBe(200);
    const saved = await readFile(env.file!, 'utf8');
    // A second tab still holding the first version:
    const stale = await exampleConfig();
    stale.applications[0]!.roles.push({ key: 'GUEST', permissions: {} });
    const res = await env.client.put(stale, etag);
    expect(res.status).toBe(409);
    const current = (await env.client.config()).etag;
    expect(problemOf(res).currentEtag).toBe(current);
    expect(res.headers.etag).toBe(current);
    expect(await readFile(env.file!, 'utf8')).toBe(saved);
    expect((await env.client.put(stale, etag, { 'if-match': null })).status).toBe(428);
    // "*" (or a list holding the current tag) is a deliberate overwrite.
    expect((await env.client.put(stale, `"other", ${current}`)).status).toBe(200);
    expect((await env.client.put(await exampleConfig(), '*')).status).toBe(200);
  });

  it('lets exactly one of two concurrent saves from the same version through', async () => {
    const { etag, config } = await env.client.config();
    const a = structuredClone(config);
    a.applications[0]!.roles.push({ key: 'A', permissions: {} });
    const b = structuredClone(config);
    b.applications[0]!.roles.push({ key: 'B', permissions: {} });
    const statuses = (await Promise.all([env.client.put(a, etag), env.client.put(b, etag)])).map((r) => r.status).sort();
    expect(statuses).toStrictEqual([200, 409]);
    const keys = (await fileConfig()).applications[0].roles.map((r: { key: string }) => r.key);
    expect(keys.filter((k: string) => k === 'A' || k === 'B')).toHaveLength(1);
  });

  it('answers 413 over the size cap, declared or streamed, and changes nothing', async () => {
    const before = await readFile(env.file!, 'utf8');
    const { etag, config } = await env.client.config();
    const big = JSON.stringify({ ...config, padding: 'x'.repeat(300_000) });
    const declared = await env.client.put(big, etag);
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    const streamed = await env.client.put(big, etag, { 'transfer-encoding': 'chunked', 'content-length': null });
    expect(streamed.status).toBe(413);
    expect(await readFile(env.file!, 'utf8')).toBe(before);
    // The server is still fine afterwards.
    expect((await env.client.put(config, etag)).status).toBe(200);
  });
});

describe('CSRF, origin and Host guards', () => {
  async function attempt(headers: Record<string, string | null>) {
    const { etag, config } = await env.client.config();
    config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    return env.client.put(config, etag, headers);
  }

  it('refuses a change without a valid CSRF token for the session', async () => {
    const before = await readFile(env.file!, 'utf8');
    const other = await new ConsoleClient(env.iam.baseUrl).open();
    for (const headers of [
      { 'x-csrf-token': null },
      { 'x-csrf-token': 'forged' },
      { 'x-csrf-token': other.csrf }, // another session's token with this session's cookie
      { cookie: null },
      { cookie: other.cookie }, // another session's cookie with this session's token
      { cookie: 'iam-console-session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    ]) {
      const res = await attempt(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(problemOf(res).detail).toMatch(/X-CSRF-Token/);
    }
    for (const route of ['tokens', 'explain', 'accessible', 'config/validate']) {
      expect((await env.client.send('POST', route, {}, { 'x-csrf-token': null })).status).toBe(403);
    }
    expect(await readFile(env.file!, 'utf8')).toBe(before);
  });

  it('refuses another origin even with a valid CSRF token', async () => {
    const before = await readFile(env.file!, 'utf8');
    const port = new URL(env.iam.baseUrl).port;
    for (const headers of [
      { origin: 'http://evil.example' },
      { origin: `http://localhost:${Number(port) + 1}` },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const res = await attempt(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(problemOf(res).detail).toMatch(/cross-(origin|site)/);
    }
    expect(await readFile(env.file!, 'utf8')).toBe(before);
    // The page's own origin passes, under either loopback name.
    expect((await attempt({ origin: env.iam.baseUrl, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  });

  it('answers only to its own loopback Host names (no DNS rebinding)', async () => {
    const port = new URL(env.iam.baseUrl).port;
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.2:${port}`, `localhost.evil.example:${port}`]) {
      const res = await send(`${env.iam.baseUrl}/console/api/config`, { headers: { host } });
      expect(res.status, host).toBe(403);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST:${port}`]) {
      expect((await send(`${env.iam.baseUrl}/console/api/config`, { headers: { host } })).status, host).toBe(200);
    }
    const viaLocalhost = await env.client.put((await env.client.config()).config, (await env.client.config()).etag, { host: `localhost:${port}`, origin: `http://localhost:${port}` });
    expect(viaLocalhost.status).toBe(200);
  });
});

describe('changeId', () => {
  it('changes with every role change, and a running Authorizer decides with the new one', async () => {
    const authorizer = createAuthorizer({ baseUrl: env.iam.baseUrl, policy: { minRefreshIntervalMs: 0 } });
    try {
      const token = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
      const identity = await authorizer.authenticate(`Bearer ${token}`);
      const query = { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } };
      const before = await authorizer.authorize(identity, query);
      expect(before).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED' });
      const status0 = await env.client.status();
      expect(before.changeId).toBe(status0.applications[0].changeId);

      const { etag } = await env.client.config();
      const res = await env.client.send('PUT', 'applications/app-1/roles/DRIVER', { permissions: { 'vehicle-service': ['READ', 'WRITE'] } }, { 'if-match': etag });
      expect(res.status).toBe(200);
      const status1 = await env.client.status();
      const app1 = status1.applications.find((a: { id: string }) => a.id === 'app-1');
      expect(app1.changeId).not.toBe(before.changeId);
      expect(app1.history.map((e: { changeId: string }) => e.changeId)).toStrictEqual([app1.changeId, before.changeId]);
      // app-2 was not touched: same changeId, one history entry.
      expect(status1.applications[1]).toStrictEqual(status0.applications[1]);

      const after = await authorizer.authorize(identity, query);
      expect(after).toMatchObject({ granted: true, grantedBy: { role: 'DRIVER' }, changeId: app1.changeId });
    } finally {
      await authorizer.close();
    }
  });

  it('reports memory mode when started without a file, and still applies edits', async () => {
    const mem = await startConsoleEnv({ memory: true });
    try {
      const status = await mem.client.status();
      expect(status.storage).toStrictEqual({ kind: 'memory' });
      expect((await env.client.status()).storage).toStrictEqual({ kind: 'file', file: env.file });
      const { etag, config } = await mem.client.config();
      config.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
      expect((await mem.client.put(config, etag)).status).toBe(200);
      expect(mem.iam.policyOf('app-1')!.changeId).not.toBe(status.applications[0].changeId);
    } finally {
      await mem.close();
    }
  });
});

describe('finer routes', () => {
  it('PUT one role and one actor, through the same validation and If-Match', async () => {
    let { etag } = await env.client.config();
    const bad = await env.client.send('PUT', 'applications/app-1/roles/DRIVER', { permissions: { 'vehicle-service': ['FLY'] } }, { 'if-match': etag });
    expect(problemOf(bad)).toMatchObject({ status: 400, field: 'applications[0].roles[0].permissions.vehicle-service[0]' });
    expect((await env.client.send('PUT', 'applications/app-9/roles/DRIVER', { permissions: {} }, { 'if-match': etag })).status).toBe(404);
    const role = await env.client.send('PUT', 'applications/app-2/roles/MANAGER', { permissions: { 'fleet-service': ['LIST', 'MANAGE'] } }, { 'if-match': etag });
    expect(role.status).toBe(200);
    expect((await fileConfig()).applications[1].roles[1]).toStrictEqual({ key: 'MANAGER', permissions: { 'fleet-service': ['LIST', 'MANAGE'] } });
    expect((await env.client.send('PUT', 'actors/actor-alice', {}, { 'if-match': etag })).status).toBe(409);
    etag = role.headers.etag!;
    const actor = { idp: 'dev', subject: 'carol', account: 'acc-3', application: 'app-1', tenants: { 't-1': [{ r: ['OWNER'], c: ['VIN=X'] }] } };
    expect(problemOf(await env.client.send('PUT', 'actors/actor-carol', { ...actor, idp: 'nope' }, { 'if-match': etag }))).toMatchObject({ field: 'actors[3].idp' });
    expect(problemOf(await env.client.send('PUT', 'actors/actor-carol', { ...actor, id: 'actor-x' }, { 'if-match': etag }))).toMatchObject({ field: 'id' });
    const created = await env.client.send('PUT', 'actors/actor-carol', actor, { 'if-match': etag });
    expect(created.status).toBe(200);
    expect((await fileConfig()).actors[3]).toStrictEqual({ id: 'actor-carol', ...actor });
    expect((await env.client.send('GET', 'actors/actor-carol', undefined)).status).toBe(405);
  });

  it('POST config/validate checks without saving', async () => {
    const { etag, config } = await env.client.config();
    expect((await env.client.send('POST', 'config/validate', config)).json()).toStrictEqual({ valid: true });
    config.actors[0]!.application = 'app-9';
    expect(problemOf(await env.client.send('POST', 'config/validate', config))).toMatchObject({ status: 400, field: 'actors[0].application' });
    expect((await env.client.config()).etag).toBe(etag);
  });

  it('POST tokens mints for an actor and tenant, naming the bad field otherwise', async () => {
    const res = await env.client.send('POST', 'tokens', { actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 120 });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { token, header, claims } = res.json();
    expect(header).toMatchObject({ alg: 'RS256', cty: 't1' });
    expect(claims).toMatchObject({ sub: 'actor-alice', tid: 'tenant-1', app: 'app-1', ars: [{ r: ['DRIVER'], c: ['VIN=WVW1'] }] });
    expect(claims.exp - claims.iat).toBe(120);
    const authorizer = createAuthorizer({ baseUrl: env.iam.baseUrl });
    expect((await authorizer.authenticate(`Bearer ${token}`)).claims.sub).toBe('actor-alice');
    await authorizer.close();
    for (const [body, field] of [
      [{ actor: 'actor-zed', tenantId: 'tenant-1', expiryInSecs: 60 }, 'actor'],
      [{ actor: 'actor-alice', tenantId: 'tenant-9', expiryInSecs: 60 }, 'tenantId'],
      [{ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 86_401 }, 'expiryInSecs'],
      [{ actor: 'actor-alice', tenantId: 'tenant-1', expiryInSecs: 1.5 }, 'expiryInSecs'],
      [[], '$'],
    ] as const) {
      expect(problemOf(await env.client.send('POST', 'tokens', body)), JSON.stringify(body)).toMatchObject({ status: 400, field });
    }
  });

  it('POST explain gives the library\'s decision, a denial reason, or the authentication error', async () => {
    const token = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
    const ask = async (body: object) => (await env.client.send('POST', 'explain', { token, service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' }, ...body })).json();
    const changeId = env.iam.policyOf('app-1')!.changeId;
    expect(await ask({})).toStrictEqual({
      outcome: 'decided', actor: 'actor-alice', application: 'app-1', tenant: 'tenant-1',
      decision: { granted: true, reference: 'VIN=WVW1', roles: ['DRIVER'], grantedBy: { role: 'DRIVER', service: 'vehicle-service', permission: 'READ' }, changeId, reason: 'GRANTED' },
    });
    expect((await ask({ permission: 'WRITE' })).decision).toMatchObject({ granted: false, reason: 'PERMISSION_NOT_GRANTED', roles: ['DRIVER'], changeId });
    expect((await ask({ resource: { type: 'VIN', value: 'WVW2' } })).decision).toMatchObject({ granted: false, reason: 'NO_MATCHING_REFERENCE' });
    expect((await ask({ service: 'fleet-service' })).decision).toMatchObject({ granted: false, reason: 'NO_SERVICE_POLICY' });
    const expired = env.iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(Date.now() / 1000) - 60 } });
    expect(await ask({ token: expired })).toStrictEqual({ outcome: 'error', error: { status: 401, code: 'ERR_TOKEN_EXPIRED', message: expect.any(String) } });
    const garbage = await ask({ token: 'not.a.token' });
    expect(garbage).toMatchObject({ outcome: 'error', error: { status: 401, code: 'ERR_TOKEN_INVALID' } });
    expect(JSON.stringify(garbage)).not.toContain('not.a.token');
    expect(problemOf(await env.client.send('POST', 'explain', { token, service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN=', value: 'x' } }))).toMatchObject({ field: 'resource.type' });
    expect(problemOf(await env.client.send('POST', 'explain', { token, service: '', permission: 'READ', resource: { node: 'n' } }))).toMatchObject({ field: 'service' });
  });

  it('POST accessible lists the resources of a type the token may act on', async () => {
    const frank = env.iam.mintToken({ actor: 'actor-frank', tenantId: 'tenant-9' });
    const nodes = (await env.client.send('POST', 'accessible', { token: frank, service: 'fleet-service', permission: 'LIST' })).json();
    expect(nodes).toMatchObject({ outcome: 'listed', checked: 2, resources: [{ reference: 'fleet-1', grantedBy: { role: 'VIEWER' } }, { reference: 'fleet-2' }] });
    expect((await env.client.send('POST', 'accessible', { token: frank, service: 'fleet-service', permission: 'MANAGE' })).json()).toMatchObject({ resources: [], checked: 2 });
    const bob = env.iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
    expect((await env.client.send('POST', 'accessible', { token: bob, service: 'vehicle-service', permission: 'WRITE', type: 'VIN' })).json())
      .toMatchObject({ resources: [{ reference: 'VIN=WVW1', grantedBy: { role: 'OWNER' } }], checked: 1 });
  });

  it('answers unknown routes 404 and wrong methods 405 with Allow', async () => {
    expect((await send(`${env.iam.baseUrl}/console/api/nope`)).status).toBe(404);
    expect((await send(`${env.iam.baseUrl}/console/api/config/validate/x`)).status).toBe(404);
    expect((await send(`${env.iam.baseUrl}/console/api/%E0%A4%A`)).status).toBe(400);
    const res = await env.client.send('DELETE', 'config', {});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect((await send(`${env.iam.baseUrl}/console/api/tokens`)).headers.allow).toBe('POST');
  });
});
