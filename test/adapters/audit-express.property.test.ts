/**
 * `auditRoutes` of `iam-authz/express` held against Express itself: for random applications —
 * routes (`app.all` too), group guards and other middleware at paths of literals (in two cases)
 * and parameters, routers mounted in routers, case-sensitive or not — each route's path is requested without a token on a real loopback
 * server. Whatever handler answers must be audited as unguarded or public (a guard would have
 * answered 401); a route whose request a guard stops must be audited as guarded, unless another
 * request of its path (in other case: Express matches case-insensitively unless told) is answered
 * without a token. The audit is exact in both directions.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import express4 from 'express4';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { auditRoutes, expressAuthz } from '../../adapters/express/index.js';
import { createAuthorizer } from '../../src/index.js';

const authorizer = createAuthorizer({ baseUrl: 'https://iam.example.test', localJwks: { keys: [{ kty: 'RSA', kid: 'k', n: 'AQAB', e: 'AQAB' }] } });
const { authenticate, publicRoute } = expressAuthz(authorizer);

type Guard = 'auth' | 'public' | 'other' | 'none';
type Op =
  | { kind: 'route'; method: 'get' | 'post' | 'all'; path: string[]; guard: Guard }
  | { kind: 'use'; path: string[]; guard: Guard }
  | { kind: 'router'; path: string[]; caseSensitive: boolean; ops: Op[] };

const segments = fc.array(fc.constantFrom('fleet', 'Fleet', 'cars', ':id'), { maxLength: 2 });
const guard = fc.constantFrom<Guard>('auth', 'public', 'other', 'none');
const leaf: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('route' as const), method: fc.constantFrom('get' as const, 'post' as const, 'all' as const), path: segments, guard }),
  fc.record({ kind: fc.constant('use' as const), path: segments, guard: fc.constantFrom<Guard>('auth', 'public', 'other') }),
);
const opsOf = (depth: number): fc.Arbitrary<Op[]> => fc.array(depth === 0 ? leaf : fc.oneof(leaf, leaf, fc.record({ kind: fc.constant('router' as const), path: segments, caseSensitive: fc.boolean(), ops: opsOf(depth - 1) })), { maxLength: 6 });

/** Parameters named apart within one path (`/:id0/:id1`), as Express wants them. */
const written = (path: string[]) => `/${path.map((s, n) => (s.startsWith(':') ? `${s}${n}` : s)).join('/')}`;
const handlerOf = (g: Guard) => (g === 'auth' ? authenticate() : g === 'public' ? publicRoute() : (_req: unknown, _res: unknown, next: () => void) => { next(); });

/** The OpenAPI form of `path`'s segments (`{id0}`), and a request path of them (`x1` for each parameter). */
const keyOf = (path: string[]) => path.map((s, n) => (s.startsWith(':') ? `{id${n}}` : s));
const sampleOf = (path: string[]) => path.map((s) => (s.startsWith(':') ? 'x1' : s));

/** `path` with each segment as it is, in lower and in upper case: every combination. */
const casings = (path: string): string[] => path.split('/').slice(1).reduce<string[]>((paths, segment) => paths.flatMap((p) => [...new Set([segment, segment.toLowerCase(), segment.toUpperCase()])].map((s) => `${p}/${s}`)), ['']);

/** Builds `ops` into `target`; returns each route's audit key and the path a request of it takes. */
function build(make: typeof express, target: express.Router, ops: Op[], prefix: { key: string[]; sample: string[] }): { method: string; key: string; sample: string }[] {
  const routes: { method: string; key: string; sample: string }[] = [];
  for (const op of ops) {
    const at = { key: [...prefix.key, ...keyOf(op.path)], sample: [...prefix.sample, ...sampleOf(op.path)] };
    if (op.kind === 'use') target.use(written(op.path), handlerOf(op.guard));
    if (op.kind === 'router') {
      const router = make.Router({ caseSensitive: op.caseSensitive });
      routes.push(...build(make, router, op.ops, at));
      target.use(written(op.path), router);
    }
    if (op.kind !== 'route') continue;
    // app.all() is audited under GET (among others), and requested so.
    const method = op.method === 'post' ? 'POST' : 'GET';
    const path = `/${at.key.join('/')}`;
    const handlers = op.guard === 'none' ? [] : [handlerOf(op.guard)];
    target[op.method](written(op.path), ...handlers as express.RequestHandler[], (req, res) => { res.send(`${req.method} ${path}`); });
    const key = `${method} ${path}`;
    routes.push({ method, key, sample: `/${at.sample.join('/')}` });
  }
  return routes;
}

describe.each([{ name: 'Express 5', make: express }, { name: 'Express 4', make: express4 }])('$name', ({ make }) => {
  test('what answers without a token is audited unguarded or public; what a guard stops, guarded', { timeout: 60_000 }, async () => {
    await fc.assert(fc.asyncProperty(opsOf(2), fc.boolean(), async (ops, caseSensitive) => {
      const app = make();
      app.set('case sensitive routing', caseSensitive);
      const routes = build(make, app, ops, { key: [], sample: [] });
      const access = new Map(auditRoutes(app).routes.map((r) => [`${r.method} ${r.path}`, r.access]));
      const server = app.listen(0, '127.0.0.1');
      await new Promise<void>((resolve) => server.once('listening', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const { method, key, sample } of routes) {
          const response = await fetch(`${url}${sample}`, { method });
          const body = await response.text();
          if (response.status === 200) expect(['unguarded', 'public'], `${body} answered ${method} ${sample}`).toContain(access.get(body));
          else {
            expect(response.status, `${method} ${sample}`).toBe(401);
            if (access.get(key) === 'authenticated') continue;
            // Audited as not guarded: some request of the route's path (in other case) must be answered without a token.
            const statuses = await Promise.all(casings(sample).map(async (path) => (await fetch(`${url}${path}`, { method })).status));
            expect(statuses, `${key}: a guard stopped ${method} ${sample}`).toContain(200);
          }
        }
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }), { numRuns: 60 });
  });
});
