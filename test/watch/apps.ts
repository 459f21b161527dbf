/**
 * One small app per HTTP adapter for the tests of `iam.signal`, served on 127.0.0.1, and a real
 * HTTP client that reads a stream as it comes. Routes, the same on every framework:
 * - `/stream/:vin` (READ on the VIN) and `/me/stream` (`authenticate()` alone): server-sent events,
 *   `open` first, then `end` with the signal's `reason.code` once it aborts, and the stream ends;
 * - `/plain/:vin` never reads the signal, `/quick/:vin` reads it: both answer the number of open
 *   watches as their handler saw it.
 */
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { serve } from '@hono/node-server';
import Router from '@koa/router';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { Hono } from 'hono';
import Koa from 'koa';
import { expressAuthz } from '../../adapters/express/index.js';
import { fastifyAuthz } from '../../adapters/fastify/index.js';
import { createFetchGuards } from '../../adapters/fetch/index.js';
import { honoAuthz } from '../../adapters/hono/index.js';
import { koaAuthz } from '../../adapters/koa/index.js';
import type { Authorizer, IamState } from '../../src/index.js';
import { VEHICLE } from '../helpers/index.js';

export type Framework = 'express' | 'koa' | 'fastify' | 'hono' | 'fetch';
export const FRAMEWORKS: readonly Framework[] = ['express', 'koa', 'fastify', 'hono', 'fetch'];

export interface App {
  readonly url: string;
  close(): Promise<void>;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** Sends `open`, then `end` with the abort's code when `signal` aborts, then ends. */
function sse(signal: AbortSignal, write: (text: string) => void, end: () => void): void {
  write('event: open\ndata: ok\n\n');
  const done = (): void => {
    write(`event: end\ndata: ${(signal.reason as { code?: string } | undefined)?.code ?? 'none'}\n\n`);
    end();
  };
  if (signal.aborted) done();
  else signal.addEventListener('abort', done, { once: true });
}

/** {@link sse} into a Node stream, for Koa and Fastify to send. */
function nodeStream(signal: AbortSignal): PassThrough {
  const body = new PassThrough();
  sse(signal, (text) => body.write(text), () => body.end());
  return body;
}

/** {@link sse} as a Fetch-API `Response`. */
function webStream(signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // The client may have gone: enqueueing into a cancelled stream throws, and nothing is left to say.
      const attempt = (f: () => void): void => { try { f(); } catch { /* cancelled */ } };
      sse(signal, (text) => { attempt(() => { controller.enqueue(encoder.encode(text)); }); }, () => { attempt(() => { controller.close(); }); });
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

function signalOf(state: IamState | null | undefined): AbortSignal {
  if (state?.signal === undefined) throw new Error('the adapter attached no signal');
  return state.signal;
}

export async function startApp(framework: Framework, authz: Authorizer): Promise<App> {
  const open = (): string => String(authz.status().watches.open);
  if (framework === 'express') {
    const app = express();
    const { authenticate, requirePermission } = expressAuthz(authz);
    const read = requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.params.vin);
    const stream = (req: express.Request, res: express.Response): void => {
      res.writeHead(200, SSE_HEADERS);
      sse(signalOf(req.iam), (text) => res.write(text), () => res.end());
    };
    app.get('/stream/:vin', read, stream);
    app.get('/me/stream', authenticate(), stream);
    app.get('/plain/:vin', read, (_req, res) => { res.send(open()); });
    app.get('/quick/:vin', read, (req, res) => { res.send(`${signalOf(req.iam).aborted ? 'aborted ' : ''}${open()}`); });
    return listenNode(app.listen(0, '127.0.0.1'));
  }
  if (framework === 'koa') {
    const app = new Koa();
    // A client that goes away mid-stream is what some tests do: not an error to print.
    app.silent = true;
    const router = new Router();
    const { authenticate, requirePermission } = koaAuthz(authz);
    const read = requirePermission(VEHICLE, 'READ', 'VIN', (ctx) => (ctx.params as { vin: string }).vin);
    const stream = (ctx: Koa.Context): void => {
      ctx.set(SSE_HEADERS);
      ctx.body = nodeStream(signalOf(ctx.state.iam));
    };
    router.get('/stream/:vin', read, stream);
    router.get('/me/stream', authenticate(), stream);
    router.get('/plain/:vin', read, (ctx) => { ctx.body = open(); });
    router.get('/quick/:vin', read, (ctx) => { ctx.body = `${signalOf(ctx.state.iam).aborted ? 'aborted ' : ''}${open()}`; });
    app.use(router.routes());
    return listenNode(app.listen(0, '127.0.0.1'));
  }
  if (framework === 'fastify') {
    const app = Fastify();
    const { authenticate, requirePermission } = fastifyAuthz(authz);
    const read = requirePermission(VEHICLE, 'READ', 'VIN', (request) => (request.params as { vin: string }).vin);
    const stream = async (request: FastifyRequest, reply: import('fastify').FastifyReply) => reply.headers(SSE_HEADERS).send(nodeStream(signalOf(request.iam)));
    app.get('/stream/:vin', { preHandler: read }, stream);
    app.get('/me/stream', { preHandler: authenticate() }, stream);
    app.get('/plain/:vin', { preHandler: read }, async () => open());
    app.get('/quick/:vin', { preHandler: read }, async (request) => `${signalOf(request.iam).aborted ? 'aborted ' : ''}${open()}`);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: async () => { app.server.closeAllConnections(); await app.close(); } };
  }
  if (framework === 'hono') {
    const app = new Hono();
    const { authenticate, requirePermission } = honoAuthz(authz);
    const read = requirePermission(VEHICLE, 'READ', 'VIN', (c) => c.req.param('vin'));
    app.get('/stream/:vin', read, (c) => webStream(signalOf(c.get('iam'))));
    app.get('/me/stream', authenticate(), (c) => webStream(signalOf(c.get('iam'))));
    app.get('/plain/:vin', read, (c) => c.text(open()));
    app.get('/quick/:vin', read, (c) => c.text(`${signalOf(c.get('iam')).aborted ? 'aborted ' : ''}${open()}`));
    return listenWeb(app.fetch);
  }
  const { authenticate, requirePermission, respond } = createFetchGuards(authz);
  const vin = (request: Request): string => new URL(request.url).pathname.split('/')[2] as string;
  const routes: Record<string, [(request: Request) => Promise<IamState | Response>, (state: IamState) => Response]> = {
    stream: [requirePermission(VEHICLE, 'READ', 'VIN', vin), (state) => webStream(signalOf(state))],
    me: [authenticate(), (state) => webStream(signalOf(state))],
    plain: [requirePermission(VEHICLE, 'READ', 'VIN', vin), () => new Response(open())],
    quick: [requirePermission(VEHICLE, 'READ', 'VIN', vin), (state) => new Response(`${signalOf(state).aborted ? 'aborted ' : ''}${open()}`)],
  };
  return listenWeb(async (request) => {
    const [guard, handle] = routes[new URL(request.url).pathname.split('/')[1] as string] ?? [];
    if (!guard || !handle) return new Response(null, { status: 404 });
    const state = await guard(request);
    // respond(): the watch behind a read signal closes when the body has been sent.
    return state instanceof Response ? state : respond(state, handle(state));
  });
}

async function listenNode(server: import('node:http').Server): Promise<App> {
  if (!server.listening) await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => { resolve(); }); }),
  };
}

async function listenWeb(fetch: (request: Request) => Response | Promise<Response>): Promise<App> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => { resolve(s); });
  });
  return listenNode(server as import('node:http').Server);
}

/** A stream read as it comes, over a real HTTP client (undici's fetch). */
export interface Reading {
  readonly status: number;
  /** What has arrived so far. */
  text(): string;
  /** Resolves once the text includes `part` (rejects after `ms`). */
  until(part: string, ms?: number): Promise<void>;
  /** Resolves with when (`Date.now()`) the server ended the stream. */
  readonly ended: Promise<number>;
  /** Goes away: the client cancels the body. */
  cancel(): Promise<void>;
}

export async function read(url: string, authorization: string): Promise<Reading> {
  const res = await fetch(url, { headers: { authorization, accept: 'text/event-stream' } });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return Date.now();
      text += decoder.decode(value, { stream: true });
    }
  })();
  ended.catch(() => undefined);
  return {
    status: res.status,
    text: () => text,
    async until(part, ms = 3_000) {
      const deadline = Date.now() + ms;
      while (!text.includes(part)) {
        if (Date.now() > deadline) throw new Error(`"${part}" never came; got ${JSON.stringify(text)}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    ended,
    cancel: () => reader.cancel(),
  };
}

/** Resolves once `f()` is true (polled every 10 ms), rejects after `ms`. */
export async function eventually(f: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error('not within time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
