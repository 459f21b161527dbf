/**
 * Hooks cannot hurt a request: an `async` `onDecision` that rejects, or the `iam-authz/otel`
 * bridge with a tracer and a meter that throw, leave every answer as if no hook existed, raise no
 * unhandled rejection or uncaught exception, and cost exactly one process warning each.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { Meter, Tracer } from '@opentelemetry/api';
import type { Authorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { instrumentIamAuthz } from '../../adapters/otel/index.js';
import { useIam, VEHICLE } from '../helpers/index.js';

const iam = useIam();
const problems: unknown[] = [];
const warnings: Error[] = [];
const onProblem = (error: unknown): void => { problems.push(error); };
const onWarning = (warning: Error): void => { warnings.push(warning); };

beforeEach(() => {
  problems.length = 0;
  warnings.length = 0;
  process.on('unhandledRejection', onProblem);
  process.on('uncaughtException', onProblem);
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('unhandledRejection', onProblem);
  process.off('uncaughtException', onProblem);
  process.off('warning', onWarning);
});

/** Enough turns of the event loop for rejections and next-tick exceptions to surface. */
const settle = (): Promise<void> => new Promise((resolve) => { setTimeout(resolve, 20); });

async function traffic(authz: Authorizer, rounds: number): Promise<void> {
  const guard = createGuards(authz).requirePermission(VEHICLE, 'READ', 'VIN', () => 'WVW1');
  const deniedGuard = createGuards(authz).requirePermission(VEHICLE, 'WRITE', 'VIN', () => 'WVW1');
  for (let i = 0; i < rounds; i++) {
    const token = iam.token({ jti: `hook-${i}` });
    const identity = await authz.authenticate(`Bearer ${token}`);
    expect((await authz.authorize(identity, { service: VEHICLE, permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } })).granted).toBe(true);
    expect((await authz.authorize(identity, { service: VEHICLE, permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } })).granted).toBe(false);
    expect(await guard(`Bearer ${token}`, {})).toMatchObject({ decision: { granted: true } });
    await expect(deniedGuard(`Bearer ${token}`, {})).rejects.toMatchObject({ status: 403 });
    await expect(authz.authenticate('Bearer not-a-token')).rejects.toMatchObject({ status: 401 });
  }
}

describe('onDecision', () => {
  test('an async hook that rejects: answers unchanged, no unhandled rejection, one warning naming onDecision', async () => {
    let calls = 0;
    const authz = iam.authorizer({
      onDecision: async () => { calls += 1; await Promise.resolve(); throw new Error('log shipper down'); },
    });
    await traffic(authz, 3);
    await settle();
    expect(calls).toBeGreaterThanOrEqual(12);
    expect(problems).toStrictEqual([]);
    const about = warnings.filter((w) => w.message.includes('onDecision'));
    expect(about).toHaveLength(1);
  });
});

describe('iam-authz/otel', () => {
  test('a tracer and a meter that throw: answers unchanged, no uncaught exception, one warning', async () => {
    const boom = (): never => { throw new Error('exporter down'); };
    const tracer = { startSpan: boom, startActiveSpan: boom } as unknown as Tracer;
    const meter = { createCounter: () => ({ add: boom }) } as unknown as Meter;
    const authz = iam.authorizer();
    const instrumentation = instrumentIamAuthz({ tracer, meter });
    try {
      await traffic(authz, 3);
      await settle();
    } finally {
      instrumentation.disable();
    }
    expect(problems).toStrictEqual([]);
    expect(warnings.filter((w) => w.message.includes('iam-authz/otel'))).toHaveLength(1);
  });
});
