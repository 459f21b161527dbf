/**
 * The per-request state behind `iam.signal` (src/adapter/request-state.ts), without HTTP: the
 * watch is made on first read and only then tied to the end of the response; a signal read once
 * the grant has ended is aborted already and makes no watch; `authenticate()` alone and `report`
 * mode watch the token only; the state looks as the guard's did. Real tokens from the loopback IAM.
 */
import { describe, expect, test } from 'vitest';
import { createInternalGuards, withSignal } from '../../src/adapter/internal.js';
import type { IamState } from '../../src/index.js';
import { useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();

interface Req { readonly vin: string }

/** An adapter's end of response, by hand: `end()` is the response ending. */
function response(): { readonly ties: number; end(): void; onEnd(target: unknown, close: () => void): void } {
  const closes: (() => void)[] = [];
  return {
    get ties() { return closes.length; },
    end() { for (const close of closes) close(); },
    onEnd(_target, close) { closes.push(close); },
  };
}

describe('iam.signal', () => {
  test('made on first read, once; tied to the end of the response only then; the state keeps its own keys', async () => {
    const authz = iam.authorizer();
    const guard = createInternalGuards<Req>(authz).requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.vin);
    const state = await guard(iam.bearer(), { vin: 'WVW1' }) as IamState;
    const res = response();
    const attached = withSignal(authz, state, undefined, res.onEnd);
    expect(Object.keys(attached)).toEqual(Object.keys(state));
    expect(JSON.parse(JSON.stringify(attached))).toEqual(JSON.parse(JSON.stringify(state)));
    expect(res.ties).toBe(0);
    expect(authz.status().watches.open).toBe(0);
    const signal = attached.signal as AbortSignal;
    expect(attached.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    expect(res.ties).toBe(1);
    expect(authz.status().watches.open).toBe(1);
    res.end();
    expect(authz.status().watches.open).toBe(0);
    expect(signal.aborted).toBe(false);
  });

  test('read after the token was revoked: aborted already with ERR_TOKEN_REVOKED, and no watch made', async () => {
    const authz = iam.authorizer();
    const guard = createInternalGuards<Req>(authz).requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.vin);
    const state = await guard(iam.bearer({ jti: 'late' }), { vin: 'WVW1' }) as IamState;
    const res = response();
    const attached = withSignal(authz, state, undefined, res.onEnd);
    await authz.revoke({ jti: 'late' });
    expect(attached.signal?.reason).toMatchObject({ code: 'ERR_TOKEN_REVOKED', status: 401 });
    expect(res.ties).toBe(0);
    expect(authz.status().watches.open).toBe(0);
  });

  test('authenticate() alone and report mode watch the token: open, and aborted by revocation', async () => {
    const authz = iam.authorizer();
    const guards = createInternalGuards<Req>(authz);
    const token = iam.bearer({ sub: 'watched' });
    const states = [
      await guards.authenticate()(token, { vin: 'WVW1' }),
      // Denied in report mode (shadow): the request went on, and so does its signal.
      await guards.requirePermission(VEHICLE, 'WRITE', 'VIN', (req) => req.vin, { mode: 'report' })(token, { vin: 'WVW1' }),
      // Granted in report mode: no permission is enforced later either.
      await guards.requirePermission(VEHICLE, 'READ', 'VIN', (req) => req.vin, { mode: 'report' })(token, { vin: 'WVW1' }),
      // Any of WRITE or READ: READ granted, and watched.
      await guards.requireAnyPermission(VEHICLE, ['WRITE', 'READ'], 'VIN', () => ['WVW1'])(token, { vin: 'WVW1' }),
    ] as IamState[];
    expect(states[1]?.shadow).toBe(true);
    const signals = states.map((state) => withSignal(authz, state, undefined, response().onEnd).signal as AbortSignal);
    expect(signals.map((s) => s.aborted)).toEqual([false, false, false, false]);
    expect(authz.status().watches.open).toBe(4);
    await authz.revoke({ sub: 'watched' });
    expect(signals.map((s) => (s.reason as { code?: string } | undefined)?.code)).toEqual(Array(4).fill('ERR_TOKEN_REVOKED'));
    expect(authz.status().watches.open).toBe(0);
  });
});
