/**
 * `authorizer.watch`: a grant kept under watch for a long-lived connection. It decides first, like
 * `check()`, and creates nothing when denied; then its signal aborts when the token expires (as
 * `authenticate()` would see it), when a new policy of its application denies a query, when the
 * token is revoked, and on `close()` of the authorizer — and never after the watch's own `close()`.
 * A watched application's policy is revalidated by the watch itself, with no other traffic. Real
 * loopback IAM, real signatures, real time where a timer is what is tested.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { driverCanWrite, examplePolicy, useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();
const READ = { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
const WRITE = { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } } as const;
const sec = (): number => Math.floor(Date.now() / 1000);

/** Waits (real time) until `signal` aborts; its reason and when, or `undefined` after `ms`. */
function aborted(signal: AbortSignal, ms: number): Promise<{ reason: unknown; at: number } | undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ reason: signal.reason, at: Date.now() });
    const timer = setTimeout(() => { resolve(undefined); }, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve({ reason: signal.reason, at: Date.now() });
    }, { once: true });
  });
}

describe('watch', () => {
  test('decides first: a denied watch rejects like check() and creates nothing', async () => {
    const authz = iam.authorizer({ now: Date.now });
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    await expect(authz.watch(identity, WRITE)).rejects.toMatchObject({ status: 403, code: 'ERR_PERMISSION_DENIED' });
    await expect(authz.watch(identity, [READ, WRITE])).rejects.toMatchObject({ code: 'ERR_PERMISSION_DENIED' });
    expect(authz.status().watches.open).toBe(0);
    await expect(authz.watch(identity, [])).rejects.toThrow(TypeError);
    await expect(authz.watch('Bearer x' as never, READ)).rejects.toThrow(/pass the identity/);
  });

  test('a granted watch stays open; close() is idempotent and leaves nothing', async () => {
    const authz = iam.authorizer({ now: Date.now });
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    const watch = await authz.watch(identity, [READ]);
    expect(watch.signal.aborted).toBe(false);
    expect(authz.status().watches.open).toBe(1);
    watch.close();
    watch.close();
    expect(authz.status().watches.open).toBe(0);
    // Nothing fires after close(): not even a revocation of its token.
    await authz.revoke({ sub: identity.claims.sub });
    expect(watch.signal.aborted).toBe(false);
  });

  test('aborts with ERR_TOKEN_EXPIRED within a second of when authenticate() refuses the token', async () => {
    const authz = iam.authorizer({ now: Date.now, clockToleranceSec: 1 });
    const exp = sec() + 2;
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp }));
    const watch = await authz.watch(identity, READ);
    const end = await aborted(watch.signal, 6_000);
    expect(end?.reason).toMatchObject({ code: 'ERR_TOKEN_EXPIRED', status: 401 });
    // authenticate refuses once now >= (exp + clockToleranceSec) s.
    expect(end!.at).toBeGreaterThanOrEqual((exp + 1) * 1000);
    expect(end!.at).toBeLessThan((exp + 1) * 1000 + 1_000);
    expect(authz.status().watches.open).toBe(0);
  });

  test('a policy that takes the permission away aborts it, revalidated by the watch itself; one that keeps it does not', async () => {
    const authz = iam.authorizer({ now: Date.now, policy: { ttlMs: 1_000, minRefreshIntervalMs: 200 } });
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    const reading = await authz.watch(identity, READ);
    // A new changeId that still grants READ: no abort.
    iam.policy = driverCanWrite('c2', 'app-1');
    const writing = await (async () => {
      // Without any request: the watch keeps the policy revalidated.
      for (let i = 0; i < 40 && authz.status().applications[iam.issuer]?.['app-1']?.changeId !== 'c2'; i++) await new Promise((r) => setTimeout(r, 100));
      expect(authz.status().applications[iam.issuer]?.['app-1']?.changeId).toBe('c2');
      return authz.watch(identity, WRITE);
    })();
    expect(reading.signal.aborted).toBe(false);
    // c3 takes READ and WRITE away from DRIVER: both abort, without any request.
    iam.policy = { ...examplePolicy('c3', 'app-1'), roles: [{ key: 'DRIVER' }] };
    const [r, w] = await Promise.all([aborted(reading.signal, 4_000), aborted(writing.signal, 4_000)]);
    expect(r?.reason).toMatchObject({ code: 'ERR_PERMISSION_DENIED', status: 403 });
    expect(w?.reason).toMatchObject({ code: 'ERR_PERMISSION_DENIED' });
  });

  test('with several queries, one taken away is enough', async () => {
    const authz = iam.authorizer({ now: Date.now, policy: { ttlMs: 1_000, minRefreshIntervalMs: 200 } });
    iam.policy = driverCanWrite('c1', 'app-1');
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    const watch = await authz.watch(identity, [READ, WRITE]);
    iam.policy = examplePolicy('c2', 'app-1');
    expect((await aborted(watch.signal, 4_000))?.reason).toMatchObject({ code: 'ERR_PERMISSION_DENIED' });
  });

  test('an outage past the stale bound aborts it with the 503 a request would get', async () => {
    const authz = iam.authorizer({ now: Date.now, policy: { ttlMs: 500, maxStaleMs: 500, minRefreshIntervalMs: 100 } });
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    const watch = await authz.watch(identity, READ);
    iam.down = 503;
    expect((await aborted(watch.signal, 5_000))?.reason).toMatchObject({ code: 'ERR_POLICY_UNAVAILABLE', status: 503 });
  });

  test('a revocation aborts the watches of the tokens it matches, and no other; a revoked token cannot be watched', async () => {
    const authz = iam.authorizer({ now: Date.now });
    const token = (claims: Record<string, unknown>) => authz.authenticate(iam.bearer({ iat: sec() - 5, exp: sec() + 3600, ...claims }));
    const [leaked, other, bobOld, bobNew] = await Promise.all([
      token({ jti: 'leaked' }), token({ jti: 'other' }), token({ jti: 'bob-1', sub: 'actor-bob', iat: sec() - 60 }), token({ jti: 'bob-2', sub: 'actor-bob', iat: sec() + 2 }),
    ]);
    const watches = await Promise.all([leaked, other, bobOld, bobNew].map((identity) => authz.watch(identity, READ)));
    await authz.revoke({ jti: 'leaked' });
    expect(watches.map((w) => w.signal.aborted)).toEqual([true, false, false, false]);
    expect(watches[0]!.signal.reason).toMatchObject({ code: 'ERR_TOKEN_REVOKED', status: 401 });
    await authz.revoke({ sub: 'actor-bob', issuedBefore: sec() });
    expect(watches.map((w) => w.signal.aborted)).toEqual([true, false, true, false]);
    await expect(authz.watch(leaked, READ)).rejects.toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
    expect(authz.status().watches.open).toBe(2);
    for (const w of watches) w.close();
  });

  test('a revocation list that collapses when full aborts every watch it now refuses', async () => {
    const authz = iam.authorizer({ now: Date.now, revocation: { maxEntries: 2 } });
    const identity = await authz.authenticate(iam.bearer({ jti: 'watched', iat: sec() - 5, exp: sec() + 3600 }));
    const watch = await authz.watch(identity, READ);
    for (const jti of ['a', 'b', 'c']) await authz.revoke({ jti });
    expect(authz.status().revocations.collapsed).toBe(true);
    expect(watch.signal.reason).toMatchObject({ code: 'ERR_TOKEN_REVOKED' });
  });

  test('close() of the authorizer aborts open watches; later watches are refused', async () => {
    const authz = iam.authorizer({ now: Date.now });
    const identity = await authz.authenticate(iam.bearer({ iat: sec(), exp: sec() + 3600 }));
    const watch = await authz.watch(identity, READ);
    await authz.close();
    expect(watch.signal.reason).toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED' });
    await expect(authz.watch(identity, READ)).rejects.toMatchObject({ code: 'ERR_AUTHORIZER_CLOSED' });
  });

  test('a process whose watches are closed exits by itself, without authorizer.close()', async () => {
    const script = fileURLToPath(new URL('./exits.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, iam.url, iam.token({ iat: sec(), exp: sec() + 3600 })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(null); }, 20_000);
      child.on('exit', (c) => { clearTimeout(timer); resolve(c); });
    });
    expect(output).toContain('watched, closed');
    expect(code).toBe(0);
  }, 30_000);
});
