/**
 * `node --import tsx bench/ceiling/profile/calls.ts <case> [calls]`: where one in-process call's time goes,
 * for the in-process figures of `bench:ceiling`. Cases: `uncached` (authenticate with
 * `tokenCache: false`, remote JWKS on loopback, one call at a time), `floor` (raw verify + payload
 * decode + `JSON.parse`, the ceiling of `uncached`), `cached` (authenticate of a cached token +
 * authorize of a granted permission). Warms up, then profiles `calls` calls (default 40,000; 2,000,000
 * for `cached`) with the inspector's CPU profiler at a 50 µs interval, and writes the summary
 * (self time per call, by group and by function) next to this script as `calls-<case>.txt`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { createAuthorizer } from '../../../src/authorizer.js';
import { verifyAndParse } from '../floor.js';
import { startBenchIam, TENANT } from '../../http/harness.js';
import { summarize, type CpuProfile } from './summary.js';

const CASES = ['uncached', 'floor', 'cached'] as const;
const which = (process.argv[2] ?? 'uncached') as (typeof CASES)[number];
if (!CASES.includes(which)) throw new TypeError(`unknown case ${which} (${CASES.join(', ')})`);
const calls = Number(process.argv[3] ?? (which === 'cached' ? 2_000_000 : 40_000));

const { iam, repeated, publicKey } = await startBenchIam(0);
const authorization = `Bearer ${repeated}`;
const authorizer = createAuthorizer({ baseUrl: iam.baseUrl, audience: TENANT, ...(which === 'uncached' ? { tokenCache: false } : {}) });
await authorizer.ready();
const query = { service: 'vehicle-service', permission: 'READ', resource: { type: 'VIN', value: 'WVW1' } } as const;
const fn: () => unknown = which === 'floor'
  ? () => verifyAndParse(repeated, publicKey)
  : which === 'uncached'
    ? () => authorizer.authenticate(authorization)
    : async () => authorizer.authorize(await authorizer.authenticate(authorization), query);
const loop = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await fn();
};

await loop(Math.ceil(calls / 4)); // warm-up
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 50 });
await session.post('Profiler.start');
const started = performance.now();
await loop(calls);
const ms = performance.now() - started;
const { profile } = await session.post('Profiler.stop');
session.disconnect();
await authorizer.close();
await iam.close();

const lines = [
  `${which}: ${calls} calls, one at a time, after ${Math.ceil(calls / 4)} warm-up calls: ${((ms * 1000) / calls).toFixed(2)} µs per call (profiler on)`,
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}`,
  ...summarize(profile as unknown as CpuProfile, calls, 'call', 25),
];
const out = fileURLToPath(new URL(`./calls-${which}.txt`, import.meta.url));
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
