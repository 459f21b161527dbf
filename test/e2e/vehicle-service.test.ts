/**
 * End to end, as `npm start` runs it: the development IAM from the example's iam.json, IdP tokens
 * from its built-in IdP, exchanged by the token client, then the example app in each framework.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAuthorizer } from 'iam-authz';
import { startDevIam, type DevIam, type DevIamConfig } from 'iam-authz-dev';
import { demoTokens, runDemo, type DemoTokens } from '../../examples/vehicle-service/demo.js';
import { startExpress } from '../../examples/vehicle-service/express.js';
import { startFastify } from '../../examples/vehicle-service/fastify.js';
import { startKoa } from '../../examples/vehicle-service/koa.js';
import { startNest } from '../../examples/vehicle-service/nest.js';

let iam: DevIam;
let tokens: DemoTokens;

beforeAll(async () => {
  const config = JSON.parse(await readFile(new URL('../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  iam = await startDevIam({ config });
  tokens = await demoTokens(iam);
});
afterAll(async () => { await iam.close(); });

describe.each([
  ['express', startExpress],
  ['koa', startKoa],
  ['fastify', startFastify],
  ['nest', startNest],
] as const)('%s vehicle-service', (_name, start) => {
  test('DRIVER reads, cannot write; OWNER writes; no/expired token 401; other VIN 403; GET /vehicles lists what the token may read', async () => {
    const service = await start(createAuthorizer({ baseUrl: iam.baseUrl }), 0);
    try {
      const rows = await runDemo(service.url, tokens);
      expect(rows.map((r) => [r.request, r.status])).toEqual([
        ['GET /vehicle/WVW1', 200],
        ['PUT /vehicle/WVW1', 403],
        ['PUT /vehicle/WVW1', 200],
        ['GET /vehicle/WVW1', 401],
        ['GET /vehicle/WVW1', 401],
        ['GET /vehicle/WVW2', 403],
        ['GET /vehicles → WVW1', 200],
        ['GET /vehicles', 401],
      ]);
      const res = await fetch(`${service.url}/vehicle/WVW1`, { headers: { authorization: `Bearer ${tokens.alice}` } });
      expect(await res.json()).toMatchObject({ vin: 'WVW1', color: 'red', updatedBy: 'actor-bob' });
    } finally {
      await service.close();
    }
  });
});

test('a role granted in the IAM works on the next request', async () => {
  const service = await startExpress(createAuthorizer({ baseUrl: iam.baseUrl, policy: { minRefreshIntervalMs: 0 } }), 0);
  const original = JSON.parse(await readFile(new URL('../../examples/vehicle-service/iam.json', import.meta.url), 'utf8')) as DevIamConfig;
  try {
    const put = () => fetch(`${service.url}/vehicle/WVW1`, { method: 'PUT', headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json' }, body: '{}' });
    expect((await put()).status).toBe(403);
    const granted = structuredClone(original);
    granted.applications[0]!.roles[0]!.permissions['vehicle-service'] = ['READ', 'WRITE'];
    iam.setConfig(granted);
    expect((await put()).status).toBe(200);
  } finally {
    iam.setConfig(original);
    await service.close();
  }
});
