/**
 * One server of the HTTP benchmark, in its own process so that its CPU time can be read on its
 * own: `node --import tsx bench/http/server.ts <kind>` with the development IAM's addresses in the
 * environment. It tells the parent its port over IPC and answers `cpu` messages with
 * `process.cpuUsage()`. Every guarded route is `GET /vehicle/:vin`, READ on `VIN=<vin>`. The
 * `*-ceiling` servers do only what any verifier that reads claims must do (one raw RSA verify of
 * the request's own token, one payload decode and `JSON.parse`; 401 on failure): the ceiling.
 *
 * The platform's own share, for the figures that show what a guard can reach at best: `*-noop`
 * is the bare route behind a guard that does nothing (a Fastify `onRequest` hook, an async
 * function returning at once; an Express middleware calling `next()`), and `*-ceiling-hook` does
 * the ceiling's work in such a guard instead of in the handler. `*-least` is such a guard doing
 * the least that makes iam-authz's decision (`bench/ceiling/least.ts`): the measured limit.
 * `fastify-iam-thin` calls `authenticate` and `authorize` from a hand-written hook, without the
 * adapter: what the guard layer costs, next to `fastify-iam-nocache`.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express from 'express';
import Fastify from 'fastify';
import fastifyJwt from '@fastify/jwt';
import { auth } from 'express-oauth2-jwt-bearer';
import { expressjwt } from 'express-jwt';
import jwksRsa from 'jwks-rsa';
import { createPublicKey } from 'node:crypto';
import { createAuthorizer, type AuthorizerOptions, type Identity } from '../../src/index.js';
import { expressAuthz } from '../../adapters/express/index.js';
import { iamAuthz } from '../../adapters/fastify/index.js';
import { verifyAndParse } from '../ceiling/floor.js';
import { createLeastVerifier, grantingRoles } from '../ceiling/least.js';
import { KINDS, type ServerKind } from './kinds.js';


const { IAM_BASE_URL: baseUrl = '', IAM_ISSUER: issuer = '', IAM_PUBLIC_PEM: publicPem = '', TENANT: tenant = '' } = process.env;
const jwksUri = `${issuer}/.well-known/jwks.json`;
const kind = process.argv[2] as ServerKind;
if (!KINDS.includes(kind)) throw new Error(`bench/http/server.ts: unknown server kind ${kind}`);

/** What the peers are asked to do beyond the signature: the token must name the resource. */
function namesVin(payload: unknown, vin: string): boolean {
  const ars = (payload as { ars?: { c?: string[] }[] } | undefined)?.ars;
  return Array.isArray(ars) && ars.some((a) => a.c?.includes(`VIN=${vin}`) === true);
}

/** The bearer token's payload when its signature verifies (the ceiling's whole work), else undefined. */
const ceilingKey = kind.includes('-ceiling') ? createPublicKey(publicPem) : undefined;
function ceilingPayload(authorization: string | undefined): unknown {
  if (authorization === undefined || !authorization.startsWith('Bearer ')) return undefined;
  return verifyAndParse(authorization.slice(7), ceilingKey!);
}

/** The least verifier making iam-authz's decision, for the `*-least` kinds. */
async function leastVerifier(): Promise<ReturnType<typeof createLeastVerifier>> {
  const jwks = await (await fetch(jwksUri)).json() as Parameters<typeof createLeastVerifier>[0]['jwks'];
  const config = fileURLToPath(new URL('../../examples/vehicle-service/iam.json', import.meta.url));
  return createLeastVerifier({ issuer, tenant, jwks, granting: grantingRoles(config, 'vehicle-service', 'READ') });
}

function iamOptions(extra: Partial<AuthorizerOptions> = {}): AuthorizerOptions {
  return { baseUrl, audience: tenant, ...extra };
}

async function startFastify(): Promise<number> {
  const app = Fastify({ logger: false });
  const reply = { ok: true };
  if (kind === 'fastify-bare') {
    app.get('/vehicle/:vin', async () => reply);
  } else if (kind === 'fastify-noop') {
    app.get('/vehicle/:vin', { onRequest: async () => { /* a guard that lets everything through */ } }, async () => reply);
  } else if (kind === 'fastify-ceiling-hook') {
    app.get('/vehicle/:vin', {
      onRequest: async (request, res) => {
        if (ceilingPayload(request.headers.authorization) === undefined) await res.code(401).send({ error: 'unauthorized' });
      },
    }, async () => reply);
  } else if (kind === 'fastify-least') {
    const decide = await leastVerifier();
    app.get<{ Params: { vin: string } }>('/vehicle/:vin', {
      onRequest: async (request, res) => {
        const status = decide(request.headers.authorization, request.params.vin);
        if (status !== 200) await res.code(status).send({ error: status === 401 ? 'unauthorized' : 'forbidden' });
      },
    }, async () => reply);
  } else if (kind === 'fastify-iam-thin') {
    const authorizer = createAuthorizer(iamOptions({ tokenCache: false }));
    await authorizer.ready();
    const { settledValue } = await import('../../src/adapter/internal.js');
    const query = (vin: string) => ({ service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: vin } });
    const slow = async (authenticating: Promise<Identity>, vin: string): Promise<boolean> => (await authorizer.authorize(await authenticating, query(vin))).granted;
    app.get<{ Params: { vin: string } }>('/vehicle/:vin', {
      onRequest: (request, res, done) => {
        const authenticating = authorizer.authenticate(request.headers.authorization);
        const identity = settledValue(authenticating);
        const decision = identity && settledValue(authorizer.authorize(identity, query(request.params.vin)));
        if (decision?.granted === true) done();
        else if (decision) void res.code(403).send({ error: 'forbidden' });
        else slow(authenticating, request.params.vin).then((granted) => { if (granted) done(); else void res.code(403).send({ error: 'forbidden' }); }, () => { void res.code(401).send({ error: 'unauthorized' }); });
      },
    }, async () => reply);
  } else if (kind === 'fastify-ceiling') {
    app.get('/vehicle/:vin', async (request, res) => {
      if (ceilingPayload(request.headers.authorization) === undefined) return res.code(401).send({ error: 'unauthorized' });
      return reply;
    });
  } else if (kind === 'fastify-jwt') {
    await app.register(fastifyJwt, {
      secret: { public: publicPem },
      verify: { algorithms: ['RS256'], allowedIss: issuer, allowedAud: tenant, cache: true },
    });
    app.get<{ Params: { vin: string } }>('/vehicle/:vin', {
      onRequest: async (request, res) => {
        try {
          const payload = await request.jwtVerify();
          if (!namesVin(payload, request.params.vin)) await res.code(403).send({ error: 'forbidden' });
        } catch {
          await res.code(401).send({ error: 'unauthorized' });
        }
      },
    }, async () => reply);
  } else {
    const authorizer = createAuthorizer(iamOptions(kind === 'fastify-iam-nocache' || kind === 'fastify-iam-authn' ? { tokenCache: false } : kind === 'fastify-iam-pool' ? { verify: 'threadpool' } : {}));
    await authorizer.ready();
    // As the docs set it up: the plugin declares `request.iam` (decorateRequest), so setting it
    // keeps the request's shape.
    await app.register(iamAuthz, { authorizer });
    app.get<{ Params: { vin: string } }>('/vehicle/:vin', {
      // `fastify-iam-authn`: the token verified, no permission asked (what `authenticate` costs alone).
      onRequest: kind === 'fastify-iam-authn' ? app.iamAuthz.authenticate() : app.iamAuthz.requirePermission('vehicle-service', 'READ', 'VIN', (request) => (request.params as { vin: string }).vin),
    }, async () => reply);
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

async function startExpress(): Promise<number> {
  const app = express();
  app.disable('x-powered-by');
  const reply = (_req: express.Request, res: express.Response) => { res.json({ ok: true }); };
  if (kind === 'express-bare') {
    app.get('/vehicle/:vin', reply);
  } else if (kind === 'express-noop') {
    app.get('/vehicle/:vin', (_req, _res, next) => { next(); }, reply);
  } else if (kind === 'express-ceiling-hook') {
    app.get('/vehicle/:vin', (req, res, next) => {
      if (ceilingPayload(req.headers.authorization) === undefined) res.status(401).json({ error: 'unauthorized' });
      else next();
    }, reply);
  } else if (kind === 'express-least') {
    const decide = await leastVerifier();
    app.get('/vehicle/:vin', (req, res, next) => {
      const status = decide(req.headers.authorization, req.params.vin as string);
      if (status !== 200) res.status(status).json({ error: status === 401 ? 'unauthorized' : 'forbidden' });
      else next();
    }, reply);
  } else if (kind === 'express-ceiling') {
    app.get('/vehicle/:vin', (req, res) => {
      if (ceilingPayload(req.headers.authorization) === undefined) res.status(401).json({ error: 'unauthorized' });
      else res.json({ ok: true });
    });
  } else if (kind === 'express-iam' || kind === 'express-iam-nocache') {
    const authorizer = createAuthorizer(iamOptions(kind === 'express-iam-nocache' ? { tokenCache: false } : {}));
    await authorizer.ready();
    const { requirePermission } = expressAuthz(authorizer);
    app.get('/vehicle/:vin', requirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin as string), reply);
  } else {
    const verify = kind === 'express-oauth2-jwt-bearer'
      ? auth({ issuer, audience: tenant, jwksUri, tokenSigningAlg: 'RS256' })
      : expressjwt({ secret: jwksRsa.expressJwtSecret({ cache: true, jwksUri }) as never, algorithms: ['RS256'], issuer, audience: tenant });
    const claims = (req: express.Request): unknown => (req as { auth?: { payload?: unknown } }).auth?.payload ?? (req as { auth?: unknown }).auth;
    app.get('/vehicle/:vin', verify, (req, res, next) => {
      if (namesVin(claims(req), req.params.vin as string)) next();
      else res.status(403).json({ error: 'forbidden' });
    }, reply);
    app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(err.status ?? 401).json({ error: 'unauthorized' });
    });
  }
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return (server.address() as AddressInfo).port;
}

const port = kind.startsWith('fastify') ? await startFastify() : await startExpress();
// A parent that exits (or throws) without stopping this server takes it along.
process.on('disconnect', () => { process.exit(0); });
process.on('message', (message) => {
  if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  if (message === 'exit') process.exit(0);
});
process.send?.({ port });
