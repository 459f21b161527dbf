/**
 * `iam-authz/redis`: a hint channel ({@link HintChannel}) over Redis pub/sub, for `policy.hints`.
 * It takes two connections the caller made and connected — node-redis (v4 or later) or ioredis
 * clients, told apart by their shape (clients.ts) — and imports neither package: `redis` and
 * `ioredis` are optional peer dependencies. Reconnection is the clients' own; both re-subscribe by
 * themselves when Redis comes back.
 *
 * A policy hint only makes a replica revalidate its cached policy with the policy API; it never
 * carries a policy. A revocation only ever adds to a replica's revocation list. So a message forged
 * or replayed by anyone who can publish on the Redis channel can cause a request or refuse tokens,
 * never admit one. Revocations are also kept in a sorted set (score: until when) for replicas that
 * start later, and read again after a reconnection.
 */
import type { HintChannel } from '../../src/index.js';
import { fail, toClient } from './clients.js';
import { formatHint, isRevocation, parseMessage, type Hint, type PolicyHint, type RevocationHint } from './messages.js';

/** Options of {@link redisHints}. */
export interface RedisHintsOptions {
  /** A connected node-redis (`createClient()`) or ioredis (`new Redis()`) client that publishes hints and keeps revocations. It may be shared with other commands. */
  publisher: unknown;
  /**
   * A second connected client of the same kind, used only for this channel's subscription (a Redis
   * connection that has subscribed can run no other commands; node-redis: `publisher.duplicate()`).
   */
  subscriber: unknown;
  /** The Redis pub/sub channel name, the same on every replica of the fleet. Default `'iam-authz:policy-hints'`. */
  channel?: string;
  /** The sorted set that keeps the revocations in force. Default: the channel name followed by `:revocations`. */
  revocationsKey?: string;
}

/** Counters of a {@link RedisHintChannel}, since it was made. */
export interface RedisHintStats {
  /** Hints handed to Redis. */
  readonly published: number;
  /** Hints not sent: Redis was not reachable, the publish command failed, or the hint was malformed. */
  readonly publishFailed: number;
  /** Hints received and passed to the listeners (revocations read again from the sorted set included). */
  readonly received: number;
  /** Messages received on the channel and dropped: not JSON, too long, or not a hint. */
  readonly dropped: number;
}

/** The channel {@link redisHints} makes. */
export interface RedisHintChannel extends HintChannel {
  /**
   * Sends a hint; never rejects. While Redis is not reachable the hint is dropped at once (counted
   * in `stats.publishFailed`) rather than queued: a late policy hint is worthless, and the policy's
   * TTL still bounds how stale a replica can be; a revocation is in force where it was made.
   */
  publish(hint: Hint): Promise<void>;
  /** The revocations in the sorted set that are still in force; rejects while Redis is not reachable. */
  revocationsInForce(): Promise<readonly RevocationHint[]>;
  /** Whether both connections are ready now (node-redis `isReady`, ioredis `status === 'ready'`). */
  readonly connected: boolean;
  /** What went through the channel, for metrics and tests. */
  readonly stats: RedisHintStats;
}

const DEFAULT_CHANNEL = 'iam-authz:policy-hints';
const OPTION_KEYS = ['publisher', 'subscriber', 'channel', 'revocationsKey'];
/** Revocations read from the sorted set per command. */
const PAGE = 10_000;

type Listener = (hint: PolicyHint | RevocationHint) => void;

/**
 * A {@link HintChannel} over Redis pub/sub, for `policy.hints`. Messages are JSON
 * `{"v":1,"issuer":…,"application":…,"changeId":…}` (policy hints) or `{"v":1,"type":"revocation",…}`;
 * a message of any other shape, or with a field that is not a string of 1 to 1024 characters, is
 * dropped silently (counted in `stats.dropped`). `publish` never rejects, and a listener that
 * throws never reaches the Redis client. An `'error'` listener is added to both clients, so a lost
 * connection never crashes the process through an unhandled `'error'` event.
 *
 * @throws {TypeError} naming the option when a client is missing or not a node-redis/ioredis client.
 */
export function redisHints(options: RedisHintsOptions): RedisHintChannel {
  if (typeof options !== 'object' || (options as unknown) === null) fail('options must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) fail(`unknown option "${key}"`);
  }
  const publisher = toClient('publisher', options.publisher);
  const subscriber = toClient('subscriber', options.subscriber);
  if (options.subscriber === options.publisher) fail('"subscriber" must be a second connection, not "publisher" (a subscribed connection runs no other commands)');
  for (const name of ['channel', 'revocationsKey'] as const) {
    if ((options[name] as unknown) === null) fail(`"${name}" must not be null (leave it out, or pass undefined, for the default)`);
  }
  const channel = options.channel ?? DEFAULT_CHANNEL;
  if (typeof channel !== 'string' || channel.length === 0) fail('"channel" must be a non-empty string');
  const key = options.revocationsKey ?? `${channel}:revocations`;
  if (typeof key !== 'string' || key.length === 0) fail('"revocationsKey" must be a non-empty string');

  const stats = { published: 0, publishFailed: 0, received: 0, dropped: 0 };
  const ignoreError = (): void => { /* the client reconnects by itself; `connected` tells the state */ };
  publisher.onError(ignoreError);
  subscriber.onError(ignoreError);

  const listeners = new Set<Listener>();
  let subscribed = false;
  let subscription: 'pending' | 'failed' | 'done' = 'done';
  const hand = (hint: PolicyHint | RevocationHint): void => {
    stats.received++;
    for (const listener of [...listeners]) {
      try {
        listener(hint);
      } catch {
        // A listener's failure is its own; it never reaches the Redis client or the other listeners.
      }
    }
  };
  const deliver = (message: string): void => {
    const hint = parseMessage(message);
    if (hint === undefined) stats.dropped++;
    else hand(hint);
  };

  async function revocationsInForce(): Promise<readonly RevocationHint[]> {
    const now = String(Math.floor(Date.now() / 1000));
    const found: RevocationHint[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const page = await publisher.command(['ZRANGEBYSCORE', key, now, '+inf', 'LIMIT', String(offset), String(PAGE)]);
      if (!Array.isArray(page)) throw new Error('redisHints: ZRANGEBYSCORE answered something else than a list');
      for (const member of page) {
        const hint = typeof member === 'string' ? parseMessage(member) : undefined;
        if (hint !== undefined && isRevocation(hint)) found.push(hint);
      }
      if (page.length < PAGE) return found;
    }
  }

  // Queued by the client while disconnected, and renewed by it after a reconnection; refused only
  // when the client queues nothing offline — then tried again when it is next ready.
  const subscribe = (): void => {
    subscription = 'pending';
    subscriber.subscribe(channel, deliver).then(
      () => { if (subscription === 'pending') subscription = 'done'; },
      () => { if (subscription === 'pending') subscription = 'failed'; },
    );
  };
  subscriber.onReady(() => {
    if (!subscribed) return;
    if (subscription === 'failed') subscribe();
    // Revocations made while this replica was cut off: read them again (adding one twice is harmless).
    revocationsInForce().then((found) => { for (const r of found) hand(r); }, () => { /* still down: the next ready tries again */ });
  });

  async function publish(hint: Hint): Promise<void> {
    const message = formatHint(hint);
    if (message === undefined || !publisher.ready()) {
      stats.publishFailed++;
      return;
    }
    try {
      const checked = parseMessage(message) as Hint;
      if (isRevocation(checked)) {
        await publisher.command(['ZADD', key, String(checked.until), message]);
        // The set keeps what is in force: the rest goes (best effort; the readers skip it anyway).
        void publisher.command(['ZREMRANGEBYSCORE', key, '-inf', `(${Math.floor(Date.now() / 1000)}`]).catch(() => undefined);
      }
      await publisher.publish(channel, message);
      stats.published++;
    } catch {
      stats.publishFailed++;
    }
  }

  return {
    get connected() {
      // A subscription the server refused (an ACL, say) receives nothing: not connected.
      return publisher.ready() && subscriber.ready() && subscription !== 'failed';
    },
    get stats() {
      return { ...stats };
    },
    publish,
    revocationsInForce,
    subscribe(listener) {
      if (typeof listener !== 'function') throw new TypeError('redisHints: subscribe(listener): listener must be a function');
      // A wrapper per call, so subscribing the same function twice gives two independent subscriptions.
      const entry: Listener = (hint) => { listener(hint); };
      listeners.add(entry);
      if (!subscribed) {
        subscribed = true;
        subscribe();
      }
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        listeners.delete(entry);
        if (listeners.size === 0 && subscribed) {
          subscribed = false;
          subscriber.unsubscribe(channel, deliver).catch(() => { /* the connection is gone, and the subscription with it */ });
        }
      };
    },
  };
}
