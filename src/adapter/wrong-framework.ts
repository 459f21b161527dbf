/**
 * An adapter's handler mounted in another framework (the Express guard in Koa, the Koa guard in
 * Express, …) would crash the process or answer a bare 500 with a stack. Each adapter checks the
 * shape of its arguments; when they are another framework's, this module recognises that framework
 * by the same duck-typing (no framework import), answers 500 `application/problem+json` in that
 * framework's own way, naming the subpath to import instead, and warns once per process.
 */
import { warnOnce } from '../lib/warn-once.js';

/** The frameworks an adapter is written for. */
export type AdapterFramework = 'express' | 'koa' | 'fastify' | 'hono' | 'fetch';

/** The frameworks whose handler arguments can be recognised (Express: any `(req, res, next)` of Node's http). */
type Host = 'express' | 'koa' | 'fastify' | 'hono';

/** The stable code of the process warning. */
export const WRONG_FRAMEWORK_WARNING = 'IAM_AUTHZ_WRONG_FRAMEWORK';

const NAMES: Readonly<Record<AdapterFramework, { framework: string; factory: string }>> = {
  express: { framework: 'Express', factory: 'expressAuthz' },
  koa: { framework: 'Koa', factory: 'koaAuthz' },
  fastify: { framework: 'Fastify', factory: 'fastifyAuthz' },
  hono: { framework: 'Hono', factory: 'honoAuthz' },
  fetch: { framework: 'a Fetch-API handler', factory: 'createFetchGuards' },
};

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null;
}

/** Which framework called a handler with `args`, by their shape alone. */
function hostOf(args: readonly unknown[]): Host | undefined {
  const [first, second] = args;
  if (isObject(second) && typeof second.code === 'function' && typeof second.send === 'function' && isObject(second.raw)) return 'fastify';
  if (!isObject(first)) return undefined;
  if (typeof second === 'function') {
    if (isObject(first.request) && isObject(first.response) && isObject(first.res)) return 'koa';
    if (isObject(first.req) && typeof first.req.header === 'function') return 'hono';
  }
  if (isObject(second) && typeof second.setHeader === 'function' && typeof second.end === 'function') return 'express';
  return undefined;
}

/**
 * Answers a request that reached `own`'s handler from another framework: 500 problem+json whose
 * `detail` names `iam-authz/<framework>`, sent in that framework's way, plus one process warning.
 * Returns what the handler should return to that framework (a Hono `Response`, a Fastify reply).
 * Throws a `TypeError` naming the adapter when the caller is no framework it recognises.
 */
export function answerWrongFramework(own: AdapterFramework, args: readonly unknown[]): unknown {
  const host = hostOf(args);
  const { framework, factory } = NAMES[own];
  if (host === undefined || host === own) {
    throw new TypeError(`${factory}: its guards are ${framework} handlers (iam-authz/${own}) and were called with other arguments`);
  }
  const right = NAMES[host];
  const detail = `this route's guard is from iam-authz/${own} (${factory}) but runs in ${right.framework}: use ${right.factory} from iam-authz/${host}`;
  warnOnce(WRONG_FRAMEWORK_WARNING, `iam-authz: a guard from iam-authz/${own} (${factory}) is mounted in ${right.framework}; every request it sees is answered 500. Use ${right.factory} from iam-authz/${host}.`);
  const body = JSON.stringify({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail, code: 'ERR_WRONG_FRAMEWORK' });
  const type = 'application/problem+json';
  const [first, second] = args as [Loose, Loose];
  switch (host) {
    case 'koa':
      first.status = 500;
      first.type = type;
      first.body = body;
      return undefined;
    case 'fastify': {
      const reply = second as unknown as { code(n: number): { type(t: string): { send(b: string): unknown } } };
      reply.code(500).type(type).send(body);
      return second;
    }
    case 'hono': {
      const response = new Response((first.req as { method?: unknown }).method === 'HEAD' ? null : body, { status: 500, headers: { 'content-type': type } });
      // Set as well as returned: a handler that returns nothing (Express's) still answers.
      first.res = response;
      return response;
    }
    case 'express': {
      const res = second as unknown as { headersSent: boolean; statusCode: number; setHeader(n: string, v: string | number): void; end(b?: string): void };
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader('content-type', type);
        res.setHeader('content-length', Buffer.byteLength(body));
        res.end(first.method === 'HEAD' ? undefined : body);
      }
      return undefined;
    }
  }
}
