/**
 * The largest policy `policy.maxBytes` accepts by default (16 MiB), of the worst shape (one role
 * holding ≈ 900,000 permissions) and of the typical one (≈ 85,000 roles), is fetched from a
 * loopback policy API, hashed, decoded, parsed, checked and compiled without holding the event
 * loop: the longest stall seen by `monitorEventLoopDelay` stays within a few times what one
 * `JSON.parse` of 1 MiB of the same shape costs on this machine at this moment (calibrated in the
 * test, so that a loaded machine does not fail it). A single `JSON.parse` of the whole body costs
 * ≈ 16 such units, and the compile of one role in one go a few more: the unsliced pipeline fails.
 * The absolute figure (under 50 ms on an idle two-core machine) is measured by
 * `npm run bench:policy-stall`, not asserted here.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, test } from 'vitest';
import { loadUndici } from '../../src/lib/undici.js';
import { DEFAULT_POLICY } from '../../src/policy/options.js';
import { identityFor, usePolicyApi, VIN1 } from './harness.js';
import { LARGE_ROLE, LARGE_SERVICE, manyRolesPolicyText, oneRolePolicyText } from './large-policy.js';

const ctx = usePolicyApi({ events: false });

type Shape = (applicationId: string, maxBytes: number) => { text: string };

/** Median time (ms) of one `JSON.parse` of 1 MiB of `shape`: this machine's unit of stall, now. */
function calibrate(shape: Shape): number {
  const { text } = shape('calibration', 1_048_576);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    JSON.parse(text);
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b)[2]!;
}

/** Serves `text` (as prepared bytes: the server's own encoding must not stall the loop). */
function serve(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  ctx.server.fault = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    res.end(bytes);
    return true;
  };
}

/** Longest event-loop stall (ms) while a cold `authorize` fetches and compiles the served policy. */
async function stallOfColdAuthorize(roles: string[], service: string, permission: string): Promise<{ stallMs: number; granted: boolean }> {
  const authz = ctx.authorizer({});
  const id = await identityFor(authz, ctx.app, { ars: [{ r: roles, c: ['VIN=WVW1'] }] });
  // The HTTP client is imported on the first fetch of the process (once, ≈ 100 ms under load):
  // not what this test is about.
  await loadUndici();
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 10)); // armed: its timer has fired once
  const decision = await authz.authorize(id, { service, permission, resource: VIN1 });
  // The histogram records a stall when its timer next fires: let it, or a stall that ends just
  // before authorize() resolves would never be counted.
  await new Promise((resolve) => setTimeout(resolve, 10));
  histogram.disable();
  return { stallMs: histogram.max / 1e6, granted: decision.granted };
}

/**
 * The longest stall against `max(50 ms, STALL_UNITS × unit)`, where `unit` is the larger of the
 * calibrations (same shape) just before and just after the fetch. Up to 3 attempts (a fresh authorizer, a cold
 * fetch each): another process's burst or a GC pause may hit one, but the unsliced pipeline stalls
 * ≈ 20 units every time.
 */
async function expectNoStall(shape: Shape, roles: string[], service: string, permission: string): Promise<void> {
  const seen: string[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const before = calibrate(shape);
    const { stallMs, granted } = await stallOfColdAuthorize(roles, service, permission);
    const unit = Math.max(before, calibrate(shape));
    expect(granted).toBe(true);
    seen.push(`stall ${stallMs.toFixed(1)} ms with 1 MiB of it parsed in ${unit.toFixed(1)} ms`);
    if (stallMs < Math.max(50, STALL_UNITS * unit)) return;
  }
  expect.fail(`the event loop stalled in every attempt: ${seen.join('; ')}`);
}

/** Allowed stall, in units of one JSON.parse of 1 MiB of the policy's shape. */
const STALL_UNITS = 10;

describe('the largest accepted policy does not stall the event loop', () => {
  test('one role with every permission (the worst shape)', async () => {
    const { text, permissions } = oneRolePolicyText(ctx.app, DEFAULT_POLICY.maxBytes);
    expect(Buffer.byteLength(text)).toBeGreaterThan(DEFAULT_POLICY.maxBytes - 32);
    serve(text);
    await expectNoStall(oneRolePolicyText, [LARGE_ROLE], LARGE_SERVICE, `P${permissions - 1}`);
  }, 90_000);

  test('many roles of a few permissions (the typical shape)', async () => {
    const { text, roles } = manyRolesPolicyText(ctx.app, DEFAULT_POLICY.maxBytes);
    expect(Buffer.byteLength(text)).toBeGreaterThan(DEFAULT_POLICY.maxBytes - 512);
    serve(text);
    const last = roles - 1;
    await expectNoStall(manyRolesPolicyText, [`ROLE_${last}`], `service-${last % 20}`, 'WRITE');
  }, 90_000);
});
