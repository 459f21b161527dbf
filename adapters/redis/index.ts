/**
 * `iam-authz/redis`: a changeId hint channel ({@link HintChannel}) over Redis pub/sub, for
 * `policy.hints`. It takes two connections the caller made and connected — node-redis (v4 or later)
 * or ioredis clients, told apart by their shape — and imports neither package: `redis` and
 * `ioredis` are optional peer dependencies. Reconnection is the clients' own; both re-subscribe by
 * themselves when Redis comes back.
 *
 * A hint only makes a replica revalidate its cached policy with the policy API; it never carries a
 * policy. So a message forged or replayed by anyone who can publish on the Redis channel can cause
 * a request, never a grant.
 */
import type { HintChannel, PolicyHint } from '../../src/index.js';

/** Options of {@link redisHints}. */
export interface RedisHintsOptions {
  /** A connected node-redis (`createClient()`) or ioredis (`new Redis()`) client that publishes hints. It may be shared with other commands. */
  publisher: unknown;
  /**
   * A second connected client of the same kind, used only for this channel's subscription (a Redis
   * connection that has subscribed can run no other commands; node-redis: `publisher.duplicate()`).
   */
  subscriber: unknown;
  /** The Redis pub/sub channel name, the same on every replica of the fleet. Default `'iam-authz:policy-hints'`. */
  channel?: string;
}

/** Counters of a {@link RedisHintChannel}, since it was made. */
export interface RedisHintStats {
  /** Hints handed to Redis. */
  readonly published: number;
  /** Hints not sent: Redis was not reachable, the publish command failed, or the hint was malformed. */
  readonly publishFailed: number;
  /** Hints received and passed to the listeners. */
  readonly received: number;
  /** Messages received on the channel and dropped: not JSON, too long, or not a hint. */
  readonly dropped: number;
}

/** The channel {@link redisHints} makes. */
export interface RedisHintChannel extends HintChannel {
  /**
   * Sends a hint; never rejects. While Redis is not reachable the hint is dropped at once (counted
   * in `stats.publishFailed`) rather than queued: a late hint is worthless, and the policy's TTL
   * still bounds how stale a replica can be.
   */
  publish(hint: PolicyHint): Promise<void>;
  /** Whether both connections are ready now (node-redis `isReady`, ioredis `status === 'ready'`). */
  readonly connected: boolean;
  /** What went through the channel, for metrics and tests. */
  readonly stats: RedisHintStats;
}

/** The longest hint field accepted, in characters. */
const MAX_FIELD = 1024;
/** The longest message read from the channel, in characters (three full fields and the JSON around them). */
const MAX_MESSAGE = 3 * MAX_FIELD * 6 + 128;
const DEFAULT_CHANNEL = 'iam-authz:policy-hints';
const OPTION_KEYS = ['publisher', 'subscriber', 'channel'];

type Listener = (hint: PolicyHint) => void;

/** The two client families, reduced to what the channel needs. */
interface Client {
  readonly ready: () => boolean;
  publish(channel: string, message: string): Promise<unknown>;
  /** Starts delivering the channel's messages to `deliver`; resolves when Redis confirmed. */
  subscribe(channel: string, deliver: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, deliver: (message: string) => void): Promise<unknown>;
  /** Adds an `'error'` listener, so a dropped connection never becomes an unhandled `'error'` event. */
  onError(listener: () => void): void;
  onReady(listener: () => void): void;
}

interface EventClient {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off?(event: string, listener: (...args: never[]) => void): unknown;
  removeListener?(event: string, listener: (...args: never[]) => void): unknown;
  publish(channel: string, message: string): Promise<unknown>;
  subscribe(...args: unknown[]): Promise<unknown>;
  unsubscribe(...args: unknown[]): Promise<unknown>;
}

function fail(message: string): never {
  throw new TypeError(`redisHints: ${message}`);
}

function toClient(name: string, value: unknown): Client {
  if (value === null || value === undefined) fail(`"${name}" is required: a connected node-redis or ioredis client`);
  const c = value as Partial<EventClient> & { status?: unknown; isReady?: unknown };
  if (typeof c !== 'object' || typeof c.on !== 'function' || typeof c.publish !== 'function' || typeof c.subscribe !== 'function' || typeof c.unsubscribe !== 'function') {
    fail(`"${name}" must be a node-redis or ioredis client`);
  }
  const client = c as EventClient & { status?: unknown; isReady?: unknown };
  const onError = (listener: () => void): void => { client.on('error', listener); };
  const onReady = (listener: () => void): void => { client.on('ready', listener); };
  if (typeof client.status === 'string') {
    // ioredis: one 'message' event for every channel of the connection.
    const routes = new Map<(message: string) => void, (channel: string, message: unknown) => void>();
    return {
      ready: () => client.status === 'ready',
      publish: (channel, message) => client.publish(channel, message),
      subscribe(channel, deliver) {
        const route = (ch: string, message: unknown): void => {
          if (ch === channel && typeof message === 'string') deliver(message);
        };
        // Subscribed again after a failure: one route per listener, never a second one.
        const previous = routes.get(deliver);
        if (previous) (client.off ?? client.removeListener)?.call(client, 'message', previous);
        routes.set(deliver, route);
        client.on('message', route);
        return client.subscribe(channel);
      },
      unsubscribe(channel, deliver) {
        const route = routes.get(deliver);
        routes.delete(deliver);
        if (route) (client.off ?? client.removeListener)?.call(client, 'message', route);
        return client.unsubscribe(channel);
      },
      onError,
      onReady,
    };
  }
  if (typeof client.isReady === 'boolean') {
    // node-redis v4 and later: a listener per subscription, removed alone (the application may
    // have listeners of its own on the same channel of a shared subscriber).
    const listeners = new Map<(message: string) => void, (message: unknown) => void>();
    return {
      ready: () => client.isReady === true,
      publish: (channel, message) => client.publish(channel, message),
      subscribe(channel, deliver) {
        const listener = listeners.get(deliver) ?? ((message: unknown): void => {
          if (typeof message === 'string') deliver(message);
        });
        listeners.set(deliver, listener);
        return client.subscribe(channel, listener);
      },
      unsubscribe(channel, deliver) {
        const listener = listeners.get(deliver);
        listeners.delete(deliver);
        return listener ? client.unsubscribe(channel, listener) : Promise.resolve();
      },
      onError,
      onReady,
    };
  }
  return fail(`"${name}" must be a node-redis (v4 or later) or ioredis client`);
}

function validField(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_FIELD;
}

/** The hint in `message`, or `undefined` for anything else: only the three fields are kept. */
function parseHint(message: string): PolicyHint | undefined {
  if (message.length > MAX_MESSAGE) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { v, issuer, application, changeId } = value as Record<string, unknown>;
  if (v !== 1 || !validField(issuer) || !validField(application) || !validField(changeId)) return undefined;
  return Object.freeze({ issuer, application, changeId });
}

/**
 * A {@link HintChannel} over Redis pub/sub, for `policy.hints`. Messages are JSON
 * `{"v":1,"issuer":…,"application":…,"changeId":…}`; a message of any other shape, or with a field
 * that is not a string of 1 to 1024 characters, is dropped silently (counted in `stats.dropped`).
 * `publish` never rejects, and a listener that throws never reaches the Redis client. An `'error'`
 * listener is added to both clients, so a lost connection never crashes the process through an
 * unhandled `'error'` event.
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
  if ((options.channel as unknown) === null) fail('"channel" must not be null (leave it out, or pass undefined, for the default)');
  const channel = options.channel ?? DEFAULT_CHANNEL;
  if (typeof channel !== 'string' || channel.length === 0) fail('"channel" must be a non-empty string');

  const stats = { published: 0, publishFailed: 0, received: 0, dropped: 0 };
  const ignoreError = (): void => { /* the client reconnects by itself; `connected` tells the state */ };
  publisher.onError(ignoreError);
  subscriber.onError(ignoreError);

  const listeners = new Set<Listener>();
  let subscribed = false;
  let subscription: 'pending' | 'failed' | 'done' = 'done';
  const deliver = (message: string): void => {
    const hint = parseHint(message);
    if (hint === undefined) {
      stats.dropped++;
      return;
    }
    stats.received++;
    for (const listener of [...listeners]) {
      try {
        listener(hint);
      } catch {
        // A listener's failure is its own; it never reaches the Redis client or the other listeners.
      }
    }
  };

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
    if (subscribed && subscription === 'failed') subscribe();
  });

  return {
    get connected() {
      // A subscription the server refused (an ACL, say) receives nothing: not connected.
      return publisher.ready() && subscriber.ready() && subscription !== 'failed';
    },
    get stats() {
      return { ...stats };
    },
    async publish(hint) {
      const h = hint as Partial<PolicyHint> | null;
      if (typeof h !== 'object' || h === null || !validField(h.issuer) || !validField(h.application) || !validField(h.changeId) || !publisher.ready()) {
        stats.publishFailed++;
        return;
      }
      try {
        await publisher.publish(channel, JSON.stringify({ v: 1, issuer: h.issuer, application: h.application, changeId: h.changeId }));
        stats.published++;
      } catch {
        stats.publishFailed++;
      }
    },
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
