/**
 * `iam-authz/redis` against a real `redis-server` on loopback, with node-redis and with ioredis:
 * delivery (the publisher included), defensive parsing, and an outage — SIGKILL, then a restart
 * on the same port. Skipped, with a message, where `redis-server` is not installed (`.ci/run`
 * installs it).
 */
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redisHints, type RedisHintChannel } from '../../../adapters/redis/index.js';
import type { PolicyHint } from '../../../src/policy/hints.js';
import { redisServerPath, startRedis, type RedisServer } from './redis-server.js';

if (redisServerPath === undefined) {
  console.warn('test/adapters/redis: redis-server is not installed (Debian: apt-get install -y redis-server); the Redis hint-channel tests are skipped');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 50 ms; the time it took, or a failure after `timeoutMs`. */
async function within(timeoutMs: number, condition: () => boolean | Promise<boolean>, what: string): Promise<number> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - start;
}

interface Pair {
  publisher: unknown;
  subscriber: unknown;
  /** Publishes a raw message on a channel, bypassing the hint channel. */
  raw(channel: string, message: string): Promise<unknown>;
  quit(): Promise<void>;
}

const kinds: { name: string; connect(url: string): Promise<Pair> }[] = [
  {
    name: 'node-redis',
    async connect(url) {
      const publisher = createClient({ url, socket: { reconnectStrategy: (retries: number) => Math.min(100 * (retries + 1), 500) } });
      publisher.on('error', () => {});
      const subscriber = publisher.duplicate();
      subscriber.on('error', () => {});
      await Promise.all([publisher.connect(), subscriber.connect()]);
      return {
        publisher,
        subscriber,
        raw: (channel, message) => publisher.publish(channel, message),
        async quit() { publisher.destroy(); subscriber.destroy(); },
      };
    },
  },
  {
    name: 'ioredis',
    async connect(url) {
      const options = { retryStrategy: (times: number) => Math.min(100 * times, 500), lazyConnect: true };
      const publisher = new Redis(url, options);
      const subscriber = new Redis(url, options);
      publisher.on('error', () => {});
      subscriber.on('error', () => {});
      await Promise.all([publisher.connect(), subscriber.connect()]);
      return {
        publisher,
        subscriber,
        raw: (channel, message) => publisher.publish(channel, message),
        async quit() { publisher.disconnect(); subscriber.disconnect(); },
      };
    },
  },
];

const hint = (changeId: string): PolicyHint => ({ issuer: 'https://iam.example.com/authentication/v1', application: 'fleet', changeId });

describe('redisHints options', () => {
  const client = { on() {}, publish: async () => 0, subscribe: async () => 0, unsubscribe: async () => 0, status: 'ready' };
  it.each([
    [{ publisher: undefined, subscriber: client }, /"publisher" is required/],
    [{ publisher: null, subscriber: client }, /"publisher" is required/],
    [{ publisher: client, subscriber: {} }, /"subscriber" must be a node-redis or ioredis client/],
    [{ publisher: client, subscriber: client }, /"subscriber" must be a second connection/],
    [{ publisher: client, subscriber: { ...client }, channel: null }, /"channel" must not be null/],
    [{ publisher: client, subscriber: { ...client }, channel: '' }, /"channel" must be a non-empty string/],
    [{ publisher: client, subscriber: { ...client }, chanel: 'x' }, /unknown option "chanel"/],
  ])('refuses %o with a TypeError naming the option', (options, message) => {
    expect(() => redisHints(options as never)).toThrow(TypeError);
    expect(() => redisHints(options as never)).toThrow(message);
  });
});

describe.skipIf(redisServerPath === undefined).each(kinds)('redisHints over a real redis-server, with $name', (kind) => {
  let redis: RedisServer;
  const pairs: Pair[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason); };
  let n = 0;

  beforeAll(async () => {
    redis = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await redis.stop();
  });
  afterEach(async () => {
    await Promise.all(pairs.splice(0).map((p) => p.quit()));
    expect(unhandled).toStrictEqual([]);
  });

  async function replica(channel: string): Promise<{ hints: RedisHintChannel; pair: Pair; received: PolicyHint[] }> {
    const pair = await kind.connect(redis.url);
    pairs.push(pair);
    const hints = redisHints({ publisher: pair.publisher, subscriber: pair.subscriber, channel });
    const received: PolicyHint[] = [];
    let probed = false;
    hints.subscribe((h) => {
      if ((h as PolicyHint).changeId === 'probe') probed = true;
      else received.push(h as PolicyHint);
    });
    // The subscription is confirmed asynchronously: wait until a probe comes back.
    await within(5_000, async () => {
      await hints.publish(hint('probe'));
      return probed;
    }, 'subscription');
    return { hints, pair, received };
  }

  it('delivers a hint to every replica, the publisher included', async () => {
    const channel = `hints-${n++}`;
    const [a, b, c] = await Promise.all([replica(channel), replica(channel), replica(channel)]);
    expect(a.hints.connected).toBe(true);
    await a.hints.publish(hint('c-2'));
    await within(5_000, () => [a, b, c].every((r) => r.received.some((h) => h.changeId === 'c-2')), 'delivery');
    for (const r of [a, b, c]) expect(r.received).toStrictEqual([hint('c-2')]);
    expect(a.hints.stats.published).toBeGreaterThanOrEqual(1);
  });

  it('stops delivering after unsubscribe, which is idempotent', async () => {
    const channel = `hints-${n++}`;
    const a = await replica(channel);
    const other: PolicyHint[] = [];
    const unsubscribe = a.hints.subscribe((h) => { if ((h as PolicyHint).changeId !== 'probe') other.push(h as PolicyHint); });
    await a.hints.publish(hint('before'));
    await within(5_000, () => other.length === 1, 'delivery');
    unsubscribe();
    unsubscribe();
    await a.hints.publish(hint('after'));
    await within(5_000, () => a.received.some((h) => h.changeId === 'after'), 'delivery to the remaining listener');
    expect(other.map((h) => h.changeId)).toStrictEqual(['before']);
  });

  it.runIf(kind.name === 'node-redis')('unsubscribing leaves the application\'s own listener on a shared subscriber alone', async () => {
    const channel = `hints-${n++}`;
    const pair = await kind.connect(redis.url);
    pairs.push(pair);
    const own: string[] = [];
    await (pair.subscriber as { subscribe(channel: string, listener: (message: string) => void): Promise<void> }).subscribe(channel, (message) => { own.push(message); });
    const hints = redisHints({ publisher: pair.publisher, subscriber: pair.subscriber, channel });
    const seen: PolicyHint[] = [];
    const unsubscribe = hints.subscribe((h) => { seen.push(h as PolicyHint); });
    await within(5_000, async () => {
      await hints.publish(hint('probe'));
      return seen.length > 0;
    }, 'subscription');
    unsubscribe();
    await pair.raw(channel, 'the application\'s own message');
    await within(5_000, () => own.includes('the application\'s own message'), 'the application\'s listener');
  });

  it('drops malformed, oversized and forged messages without an error, and keeps only the three fields', async () => {
    const channel = `hints-${n++}`;
    const a = await replica(channel);
    const throwing = a.hints.subscribe(() => { throw new Error('a listener that throws'); });
    const good = { v: 1, ...hint('ok') };
    const bad = [
      'not json',
      '[]',
      'null',
      '42',
      JSON.stringify({ ...good, v: 2 }),
      JSON.stringify({ issuer: good.issuer, application: 'fleet', changeId: 'no-version' }),
      JSON.stringify({ ...good, changeId: 7 }),
      JSON.stringify({ ...good, changeId: '' }),
      JSON.stringify({ ...good, application: 'x'.repeat(1025) }),
      JSON.stringify({ ...good, issuer: { toString: 'x' } }),
      'x'.repeat(1_000_000),
    ];
    for (const message of bad) await a.pair.raw(channel, message);
    // A forged message with extra members: the receiver gets only issuer, application and changeId.
    await a.pair.raw(channel, JSON.stringify({ ...good, changeId: 'forged', policy: { roles: [{ name: 'admin' }] }, __proto__: { granted: true } }));
    await a.pair.raw(channel, JSON.stringify(good));
    await within(5_000, () => a.received.some((h) => h.changeId === 'ok'), 'delivery of the good message');
    expect(a.received).toStrictEqual([hint('forged'), hint('ok')]);
    expect(Object.keys(a.received[0]!)).toStrictEqual(['issuer', 'application', 'changeId']);
    expect(a.hints.stats.dropped).toBe(bad.length);
    throwing();
  });

  it('publish never rejects on a malformed hint', async () => {
    const a = await replica(`hints-${n++}`);
    const before = a.hints.stats.publishFailed;
    await expect(a.hints.publish({ issuer: 'i', application: 'a', changeId: 'x'.repeat(1025) })).resolves.toBeUndefined();
    await expect(a.hints.publish(null as never)).resolves.toBeUndefined();
    expect(a.hints.stats.publishFailed).toBe(before + 2);
  });

  it('reports a killed redis as disconnected, publishes without rejecting, and reconnects by itself on restart', async () => {
    const channel = `hints-${n++}`;
    const [a, b] = await Promise.all([replica(channel), replica(channel)]);
    await redis.kill();
    const down = await within(5_000, () => !a.hints.connected && !b.hints.connected, 'disconnected');
    expect(down).toBeLessThan(5_000);
    const failedBefore = a.hints.stats.publishFailed;
    await expect(a.hints.publish(hint('during-outage'))).resolves.toBeUndefined();
    expect(a.hints.stats.publishFailed).toBe(failedBefore + 1);
    await redis.restart();
    await within(8_000, () => a.hints.connected && b.hints.connected, 'reconnected');
    // The clients re-subscribe on their own; a hint published now reaches the other replica.
    await within(5_000, async () => {
      await a.hints.publish(hint('after-restart'));
      return b.received.some((h) => h.changeId === 'after-restart');
    }, 'delivery after the restart');
    expect(b.received.some((h) => h.changeId === 'during-outage')).toBe(false);
    await sleep(100);
    expect(unhandled).toStrictEqual([]);
  }, 30_000);
});
