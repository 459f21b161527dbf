/**
 * Shared pieces of the JWKS tests: a recorder for the JWKS diagnostics channels (so a test can wait
 * for a background fetch instead of sleeping), small assertions, and the hooks of a test file
 * against a loopback JWKS ({@link useJwksServer}): the loopback IAM of test/helpers/iam.ts, new in
 * every test, since these tests replace its handler with every kind of broken answer.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, vi } from 'vitest';
import { channels, type Authorizer, type AuthorizerOptions } from '../../src/index.js';
import { Authorizers, defined, startIam, type Clock, type Iam } from '../helpers/index.js';

export const JWKS_PATH = '/authentication/v1/.well-known/jwks.json';

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

export interface JwksEvent {
  type: 'refreshed' | 'failed';
  uri: string;
  keyCount?: number;
  removedKids?: string[];
  reason?: string;
  error?: unknown;
}

export interface EventRecorder {
  events: JwksEvent[];
  /** Resolves once `count` events for this recorder's uri prefix have been seen (fails after 3 s). */
  until(count: number): Promise<JwksEvent[]>;
  dispose(): void;
}

/** Records `iam-authz:jwks:*` events whose uri starts with `uriPrefix`. */
export function recordJwksEvents(uriPrefix: string): EventRecorder {
  const events: JwksEvent[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const wake = (): void => {
    for (const w of [...waiters]) {
      if (events.length >= w.count) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const onRefreshed = (message: unknown): void => {
    const m = message as Omit<JwksEvent, 'type'>;
    if (!m.uri.startsWith(uriPrefix)) return;
    events.push({ type: 'refreshed', ...m });
    wake();
  };
  const onFailed = (message: unknown): void => {
    const m = message as Omit<JwksEvent, 'type'>;
    if (!m.uri.startsWith(uriPrefix)) return;
    events.push({ type: 'failed', ...m });
    wake();
  };
  subscribe(channels.jwksRefreshed, onRefreshed);
  subscribe(channels.jwksFailed, onFailed);
  return {
    events,
    until(count) {
      if (events.length >= count) return Promise.resolve(events);
      return new Promise<JwksEvent[]>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`expected ${count} JWKS events, saw ${events.length}`));
        }, 3000);
        waiters.push({ count, resolve: () => { clearTimeout(timer); resolve(events); } });
      });
    },
    dispose() {
      unsubscribe(channels.jwksRefreshed, onRefreshed);
      unsubscribe(channels.jwksFailed, onFailed);
    },
  };
}

export { expectAuthzError, upstreamReason } from '../helpers/errors.js';

/** What {@link useJwksServer} gives a test file: all of it new in every test. */
export interface JwksContext {
  /** A loopback IAM whose JWKS serves `KEY`. */
  readonly server: Iam;
  /** The server's clock. */
  readonly clock: Clock;
  /** Events of {@link server} (only when `useJwksServer` records them). */
  readonly events: EventRecorder;
  /**
   * Creates an authorizer of the test, closed after it: `baseUrl` the loopback server, `now` the
   * clock, no token cache, the file's `jwks` options, then `extra`.
   */
  make(extra?: Partial<AuthorizerOptions>): Authorizer;
}

/**
 * Registers the hooks of a JWKS test file: before every test a loopback JWKS serving `KEY`, a
 * manual clock and (unless `events: false`) a recorder of the server's JWKS events; after every
 * test the authorizer is closed, the recorder disposed and the server closed.
 */
/**
 * Draws every jitter at its edge (`Math.random()` → 0): a refresh is due exactly at `ttlMs`, the
 * n-th retry waits `minRefreshIntervalMs · 2^(n-1)`, no delay before an unknown-kid refetch. The
 * jitter itself is tested in test/lib/refresher.test.ts.
 */
export function withoutJitter(): void {
  let spy: { mockRestore(): void } | undefined;
  beforeEach(() => { spy = vi.spyOn(Math, 'random').mockReturnValue(0); });
  afterEach(() => { spy?.mockRestore(); });
}

export function useJwksServer(jwks: NonNullable<AuthorizerOptions['jwks']>, { events: record = true }: { events?: boolean } = {}): JwksContext {
  withoutJitter();
  // Not the server's own authorizers: a test may close the server and go on with its authorizer.
  const authorizers = new Authorizers();
  let server: Iam | undefined;
  let events: EventRecorder | undefined;

  beforeEach(async () => {
    server = await startIam();
    events = record ? recordJwksEvents(server.url) : undefined;
  });
  afterEach(async () => {
    await authorizers.closeAll();
    events?.dispose();
    events = undefined;
    await server?.close();
  });

  return {
    get server() { return defined(server, 'server'); },
    get clock() { return defined(server, 'server').clock; },
    get events() { return defined(events, 'events'); },
    make(extra = {}) {
      const { url, clock } = defined(server, 'server');
      return authorizers.create({ baseUrl: url, now: clock.now, tokenCache: false, jwks, ...extra });
    },
  };
}
