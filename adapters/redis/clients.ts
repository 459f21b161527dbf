/**
 * node-redis (v4 or later) and ioredis clients, told apart by their shape and reduced to what the
 * hint channel needs: publish, subscribe, and the few sorted-set commands that keep revocations
 * for replicas that start later. The channel imports neither package.
 */

/** What the channel needs of a client. */
export interface Client {
  readonly ready: () => boolean;
  publish(channel: string, message: string): Promise<unknown>;
  /** Starts delivering the channel's messages to `deliver`; resolves when Redis confirmed. */
  subscribe(channel: string, deliver: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, deliver: (message: string) => void): Promise<unknown>;
  /** Runs one Redis command (`ZADD`, `ZRANGEBYSCORE`, …); resolves with its reply. */
  command(args: readonly string[]): Promise<unknown>;
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
  /** node-redis */
  sendCommand?(args: string[]): Promise<unknown>;
  /** ioredis */
  call?(command: string, ...args: string[]): Promise<unknown>;
}

export function fail(message: string): never {
  throw new TypeError(`redisHints: ${message}`);
}

/** The client `value` (option `name`), or a `TypeError` saying what to pass. */
export function toClient(name: string, value: unknown): Client {
  if (value === null || value === undefined) fail(`"${name}" is required: a connected node-redis or ioredis client`);
  const c = value as Partial<EventClient> & { status?: unknown; isReady?: unknown };
  if (typeof c !== 'object' || typeof c.on !== 'function' || typeof c.publish !== 'function' || typeof c.subscribe !== 'function' || typeof c.unsubscribe !== 'function') {
    fail(`"${name}" must be a node-redis or ioredis client`);
  }
  const client = c as EventClient & { status?: unknown; isReady?: unknown };
  const onError = (listener: () => void): void => { client.on('error', listener); };
  const onReady = (listener: () => void): void => { client.on('ready', listener); };
  if (typeof client.status === 'string') return ioredisClient(client, onError, onReady);
  if (typeof client.isReady === 'boolean') return nodeRedisClient(client, onError, onReady);
  return fail(`"${name}" must be a node-redis (v4 or later) or ioredis client`);
}

/** ioredis: one 'message' event for every channel of the connection. */
function ioredisClient(client: EventClient & { status?: unknown }, onError: Client['onError'], onReady: Client['onReady']): Client {
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
    command: ([name, ...args]) => (typeof client.call === 'function' ? client.call(name as string, ...args) : Promise.reject(new Error('no call()'))),
    onError,
    onReady,
  };
}

/**
 * node-redis v4 and later: a listener per subscription, removed alone (the application may have
 * listeners of its own on the same channel of a shared subscriber).
 */
function nodeRedisClient(client: EventClient & { isReady?: unknown }, onError: Client['onError'], onReady: Client['onReady']): Client {
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
    command: (args) => (typeof client.sendCommand === 'function' ? client.sendCommand([...args]) : Promise.reject(new Error('no sendCommand()'))),
    onError,
    onReady,
  };
}
