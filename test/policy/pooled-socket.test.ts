/** Issue 9 §5 for the policy client: a revalidation on a pooled socket the server closed is retried once. */
import type { Socket } from 'node:net';
import { expect, test } from 'vitest';
import type { PolicyOptions } from '../../src/index.js';
import { identityFor, READ, usePolicyApi } from './harness.js';

const P = { ttlMs: 10_000, maxStaleMs: 60_000, minRefreshIntervalMs: 1_000, timeoutMs: 5_000 } satisfies PolicyOptions;
const ctx = usePolicyApi();

/** Lets undici put the socket of the last answer back into its pool (it is released a tick after the body ends). */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 25));
}

test('a revalidation whose kept-alive socket was closed by the server is retried on a fresh connection (304), not a failure', async () => {
  const served = new WeakSet<Socket>();
  ctx.server.fault = (req) => {
    if (!served.has(req.socket)) {
      served.add(req.socket);
      return false;
    }
    req.socket.destroy();
    return true;
  };
  const authz = ctx.authorizer(P);
  const id = await identityFor(authz, ctx.app);
  expect(await authz.authorize(id, READ)).toMatchObject({ granted: true });
  ctx.clock.advance(P.ttlMs);
  await settle();
  await authz.authorize(id, READ);
  const [revalidated] = await ctx.events.until('revalidated');
  expect(revalidated!.message).toMatchObject({ notModified: true });
  expect(ctx.events.types()).not.toContain('failed');
  expect(ctx.server.requests).toHaveLength(3);
});
