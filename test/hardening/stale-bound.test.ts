/**
 * The stale bound is absolute, for the policy and the signing keys: with the IAM failing, a cached
 * copy is served until `ttlMs + maxStaleMs` after its last success and never longer — whatever
 * `minRefreshIntervalMs` is, set or not — then the answer is 503 (never 401 or 403 for an outage).
 * An explicit `minRefreshIntervalMs` is honoured: the first retry after a failed cold fetch comes
 * within it, with no hidden floor. Real loopback IAM, real signatures, a fake clock.
 */
import { describe, expect, test } from 'vitest';
import type { AuthorizerOptions } from '../../src/index.js';
import { useIam } from '../helpers/index.js';

const iam = useIam();
const READ = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } };

/** Asks every 50 ms of the fake clock up to 1.5 s, the IAM down after the first answer; the outcome per instant. */
async function askThroughOutage(options: Partial<AuthorizerOptions>, ask: 'authenticate' | 'authorize'): Promise<Map<number, string>> {
  const { clock } = iam;
  const t0 = clock.now();
  const authz = iam.authorizer({ tokenCache: false, ...options });
  const header = iam.bearer();
  const identity = await authz.authenticate(header);
  if (ask === 'authorize') expect((await authz.authorize(identity, READ)).granted).toBe(true);
  iam.down = 500;
  const outcomes = new Map<number, string>();
  for (let t = 50; t <= 1_500; t += 50) {
    clock.set(t0 + t);
    const answer = ask === 'authenticate' ? authz.authenticate(header).then(() => 'ok') : authz.authorize(identity, READ).then((d) => (d.granted ? 'granted' : 'denied'));
    outcomes.set(t, await answer.catch((error: unknown) => {
      const { status, code } = error as { status?: number; code?: string };
      return `${String(status)} ${String(code)}`;
    }));
    // Let a background refresh end before the clock moves on.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return outcomes;
}

describe.each([
  ['unset', {}],
  ['5 s (the former default)', { minRefreshIntervalMs: 5_000 }],
  ['0', { minRefreshIntervalMs: 0 }],
])('minRefreshIntervalMs %s', (_name, spacing) => {
  test('policy { ttlMs: 100, maxStaleMs: 800 }: granted until 900 ms after the last success, then 503 ERR_POLICY_UNAVAILABLE', async () => {
    const outcomes = await askThroughOutage({ policy: { ttlMs: 100, maxStaleMs: 800, ...spacing } }, 'authorize');
    for (const [t, outcome] of outcomes) expect([t, outcome]).toStrictEqual([t, t <= 900 ? 'granted' : '503 ERR_POLICY_UNAVAILABLE']);
  });

  test('jwks { ttlMs: 100, maxStaleMs: 800 }: verified until 900 ms after the last success, then 503 ERR_JWKS_UNAVAILABLE', async () => {
    const outcomes = await askThroughOutage({ jwks: { ttlMs: 100, maxStaleMs: 800, ...spacing } }, 'authenticate');
    for (const [t, outcome] of outcomes) expect([t, outcome]).toStrictEqual([t, t <= 900 ? 'ok' : '503 ERR_JWKS_UNAVAILABLE']);
  });
});

describe('an explicit minRefreshIntervalMs: 50 is honoured after a failed cold fetch: no hidden floor', () => {
  test('the policy: the retry comes within 50 ms, and succeeds once the IAM is back', async () => {
    const authz = iam.authorizer({ policy: { ttlMs: 10_000, minRefreshIntervalMs: 50 } });
    const identity = await authz.authenticate(iam.bearer());
    iam.down = 500;
    await expect(authz.authorize(identity, READ)).rejects.toMatchObject({ status: 503, code: 'ERR_POLICY_UNAVAILABLE' });
    expect(iam.requestsTo('policy').length).toBe(1);
    iam.down = undefined;
    iam.clock.advance(50);
    expect(await authz.authorize(identity, READ)).toMatchObject({ granted: true });
    expect(iam.requestsTo('policy').length).toBe(2);
  });

  test('the keys: the retry comes within 50 ms, and succeeds once the IAM is back', async () => {
    const authz = iam.authorizer({ jwks: { ttlMs: 10_000, minRefreshIntervalMs: 50 } });
    const header = iam.bearer();
    iam.down = 500;
    await expect(authz.authenticate(header)).rejects.toMatchObject({ status: 503, code: 'ERR_JWKS_UNAVAILABLE' });
    iam.down = undefined;
    iam.clock.advance(50);
    expect((await authz.authenticate(header)).claims.sub).toBe('actor-alice');
    expect(iam.requestsTo('jwks').length).toBe(2);
  });
});
