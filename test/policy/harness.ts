/**
 * Shared pieces of the policy-client tests: authorizers with a static JWKS (so the only network
 * traffic is the policy API), a recorder for the `iam-authz:policy:*` and `iam-authz:decision:denied`
 * channels (so a test waits for a background fetch instead of sleeping), and fault handlers for the
 * loopback policy server of test/helpers/policy-server.ts. Key-free: it imports the key-free helper
 * modules only, and signs with `STATIC_KEY`.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, vi } from 'vitest';
import { channels, type Authorizer, type AuthorizerOptions, type Identity, type PolicyOptions } from '../../src/index.js';
import { Authorizers as TrackedAuthorizers } from '../helpers/authorizers.js';
import { Clock } from '../helpers/clock.js';
import { defined } from '../helpers/hooks.js';
import { examplePolicy, servePolicy, startPolicyServer, uniqueApp, VEHICLE, type PolicyServer } from '../helpers/policy-server.js';
import { claims as standardClaims, signClaims, STATIC_KEY } from '../helpers/tokens.js';

export { expectAuthzError, upstreamReason } from '../helpers/errors.js';

/** Issuer base of the tokens; keys are static, so nothing is fetched from it. */
export const BASE = 'https://iam.example.test';

export const VIN1 = { type: 'VIN', value: 'WVW1' } as const;
export const READ = { service: VEHICLE, permission: 'READ', resource: VIN1 } as const;
export const WRITE = { service: VEHICLE, permission: 'WRITE', resource: VIN1 } as const;

/**
 * A token of the standard claims (test/helpers/tokens.ts) for `baseUrl`, signed with the fixed
 * {@link STATIC_KEY}: importing this harness generates no key.
 */
export function mint(baseUrl: string, overrides: Record<string, unknown> = {}): string {
  return signClaims(standardClaims(baseUrl, overrides), STATIC_KEY);
}

/** The static JWK Set that verifies {@link mint}'s tokens. */
export const TEST_JWKS = { keys: [STATIC_KEY.jwk] };

/** Creates authorizers and closes them all at the end. */
export class Authorizers extends TrackedAuthorizers {
  /** An authorizer with a static JWKS for {@link BASE} and `policyUrl` on the loopback server. */
  forServer(server: PolicyServer, clock: Clock, policy: PolicyOptions, extra: Partial<AuthorizerOptions> = {}): Authorizer {
    return this.create({ baseUrl: BASE, localJwks: TEST_JWKS, policyUrl: `${server.url}/policy/v1/roles`, now: clock.now, policy, ...extra });
  }
}

/** Mints a token for `app` (default ars: DRIVER on VIN=WVW1) and verifies it. */
export async function identityFor(authz: Authorizer, app: string, claims: Record<string, unknown> = {}): Promise<Identity> {
  return authz.authenticate(`Bearer ${mint(BASE, { app, ...claims })}`);
}

/** Holds policy responses until released: shows that a stale answer did not wait for the API. */
export class Gate {
  readonly #held: (() => void)[] = [];
  #waiters: (() => void)[] = [];
  get held(): number {
    return this.#held.length;
  }
  /** A fault hook for the policy server: holds the request, then answers with `server.policy`. */
  fault(server: PolicyServer) {
    return (req: IncomingMessage, res: ServerResponse): boolean => {
      this.hold(() => { servePolicy(req, res, server.policy); });
      return true;
    };
  }
  /** Holds `answer` (a request's answer) until released. */
  hold(answer: () => void): void {
    this.#held.push(answer);
    for (const w of this.#waiters.splice(0)) w();
  }
  /** Resolves once at least `count` requests are held. */
  async until(count: number): Promise<void> {
    const deadline = Date.now() + 3000;
    while (this.#held.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} held requests, saw ${this.#held.length}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
  releaseAll(): void {
    for (const answer of this.#held.splice(0)) answer();
  }
}

export type PolicyEventType = 'fetched' | 'revalidated' | 'changed' | 'stale-served' | 'failed' | 'denied';

export interface PolicyEvent {
  type: PolicyEventType;
  /** `applicationId` of policy events, `app` of denial events. */
  app: string;
  message: Record<string, unknown>;
}

export interface PolicyEventRecorder {
  events: PolicyEvent[];
  /** Types of the events recorded so far, in order. */
  types(): PolicyEventType[];
  /** Resolves once `count` events of `type` have been seen (fails after 3 s). */
  until(type: PolicyEventType, count?: number): Promise<PolicyEvent[]>;
  dispose(): void;
}

const CHANNEL_OF: Record<PolicyEventType, string> = {
  fetched: channels.policyFetched,
  revalidated: channels.policyRevalidated,
  changed: channels.policyChanged,
  'stale-served': channels.policyStale,
  failed: channels.policyFailed,
  denied: channels.decisionDenied,
};

/** Records policy and denial events of application `app` only. */
export function recordPolicyEvents(app: string): PolicyEventRecorder {
  const events: PolicyEvent[] = [];
  let waiters: (() => void)[] = [];
  const handlers = (Object.keys(CHANNEL_OF) as PolicyEventType[]).map((type) => {
    const handler = (message: unknown): void => {
      const m = message as Record<string, unknown>;
      const of = type === 'denied' ? m.app : m.applicationId;
      if (of !== app) return;
      events.push({ type, app, message: m });
      const wake = waiters;
      waiters = [];
      for (const w of wake) w();
    };
    subscribe(CHANNEL_OF[type], handler);
    return [type, handler] as const;
  });
  const count = (type: PolicyEventType): number => events.filter((e) => e.type === type).length;
  return {
    events,
    types: () => events.map((e) => e.type),
    async until(type, wanted = 1) {
      const deadline = Date.now() + 3000;
      while (count(type) < wanted) {
        if (Date.now() > deadline) throw new Error(`expected ${wanted} "${type}" events, saw [${events.map((e) => e.type).join(', ')}]`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
      return events.filter((e) => e.type === type);
    },
    dispose() {
      for (const [type, handler] of handlers) unsubscribe(CHANNEL_OF[type], handler);
    },
  };
}

/** What {@link usePolicyApi} gives a test file; `server` is the file's, the rest is new in every test. */
export interface PolicyApiContext {
  readonly server: PolicyServer;
  readonly clock: Clock;
  /** A fresh application id; `server` serves the example policy (changeId `c1`) for it. */
  readonly app: string;
  /** Events of {@link app} (only when `usePolicyApi` records them). */
  readonly events: PolicyEventRecorder;
  /** Closed after every test. */
  readonly authorizers: Authorizers;
  /** `authorizers.forServer(server, clock, policy, extra)`. */
  authorizer(policy: PolicyOptions, extra?: Partial<AuthorizerOptions>): Authorizer;
}

/**
 * Registers the hooks of a policy test file: one loopback policy API for the file; before every
 * test a unique application, the example policy (changeId `c1`) for it, no fault, an empty request
 * log, a new clock and (unless `events: false`) an event recorder; after every test the recorder is
 * disposed and the authorizers are closed.
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

export function usePolicyApi({ events: record = true }: { events?: boolean } = {}): PolicyApiContext {
  withoutJitter();
  const authorizers = new Authorizers();
  let server: PolicyServer | undefined;
  let clock: Clock | undefined;
  let app: string | undefined;
  let events: PolicyEventRecorder | undefined;

  beforeAll(async () => { server = await startPolicyServer(); });
  afterAll(() => server?.close());
  beforeEach(() => {
    app = uniqueApp();
    const s = defined(server, 'server');
    s.policy = examplePolicy('c1', app);
    s.fault = undefined;
    s.requests.length = 0;
    clock = new Clock();
    events = record ? recordPolicyEvents(app) : undefined;
  });
  afterEach(async () => {
    events?.dispose();
    events = undefined;
    await authorizers.closeAll();
  });

  return {
    get server() { return defined(server, 'server'); },
    get clock() { return defined(clock, 'clock'); },
    get app() { return defined(app, 'app'); },
    get events() { return defined(events, 'events'); },
    authorizers,
    authorizer(policy, extra) {
      return authorizers.forServer(defined(server, 'server'), defined(clock, 'clock'), policy, extra);
    },
  };
}
