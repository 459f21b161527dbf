/**
 * Issue 9 §4: no byte of an upstream body in any error message, cause chain, stack or diagnostics
 * event. Hostile policy and JWKS answers carry a marker; it must be nowhere, while the URL, status
 * and the failed check stay.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { channels, createAuthorizer, type IamAuthzError, type PolicyOptions } from '../../src/index.js';
import { reachableText } from '../helpers/leaks.js';
import { json, startLoopback, type Loopback } from '../helpers/loopback.js';
import { expectAuthzError, identityFor, READ, TEST_JWKS, usePolicyApi } from './harness.js';

const MARKER = 'LEAKMARKER-7f3a';
const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 2_000, maxBytes: 4_096 } satisfies PolicyOptions;

type Answer = (req: IncomingMessage, res: ServerResponse) => void;
const raw = (status: number, type: string, body: string): Answer => (_req, res) => {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** Answers whose bodies quote the marker; each would put it in a naive error. */
const HOSTILE: [name: string, answer: Answer][] = [
  ['invalid JSON quoting the marker', raw(200, 'application/json', `{"applicationId": "${MARKER}", roles: [}`)],
  ['invalid JSON that starts with the marker', raw(200, 'application/json', `${MARKER} {}`)],
  ['a 500 whose body is the marker', raw(500, 'application/json', JSON.stringify({ detail: MARKER }))],
  ['a 404 page with the marker', raw(404, 'text/html', `<html>${MARKER}</html>`)],
  ['an HTML 200 with the marker', raw(200, 'text/html', `<html>${MARKER}</html>`)],
  ['the marker as applicationId', (_req, res) => { json(res, 200, { applicationId: MARKER, changeId: 'c2', roles: [] }); }],
  ['the marker in a malformed role', (_req, res) => {
    json(res, 200, { applicationId: 'x', changeId: MARKER, roles: [{ key: MARKER, servicePolicies: [{ serviceDefinitionKey: MARKER, permissions: [MARKER] }] }] });
  }],
  ['an oversize body of markers', raw(200, 'application/json', JSON.stringify({ pad: MARKER.repeat(400) }))],
];

/** Records every message of the failure and stale channels. */
function recordAll(): { messages: unknown[]; dispose(): void } {
  const messages: unknown[] = [];
  const names = [channels.policyFailed, channels.policyStale, channels.jwksFailed, channels.policyTokenRefused];
  const handler = (m: unknown): void => { messages.push(m); };
  for (const n of names) subscribe(n, handler);
  return { messages, dispose: () => { for (const n of names) unsubscribe(n, handler); } };
}

/** A server speaking broken HTTP/1.1 whose bytes hold the marker: undici's parse error keeps them. */
async function brokenHttpServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => { socket.end(`HTTZ/1.1 200 ${MARKER}\r\n\r\n`); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => { server.close(() => { resolve(); }); }),
  };
}

function expectNoMarker(error: IamAuthzError, events: unknown[]): void {
  expect(reachableText(error)).not.toContain(MARKER);
  expect(events.length).toBeGreaterThan(0);
  expect(reachableText(events)).not.toContain(MARKER);
}

describe('policy API', () => {
  const ctx = usePolicyApi();
  let recorder: ReturnType<typeof recordAll>;
  afterEach(() => { recorder.dispose(); });

  test.each(HOSTILE)('%s: the failure carries the URL, never the body', async (_name, answer) => {
    recorder = recordAll();
    const authz = ctx.authorizer(P);
    const id = await identityFor(authz, ctx.app);
    ctx.server.fault = (req, res) => { answer(req, res); return true; };
    const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
    expect(error.message).toContain(`${ctx.server.url}/policy/v1/roles`);
    expectNoMarker(error, recorder.messages);
  });

  test('an answer that is not valid HTTP: the parse error\'s bytes are not kept', async () => {
    recorder = recordAll();
    const broken = await brokenHttpServer();
    try {
      const authz = ctx.authorizers.create({ baseUrl: 'https://iam.example.test', localJwks: TEST_JWKS, policyUrl: `${broken.url}/policy/v1/roles`, now: ctx.clock.now, policy: P });
      const id = await identityFor(authz, ctx.app);
      const error = await expectAuthzError(authz.authorize(id, READ), 'ERR_POLICY_UNAVAILABLE', 503);
      expectNoMarker(error, recorder.messages);
    } finally {
      await broken.close();
    }
  });
});

describe('JWKS endpoint', () => {
  let server: Loopback;
  let answer: Answer = raw(200, 'application/json', '{}');
  beforeAll(async () => { server = await startLoopback((req, res) => { answer(req, res); }); });
  afterAll(() => server.close());
  let recorder: ReturnType<typeof recordAll>;
  afterEach(() => { recorder.dispose(); });

  const JWKS_HOSTILE: [name: string, answer: Answer][] = [
    ...HOSTILE.slice(0, 5),
    ['not a JWK Set, quoting the marker', (_req, res) => { json(res, 200, { keys: MARKER }); }],
    ['keys that are all unusable, named with the marker', (_req, res) => { json(res, 200, { keys: [{ kty: 'RSA', kid: MARKER, n: MARKER, e: 'AQAB' }] }); }],
    ['an oversize body of markers', raw(200, 'application/json', JSON.stringify({ keys: [], pad: MARKER.repeat(40_000) }))],
  ];

  test.each(JWKS_HOSTILE)('%s: ready() and the event carry URL and status, never the body', async (_name, hostile) => {
    recorder = recordAll();
    answer = hostile;
    const authz = createAuthorizer({ baseUrl: server.url, jwks: { maxBytes: 100_000 } });
    try {
      const error = await expectAuthzError(authz.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
      expect(error.message).toContain(server.url);
      expectNoMarker(error, recorder.messages);
    } finally {
      await authz.close();
    }
  });

  test('an answer that is not valid HTTP: the parse error\'s bytes are not kept', async () => {
    recorder = recordAll();
    const broken = await brokenHttpServer();
    const authz = createAuthorizer({ baseUrl: broken.url });
    try {
      const error = await expectAuthzError(authz.ready(), 'ERR_JWKS_UNAVAILABLE', 503);
      expectNoMarker(error, recorder.messages);
    } finally {
      await authz.close();
      await broken.close();
    }
  });
});
