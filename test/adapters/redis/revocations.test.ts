/**
 * Revocations over `redisHints` and a real `redis-server`, with node-redis and with ioredis: a
 * revoke on one replica is in force on another within a second, a replica started later reads it
 * (`ready()` waits for it), and what anyone who can publish on the channel sends can refuse tokens,
 * never admit one, never crash. Skipped where `redis-server` is not installed (`.ci/run` installs it).
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisHints } from '../../../adapters/redis/index.js';
import type { Authorizer } from '../../../src/index.js';
import { useIam } from '../../helpers/index.js';
import { redisServerPath, startRedis, type RedisServer } from './redis-server.js';

const iam = useIam();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** A token of the loopback IAM valid on the real clock (Redis and the replicas run on it). */
const live = (claims: Record<string, unknown>): string => {
  const now = Math.floor(Date.now() / 1000);
  return iam.bearer({ iat: now - 1, exp: now + 600, ...claims });
};

interface Pair { publisher: unknown; subscriber: unknown; raw(channel: string, message: string): Promise<unknown>; quit(): void }

const kinds: { name: string; connect(url: string): Promise<Pair> }[] = [
  {
    name: 'node-redis',
    async connect(url) {
      const publisher = createClient({ url });
      publisher.on('error', () => {});
      const subscriber = publisher.duplicate();
      subscriber.on('error', () => {});
      await Promise.all([publisher.connect(), subscriber.connect()]);
      return { publisher, subscriber, raw: (c, m) => publisher.publish(c, m), quit() { publisher.destroy(); subscriber.destroy(); } };
    },
  },
  {
    name: 'ioredis',
    async connect(url) {
      const publisher = new Redis(url, { lazyConnect: true });
      const subscriber = new Redis(url, { lazyConnect: true });
      publisher.on('error', () => {});
      subscriber.on('error', () => {});
      await Promise.all([publisher.connect(), subscriber.connect()]);
      return { publisher, subscriber, raw: (c, m) => publisher.publish(c, m), quit() { publisher.disconnect(); subscriber.disconnect(); } };
    },
  },
];

describe.skipIf(redisServerPath === undefined).each(kinds)('revocations over $name', (kind) => {
  let redis: RedisServer;
  const pairs: Pair[] = [];
  let n = 0;
  beforeAll(async () => { redis = await startRedis(); });
  afterAll(async () => {
    for (const p of pairs) p.quit();
    await redis.stop();
  });

  async function replica(channel: string): Promise<{ authz: Authorizer; pair: Pair }> {
    const pair = await kind.connect(redis.url);
    pairs.push(pair);
    const hints = redisHints({ publisher: pair.publisher, subscriber: pair.subscriber, channel });
    return { authz: iam.authorizer({ now: Date.now, policy: { hints } }), pair };
  }

  /** Polls until `authenticate` refuses `bearer` as revoked; the time it took (ms). */
  async function refusedWithin(authz: Authorizer, bearer: string, ms: number): Promise<number> {
    const start = Date.now();
    for (;;) {
      const refused = await authz.authenticate(bearer).then(() => false, (e: unknown) => (e as { code?: string }).code === 'ERR_TOKEN_REVOKED');
      if (refused) return Date.now() - start;
      if (Date.now() - start > ms) throw new Error(`not refused within ${ms} ms`);
      await sleep(20);
    }
  }

  it('a revoke on one replica is in force on another within a second, and on one started afterwards', async () => {
    const channel = `revocations-${kind.name}-${n++}`;
    const a = await replica(channel);
    const b = await replica(channel);
    const leaked = live({ jti: `leaked-${channel}` });
    // Both in use (and subscribed) before the revocation.
    await a.authz.authenticate(leaked);
    await b.authz.authenticate(leaked);
    await b.authz.ready();
    await a.authz.revoke({ jti: `leaked-${channel}` });
    await expect(a.authz.authenticate(leaked)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    expect(await refusedWithin(b.authz, leaked, 1_000)).toBeLessThan(1_000);
    // Started later: ready() reads the revocations in force.
    const c = await replica(channel);
    expect((await c.authz.ready()).revocations).toBe('loaded');
    await expect(c.authz.authenticate(leaked)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    expect((await c.authz.authenticate(live({ jti: `fine-${channel}` }))).claims.sub).toBe('actor-alice');
  });

  it('forged, replayed and malformed messages on the channel can refuse tokens, never admit one, never crash', async () => {
    const channel = `revocations-${kind.name}-${n++}`;
    const a = await replica(channel);
    const good = live({ jti: `good-${channel}` });
    const victim = live({ jti: `victim-${channel}` });
    await a.authz.ready();
    await a.authz.revoke({ jti: `victim-${channel}` });
    const now = Math.floor(Date.now() / 1000);
    for (const message of [
      'not json', '{}', '[]', 'null', JSON.stringify({ v: 1, type: 'revocation' }),
      JSON.stringify({ v: 1, type: 'unrevoke', jti: `victim-${channel}`, until: now + 60 }),
      JSON.stringify({ v: 1, type: 'revocation', jti: `victim-${channel}`, until: 0 }),
      JSON.stringify({ v: 1, type: 'revocation', jti: 'x'.repeat(5_000), until: now + 60 }),
      JSON.stringify({ v: 2, type: 'revocation', jti: `good-${channel}`, until: now + 60 }),
      JSON.stringify({ v: 1, type: 'revocation', sub: 'actor-bob', issuedBefore: now + 1, until: now + 60 }),
    ]) await a.pair.raw(channel, message);
    // A forged revocation of another subject takes effect (it can only deny)…
    const bob = live({ jti: `bob-${channel}`, sub: 'actor-bob' });
    await refusedWithin(a.authz, bob, 1_000);
    // …and nothing sent undid the victim's, nor touched the good token (v: 2 is not understood).
    await expect(a.authz.authenticate(victim)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    expect((await a.authz.authenticate(good)).claims.jti).toBe(`good-${channel}`);
  });
});
