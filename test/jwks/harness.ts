/**
 * Shared pieces of the JWKS tests: a hand-driven clock, a recorder for the JWKS diagnostics
 * channels (so a test can wait for a background fetch instead of sleeping), and small assertions.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { expect } from 'vitest';
import { channels, IamAuthzError, type IamAuthzErrorCode } from '../../src/index.js';
import { NOW_MS } from '../helpers/fixtures.js';

export const JWKS_PATH = '/authentication/v1/.well-known/jwks.json';

export interface Clock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

/** A clock that only moves when told to; starts at {@link NOW_MS}. */
export function manualClock(start = NOW_MS): Clock {
  let t = start;
  return {
    now: () => t,
    advance(ms) { t += ms; },
    set(ms) { t = ms; },
  };
}

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

/** Asserts that `promise` rejects with an {@link IamAuthzError} of exactly this code and status. */
export async function expectAuthzError(promise: Promise<unknown>, code: IamAuthzErrorCode, status: number): Promise<IamAuthzError> {
  const error: unknown = await promise.then(
    () => { throw new Error(`expected rejection with ${code}, but it resolved`); },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(IamAuthzError);
  expect(error).toMatchObject({ code, status });
  return error as IamAuthzError;
}

/** Reason recorded by the JWKS client for the failure behind a 503 (`UpstreamError.reason`). */
export function upstreamReason(error: IamAuthzError): unknown {
  return (error.cause as { reason?: unknown } | undefined)?.reason;
}
