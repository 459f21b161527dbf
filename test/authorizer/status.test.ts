/**
 * `authorizer.status()`: plain JSON per issuer (key ids) and per application (`changeId`), with
 * state, age, next refresh, failures and backoff — never a token or a policy body — and its state
 * transitions through an outage, on the hand-driven clock against a real loopback IAM.
 */
import { describe, expect, test } from 'vitest';
import type { AuthorizerStatus } from '../../src/authorizer-types.js';
import type { Authorizer } from '../../src/index.js';
import { KEY, useIam } from '../helpers/index.js';

const TTL = 10_000;
const MAX_STALE = 20_000;
const iam = useIam();

/** Polls (real time, at most 3 s) until `done` holds: a background refresh has ended. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 300 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

function create(): Authorizer {
  const cache = { ttlMs: TTL, maxStaleMs: MAX_STALE, minRefreshIntervalMs: 1_000, timeoutMs: 2_000 };
  return iam.authorizer({ jwks: cache, policy: cache });
}

const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };

/** Every string anywhere in `value`. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...strings(v)]);
}

/** True when `value` is built of plain objects, arrays and primitives only. */
function plain(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return ['string', 'number', 'boolean'].includes(typeof value) || value === null;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== Array.prototype) return false;
  return Object.values(value).every(plain);
}

describe('authorizer.status()', () => {
  test('plain JSON per issuer and application, without the token or the policy body', async () => {
    const authz = create();
    const token = iam.token();
    await authz.check(`Bearer ${token}`, query);
    iam.clock.advance(1_500);
    const status = authz.status();
    expect(plain(status)).toBe(true);
    expect(JSON.parse(JSON.stringify(status))).toStrictEqual(status);
    const { issuer } = iam;
    expect(status).toStrictEqual<AuthorizerStatus>({
      issuers: { [issuer]: { state: 'fresh', ageMs: 1_500, nextRefreshAt: expect.any(Number) as number, consecutiveFailures: 0, backoffMs: 0, keyIds: [KEY.kid] } },
      applications: { [issuer]: { 'app-1': { state: 'fresh', ageMs: 1_500, nextRefreshAt: expect.any(Number) as number, consecutiveFailures: 0, backoffMs: 0, changeId: 'c1', ungranted: [] } } },
      hints: null,
      inventory: { entries: 0, maxEntries: 5_000, dropped: 0 },
      revocations: { entries: 0, collapsed: false, loaded: 'none' },
      watches: { open: 0 },
    });
    const text = strings(status).join('\n');
    expect(text).not.toContain(token);
    for (const part of token.split('.')) expect(text).not.toContain(part);
    expect(text).not.toContain('DRIVER'); // no policy body
    expect(text).not.toContain(String(KEY.jwk.n).slice(0, 20)); // no key material
  });

  test('cold → fresh → stale → failing (served) → cold (past ttl + maxStale) → fresh after recovery', async () => {
    const { clock, issuer } = iam;
    const authz = create();
    const keys = () => authz.status().issuers[issuer]!;
    const policy = () => authz.status().applications[issuer]?.['app-1'];
    expect(keys()).toMatchObject({ state: 'cold', ageMs: null, keyIds: [] });
    expect(policy()).toBeUndefined();

    const header = iam.bearer({ exp: clock.sec + 3_600 });
    await authz.check(header, query);
    expect(keys()).toMatchObject({ state: 'fresh', ageMs: 0, consecutiveFailures: 0 });
    expect(policy()).toMatchObject({ state: 'fresh', ageMs: 0, changeId: 'c1' });

    // The freshness passes with the IAM down: stale, not fresh, before anyone asks.
    iam.down = 503;
    clock.advance(TTL + 1);
    expect(keys()).toMatchObject({ state: 'stale', ageMs: TTL + 1 });
    expect(policy()).toMatchObject({ state: 'stale', ageMs: TTL + 1 });

    // A request starts the refreshes, which fail: failing, the copies still served.
    await authz.check(header, query);
    await until(() => keys().consecutiveFailures === 1 && policy()?.consecutiveFailures === 1);
    for (const s of [keys(), policy()!]) {
      expect(s.state).toBe('failing');
      expect(s.backoffMs).toBeGreaterThan(0);
      expect(s.nextRefreshAt).toBe(clock.now() + s.backoffMs);
    }

    // Past ttl + maxStale nothing is usable: cold again, with the failures counted; requests get 503.
    clock.advance(MAX_STALE);
    expect(keys()).toMatchObject({ state: 'cold', consecutiveFailures: 1 });
    expect(policy()).toMatchObject({ state: 'cold', consecutiveFailures: 1 });
    await expect(authz.check(header, query)).rejects.toMatchObject({ status: 503 });

    iam.down = undefined;
    clock.advance(60_000);
    await authz.check(header, query);
    await until(() => keys().state === 'fresh' && policy()?.state === 'fresh');
    expect(keys()).toMatchObject({ consecutiveFailures: 0, backoffMs: 0, ageMs: 0, keyIds: [KEY.kid] });
    expect(policy()).toMatchObject({ consecutiveFailures: 0, backoffMs: 0, changeId: 'c1' });
  });
});
