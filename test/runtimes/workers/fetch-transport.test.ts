/**
 * The upstream rules are the same on both transports: undici (Node.js) and the platform `fetch`
 * (Cloudflare Workers, forced here on Node). A redirect is refused and never followed, a body
 * over `maxBytes` fails (chunked too), a hanging server times out, closing the owner aborts.
 * Real loopback servers; workerd itself runs the same rules in `.ci/workers`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Closer } from '../../../src/lib/closer.js';
import { lazyProxyAgent } from '../../../src/lib/undici.js';
import { httpGet, httpRequest, useTransportForTesting, type GetOptions, type UpstreamError } from '../../../src/lib/upstream.js';
import { json, startLoopback, type Loopback } from '../../helpers/loopback.js';

let server: Loopback;
let redirectTargetHits = 0;
const dispatcher = lazyProxyAgent();

beforeAll(async () => {
  server = await startLoopback((req, res) => {
    switch (req.url) {
      case '/ok': json(res, 200, { keys: [] }); return;
      case '/target': redirectTargetHits++; json(res, 200, { keys: [] }); return;
      case '/redirect': res.writeHead(302, { location: `${server.url}/target` }).end(); return;
      case '/hang': return; // never answers
      case '/declared-huge': res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' }).end(' '.repeat(100_000)); return;
      case '/chunked-huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 20; i++) res.write(' '.repeat(1000));
        res.end('{}');
        return;
      }
      case '/html': res.writeHead(200, { 'content-type': 'text/html' }).end('<html>token=secret</html>'); return;
      case '/error': json(res, 500, { detail: 'boom' }); return;
      default: res.writeHead(404).end();
    }
  });
});
afterAll(async () => {
  useTransportForTesting(undefined);
  await server.close();
  await (dispatcher as unknown as { close(): Promise<void> }).close();
});
afterEach(() => { useTransportForTesting(undefined); });

const options = (extra: Partial<GetOptions> = {}): GetOptions => ({ dispatcher, timeoutMs: 2_000, maxBytes: 8_192, headers: {}, expectJson: true, ...extra });
const failure = (promise: Promise<unknown>): Promise<UpstreamError> => promise.then(() => { throw new Error('expected a failure'); }, (error: unknown) => error as UpstreamError);

describe.each(['undici', 'fetch'] as const)('the %s transport', (transport) => {
  test('a 200 JSON answer is read', async () => {
    useTransportForTesting(transport);
    const res = await httpGet(`${server.url}/ok`, options());
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body.toString('utf8'))).toEqual({ keys: [] });
    expect(res.headers['content-type']).toBe('application/json');
  });

  test('a 302 is refused as a misconfiguration and never followed', async () => {
    useTransportForTesting(transport);
    const before = redirectTargetHits;
    const error = await failure(httpGet(`${server.url}/redirect`, options()));
    expect(error).toMatchObject({ name: 'UpstreamError', reason: 'redirect', statusCode: 302, misconfigured: true });
    expect(redirectTargetHits).toBe(before);
  });

  test('a body declared larger than maxBytes fails as oversize', async () => {
    useTransportForTesting(transport);
    expect(await failure(httpGet(`${server.url}/declared-huge`, options()))).toMatchObject({ reason: 'oversize' });
  });

  test('a chunked body (no content-length) over maxBytes fails as oversize', async () => {
    useTransportForTesting(transport);
    expect(await failure(httpGet(`${server.url}/chunked-huge`, options()))).toMatchObject({ reason: 'oversize' });
  });

  test('a server that never answers times out after timeoutMs', async () => {
    useTransportForTesting(transport);
    const started = Date.now();
    const error = await failure(httpGet(`${server.url}/hang`, options({ timeoutMs: 300 })));
    expect(error).toMatchObject({ reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test('closing the owner aborts a request under way, and fails later ones at once', async () => {
    useTransportForTesting(transport);
    const closer = new Closer();
    const pending = failure(httpGet(`${server.url}/hang`, options({ closer, timeoutMs: 10_000 })));
    setTimeout(() => { closer.close(); }, 50);
    expect(await pending).toMatchObject({ reason: 'network' });
    expect(await failure(httpGet(`${server.url}/ok`, options({ closer })))).toMatchObject({ reason: 'network' });
  });

  test('an HTML page is a misconfiguration whose message holds none of its body', async () => {
    useTransportForTesting(transport);
    const error = await failure(httpGet(`${server.url}/html`, options()));
    expect(error).toMatchObject({ reason: 'malformed', misconfigured: true });
    expect(error.message).not.toContain('secret');
  });

  test('an error body is kept only when asked for, and capped', async () => {
    useTransportForTesting(transport);
    const kept = await failure(httpRequest(`${server.url}/error`, { ...options(), method: 'GET', errorBodyMaxBytes: 1_000 }));
    expect(kept).toMatchObject({ reason: 'status', statusCode: 500 });
    expect(JSON.parse(kept.response?.body.toString('utf8') ?? '')).toEqual({ detail: 'boom' });
    const dropped = await failure(httpRequest(`${server.url}/error`, { ...options(), method: 'GET', errorBodyMaxBytes: 5 }));
    expect(dropped.response).toBeUndefined();
  });
});
