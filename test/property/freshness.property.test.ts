/**
 * Every freshness option keeps its promise in every combination: random `ttlMs`, `maxStaleMs` and
 * `minRefreshIntervalMs` (each set or unset), random traffic, outages (500, 503 with or without
 * `Retry-After`), policy and key changes and hints (current, replayed, forged), on a fake clock,
 * checked against the reference model of freshness-model.ts — for the policy cache (through
 * `createAuthorizer`) and the key cache (the `RemoteKeySet` the authenticator uses). The IAM is a
 * real loopback server; jitter draws come from a seeded generator, so a failure replays.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import fc from 'fast-check';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, test, vi } from 'vitest';
import { channels, createAuthorizer, type HintChannel, type PolicyOptions } from '../../src/index.js';
import type { PolicyHint, RevocationHint } from '../../src/policy/hints.js';
import { resolveJwksOptions } from '../../src/jwks/options.js';
import { RemoteKeySet } from '../../src/jwks/remote-key-set.js';
import { resolvePolicyOptions } from '../../src/policy/options.js';
import { authorizerChecks as checks } from '../../src/lib/option-checks.js';
import { Clock, NOW_MS } from '../helpers/clock.js';
import { json, startLoopback, type Loopback } from '../helpers/loopback.js';
import { examplePolicy, servePolicy } from '../helpers/policy-server.js';
import { prng } from '../helpers/prng.js';
import { claims, signClaims, STATIC_KEY } from '../helpers/tokens.js';
import { FreshnessModel, type Resolved } from './freshness-model.js';

const BASE = 'https://iam.property.test';
const ISSUER = `${BASE}/authentication/v1`;
const APP = 'app-1';
const READ = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
/** Runs per cache (about 3 s for both at 300); `FRESHNESS_RUNS=5000` searches harder. */
const RUNS = Number(process.env['FRESHNESS_RUNS'] ?? 300);
/** A failure's `seed` and `path` (printed by fast-check) replay it: `FRESHNESS_SEED=… FRESHNESS_PATH=…`. */
const REPLAY = process.env['FRESHNESS_SEED'] === undefined ? {} : { seed: Number(process.env['FRESHNESS_SEED']), ...(process.env['FRESHNESS_PATH'] === undefined ? {} : { path: process.env['FRESHNESS_PATH'] }) };

/** What the fake IAM does now. */
const iam = {
  version: 1,
  grants: new Map([[1, true]]),
  up: true,
  status: 500,
  retryAfterSec: undefined as number | undefined,
  inflight: 0,
  /** When set, the next answer waits in `held` (answered from the IAM's state when the request came). */
  hold: false,
  held: [] as (() => void)[],
  /** The request targets of this run, for a failure's message. */
  seen: [] as string[],
  onFetch: (_fetch: { ok: boolean; version: number; retryAfterMs?: number | undefined }) => {},
};
let server: Loopback;

beforeAll(async () => {
  server = await startLoopback((req: IncomingMessage, res: ServerResponse) => {
    iam.inflight++;
    iam.seen.push(req.url ?? '');
    res.on('close', () => { iam.inflight--; });
    if (!iam.up) {
      iam.onFetch({ ok: false, version: iam.version, retryAfterMs: iam.status === 503 && iam.retryAfterSec !== undefined ? iam.retryAfterSec * 1000 : undefined });
      json(res, iam.status, { error: 'down' }, iam.status === 503 && iam.retryAfterSec !== undefined ? { 'retry-after': String(iam.retryAfterSec) } : {});
      return;
    }
    iam.onFetch({ ok: true, version: iam.version });
    const version = iam.version;
    const answer = (): void => {
      if (req.url?.startsWith('/jwks')) json(res, 200, { keys: keySetOf(version) });
      else servePolicy(req, res, policyOf(version));
    };
    if (!iam.hold) answer();
    else {
      iam.hold = false;
      iam.held.push(answer);
    }
  });
  // Real time is not the model's: an idle connection is never closed under a request by the server
  // (only by the client), and no fetch times out (below) while a loaded machine stalls the test.
  server.server.keepAliveTimeout = 0;
});
afterAll(() => server.close());

/** A fetch timeout that a stalled machine cannot reach: the model runs on the fake clock alone. */
const NO_TIMEOUT_MS = 600_000;

function policyOf(version: number) {
  const policy = examplePolicy(`c${version}`, APP);
  return iam.grants.get(version) === true ? policy : { ...policy, roles: policy.roles.filter((r) => r.key !== 'DRIVER') };
}

/** Key set `version` holds the key ids `k<version>` and `k<version - 1>` (a rotation keeps the previous key one version). */
function keySetOf(version: number) {
  return [version, version - 1].filter((v) => v > 0).map((v) => ({ ...STATIC_KEY.jwk, kid: `k${v}` }));
}

const options = fc.record({
  ttlMs: fc.option(fc.constantFrom(50, 100, 250, 1_000, 3_000, 10_000, 60_000), { nil: undefined }),
  maxStaleMs: fc.option(fc.constantFrom(0, 50, 300, 800, 5_000, 60_000), { nil: undefined }),
  minRefreshIntervalMs: fc.option(fc.constantFrom(0, 10, 50, 200, 1_000, 5_000, 20_000), { nil: undefined }),
}, { requiredKeys: [] });

type Event =
  | { kind: 'request' }
  | { kind: 'advance'; of: 'ttl' | 'spacing' | 'stale' | 'bound' | 'ms'; frac: number; nudge: number }
  | { kind: 'change'; grants: boolean }
  | { kind: 'outage'; up: boolean; status: 500 | 503; retryAfterSec: number | undefined }
  | { kind: 'hint'; which: 'current' | 'old' | 'forged' }
  /** A request whose fetch the IAM answers from its state before a change, announced by a hint meanwhile. */
  | { kind: 'race'; grants: boolean };

const events = fc.array(fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'request' as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('advance' as const), of: fc.constantFrom('ttl' as const, 'spacing' as const, 'stale' as const, 'bound' as const, 'ms' as const), frac: fc.constantFrom(0.1, 0.25, 0.5, 0.8, 0.9, 1, 1.1, 1.25), nudge: fc.constantFrom(-1, 0, 1) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('change' as const), grants: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('outage' as const), up: fc.boolean(), status: fc.constantFrom(500 as const, 503 as const), retryAfterSec: fc.option(fc.constantFrom(0, 1, 3), { nil: undefined }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('hint' as const), which: fc.constantFrom('current' as const, 'old' as const, 'forged' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('race' as const), grants: fc.boolean() }) },
), { minLength: 5, maxLength: 50 });

function advanceBy(e: Extract<Event, { kind: 'advance' }>, o: Resolved): number {
  const base = { ttl: o.ttlMs, spacing: o.minRefreshIntervalMs, stale: o.maxStaleMs, bound: o.ttlMs + o.maxStaleMs, ms: 20 }[e.of];
  return Math.max(0, Math.round(e.frac * base) + e.nudge);
}

/** Turns of the event loop until no fetch runs (`running()`), the IAM answered everything and the client recorded it. */
async function quiescent(running: () => boolean, recorded: () => number, seen: () => number, last: () => string = () => ''): Promise<void> {
  let idle = 0;
  for (let turn = 0; turn < 5_000 && idle < 3; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    idle = !running() && iam.inflight === 0 && recorded() === seen() ? idle + 1 : 0;
  }
  if (idle < 3) throw new Error(`no quiet moment: running ${String(running())}, in flight ${iam.inflight}, recorded ${recorded()} of ${seen()} (outcomes: ${last()}; the IAM saw: ${iam.seen.join(', ')})`);
}

/** A few turns of the event loop until `done` (or a good while: then the caller goes on anyway). */
async function until(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 200 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Counts the outcomes the client published on the given channels about `url` (a run's own URL: a
 * cache of an earlier run cannot be counted); `log` lists them all with their reasons, for a failure's message.
 */
function outcomes(names: readonly string[], url: string): { count: () => number; log: () => string; dispose: () => void } {
  const seen: string[] = [];
  const listener = (message: unknown, name: string | symbol): void => {
    const m = (message ?? {}) as { uri?: unknown; reason?: unknown; error?: { message?: unknown } };
    const about = typeof m.uri === 'string' ? m.uri : '';
    const reason = typeof m.reason === 'string' ? ` ${m.reason} (${String(m.error?.message)})` : '';
    seen.push(`${String(name).replace(/^iam-authz:/, '')}${reason}${about.startsWith(url) ? '' : ` about ${about}`}`);
  };
  for (const name of names) subscribe(name, listener);
  return { count: () => seen.length, log: () => seen.join(', ') || 'none', dispose: () => { for (const name of names) unsubscribe(name, listener); } };
}

function reset(): void {
  iam.hold = false;
  iam.held.length = 0;
  iam.seen.length = 0;
  iam.version = 1;
  iam.grants = new Map([[1, true]]);
  iam.up = true;
  iam.status = 500;
  iam.retryAfterSec = undefined;
}

function change(e: Extract<Event, { kind: 'change' }>): void {
  iam.version++;
  iam.grants.set(iam.version, e.grants);
}

function outage(e: Extract<Event, { kind: 'outage' }>): void {
  iam.up = e.up;
  iam.status = e.status;
  iam.retryAfterSec = e.retryAfterSec;
}

describe('freshness: every option keeps its promise in every combination', () => {
  test('the policy cache', async () => {
    await fc.assert(fc.asyncProperty(options, fc.integer(), events, async (given, seed, script) => {
      reset();
      const resolved = resolvePolicyOptions(given as PolicyOptions, checks);
      const model = new FreshnessModel(resolved);
      const clock = new Clock();
      const random = vi.spyOn(Math, 'random').mockImplementation(prng(seed));
      const hints = memoryHints((hint) => { model.hint(versionOf(hint.changeId), model.held()); });
      const recorded = outcomes([channels.policyFetched, channels.policyRevalidated, channels.policyChanged, channels.policyFailed], '');
      iam.onFetch = (f) => { model.record({ at: clock.now(), ...f }); };
      const authz = createAuthorizer({ baseUrl: BASE, localJwks: { keys: [STATIC_KEY.jwk] }, policyUrl: `${server.url}/policy`, now: clock.now, policy: { ...(given as PolicyOptions), hints, timeoutMs: NO_TIMEOUT_MS } });
      try {
        const identity = await authz.authenticate(`Bearer ${signClaims(claims(BASE, { exp: clock.sec + 10 * 86_400 }), STATIC_KEY)}`);
        const running = (): boolean => authz.status().applications[ISSUER]?.[APP]?.nextRefreshAt === null;
        const settle = (): Promise<void> => quiescent(running, recorded.count, () => model.fetches.length, recorded.log);
        for (const e of script) {
          if (e.kind === 'advance') clock.advance(advanceBy(e, resolved));
          else if (e.kind === 'change') change(e);
          else if (e.kind === 'outage') outage(e);
          else if (e.kind === 'hint') {
            const version = e.which === 'current' ? iam.version : e.which === 'old' ? Math.max(1, iam.version - 1) : -1;
            hints.deliver({ issuer: ISSUER, application: APP, changeId: version === -1 ? 'forged' : `c${version}` }, (h) => { model.hint(versionOf(h.changeId), model.held()); });
            await settle();
          } else {
            const before = model.fetches.length;
            const at = clock.now();
            const hintConfirms = model.hintConfirms();
            const hintPending = model.hintPending();
            let answer: { version: number } | { status: number };
            let granted: boolean | undefined;
            iam.hold = e.kind === 'race';
            const deciding = authz.authorize(identity, READ).then(
              (decision) => ({ version: versionOf(decision.changeId ?? ''), granted: decision.granted }),
              (error: unknown) => ({ status: (error as { status?: number }).status ?? 0 }),
            );
            if (e.kind === 'race') {
              // The fetch this request started (if any) is held: the IAM changes and a hint says so meanwhile.
              await until(() => iam.held.length > 0 || !running());
              iam.hold = false;
              change({ kind: 'change', grants: e.grants });
              // What the client holds is what it had before the held fetch: that one has not ended.
              const held = model.lastOk(model.fetches.length - iam.held.length)?.version;
              hints.deliver({ issuer: ISSUER, application: APP, changeId: `c${iam.version}` }, (h) => { model.hint(versionOf(h.changeId), held); });
              for (const release of iam.held.splice(0)) release();
            }
            const outcome = await deciding;
            if ('granted' in outcome) {
              answer = { version: outcome.version };
              granted = outcome.granted;
            } else answer = outcome;
            await settle();
            const broken = model.violations({ at, before, answer, current: iam.version, up: iam.up, refusedWhatIamGives: granted === false && iam.grants.get(iam.version) === true, hintConfirms, hintPending });
            if ('version' in answer && granted !== iam.grants.get(answer.version)) broken.push(`answered ${String(granted)} with version ${answer.version}, which says ${String(iam.grants.get(answer.version))}`);
            if (broken.length > 0) throw new Error(`${e.kind} at ${at - NOW_MS} ms (options ${JSON.stringify(resolved)}): ${broken.join('; ')}`);
          }
        }
      } finally {
        random.mockRestore();
        recorded.dispose();
        await authz.close();
      }
    }), { numRuns: RUNS, ...REPLAY });
  }, 120_000);

  test('the key cache', async () => {
    const dispatcher = new Agent();
    let run = 0;
    try {
      await fc.assert(fc.asyncProperty(options, fc.integer(), events, async (given, seed, script) => {
        reset();
        const resolved = resolveJwksOptions(given as PolicyOptions, checks);
        const model = new FreshnessModel(resolved);
        const clock = new Clock();
        const uri = `${server.url}/jwks?run=${++run}`;
        const recorded = outcomes([channels.jwksRefreshed, channels.jwksFailed], uri);
        iam.onFetch = (f) => { model.record({ at: clock.now(), ...f }); };
        const keys = new RemoteKeySet({ ...resolved, timeoutMs: NO_TIMEOUT_MS, uri, dispatcher, algorithms: new Set(['RS256']), now: clock.now, random: prng(seed), sleep: () => Promise.resolve() });
        try {
          const running = (): boolean => keys.status().nextRefreshAt === null;
          const settle = (): Promise<void> => quiescent(running, recorded.count, () => model.fetches.length, recorded.log);
          for (const e of script) {
            if (e.kind === 'advance') clock.advance(advanceBy(e, resolved));
            else if (e.kind === 'change') change(e);
            else if (e.kind === 'outage') outage(e);
            else if (e.kind !== 'hint') {
              // A token of the newest key, of the one before, or of a key the IAM dropped.
              const kidVersion = iam.version - (seed & 3) % 3;
              const kid = `k${Math.max(0, kidVersion)}`;
              const before = model.fetches.length;
              const at = clock.now();
              let answer: { version: number } | { status: number } | { unknown: true };
              try {
                await keys.resolve(kid);
                answer = { version: kidVersion };
              } catch (error) {
                const status = (error as { status?: number }).status ?? 0;
                answer = status === 401 ? { unknown: true } : { status };
              }
              await settle();
              const atIam = keySetOf(iam.version).some((k) => k.kid === kid);
              const broken = model.violations({ at, before, answer: 'version' in answer ? versionAnswer(model, before, kid, answer) : answer, current: iam.version, up: iam.up, refusedWhatIamGives: 'unknown' in answer && atIam });
              // 401 only for a key id the copy lacks; never for an outage.
              if ('unknown' in answer && model.fetches.slice(before).some((f) => !f.ok)) broken.push('401 for a key id during an outage');
              if (broken.length > 0) throw new Error(`${e.kind} at ${at - NOW_MS} ms (options ${JSON.stringify(resolved)}), kid ${kid}: ${broken.join('; ')}`);
            }
          }
        } finally {
          recorded.dispose();
          keys.close();
        }
      }), { numRuns: RUNS, ...REPLAY });
    } finally {
      await dispatcher.close();
    }
  }, 120_000);
});

/**
 * The key set a resolved key id came from: the newest answered fetch that held it, as the model
 * counts versions (a key id is held by the set of its version and the next one).
 */
function versionAnswer(model: FreshnessModel, before: number, kid: string, _answer: { version: number }): { version: number } {
  const fetches = model.fetches;
  for (let i = fetches.length - 1; i >= 0; i--) {
    const f = fetches[i]!;
    if (f.ok && keySetOf(f.version).some((k) => k.kid === kid) && (i >= before || f === model.lastOk(before))) return { version: f.version };
  }
  return { version: -1 };
}

function versionOf(changeId: string): number {
  return /^c\d+$/.test(changeId) ? Number(changeId.slice(1)) : -1;
}

/** An in-memory channel: delivers to every subscriber (the publisher too), and tells the model each hint. */
function memoryHints(onPublish: (hint: PolicyHint) => void): HintChannel & { deliver(hint: PolicyHint, tell: (hint: PolicyHint) => void): void } {
  const listeners = new Set<(hint: PolicyHint | RevocationHint) => void>();
  return {
    publish(hint) {
      if ('changeId' in hint) onPublish(hint);
      for (const l of listeners) l(hint);
      return Promise.resolve();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
    deliver(hint, tell) {
      tell(hint);
      for (const l of listeners) l(hint);
    },
  };
}
