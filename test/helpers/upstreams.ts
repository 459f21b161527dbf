/**
 * The upstreams of the adapter scenario tables: a JWKS, a policy API and an IAM that answers 500
 * to everything, on loopback; `base` is what an authorizer over them takes (no refetch spacing).
 */
import { startJwksServer } from './fixtures.js';
import { json, startLoopback, type Loopback } from './loopback.js';
import { startPolicyServer, type PolicyServer } from './policy-server.js';
import { NOW_MS } from './clock.js';

export interface Upstreams {
  readonly jwks: Loopback;
  readonly policy: PolicyServer;
  readonly down: Loopback;
  readonly base: { baseUrl: string; now: () => number; jwks: { minRefreshIntervalMs: number }; policy: { minRefreshIntervalMs: number } };
  close(): Promise<void>;
}

export async function startUpstreams(): Promise<Upstreams> {
  const jwks = await startJwksServer();
  const policy = await startPolicyServer();
  const down = await startLoopback((_req, res) => { json(res, 500, { error: 'down' }); });
  return {
    jwks,
    policy,
    down,
    base: { baseUrl: jwks.url, now: () => NOW_MS, jwks: { minRefreshIntervalMs: 0 }, policy: { minRefreshIntervalMs: 0 } },
    async close() { await Promise.all([jwks.close(), policy.close(), down.close()]); },
  };
}
