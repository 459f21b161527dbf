/**
 * Every adapter's guards show in `authorizer.inventory()`: the same vehicle app on each framework
 * (test/adapters/apps.ts), served over real HTTP; NestJS's decorated handlers are there once the
 * application has initialised, before any request.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createAuthorizer, type Authorizer, type InventoryEntry } from '../../src/index.js';
import { FRAMEWORKS, startApp, type RunningApp } from '../adapters/apps.js';

const BASE = 'http://127.0.0.1:9';

/** What the vehicle app asks for, without routes (Express, Koa, Fastify, Hono and fetch do not know them at creation). */
const EXPECTED: InventoryEntry[] = [
  { service: 'vehicle-service', permission: 'READ', node: true, mode: 'enforce' },
  { service: 'vehicle-service', permission: 'READ', resourceType: 'VIN', mode: 'enforce' },
  { service: 'vehicle-service', permission: 'WRITE', resourceType: 'VIN', mode: 'enforce' },
  { service: 'vehicle-service', permission: 'WRITE', resourceType: 'VIN', mode: 'report' },
  { service: 'vehicle-service', permissions: ['WRITE', 'READ'], resourceType: 'VIN', mode: 'enforce' },
];

let running: RunningApp | undefined;
let authorizer: Authorizer | undefined;
afterEach(async () => {
  await running?.close();
  await authorizer?.close();
  running = undefined;
  authorizer = undefined;
});

/** Only arrays, plain objects, strings, numbers and booleans. */
function plainJson(value: unknown): boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return true;
  if (Array.isArray(value)) return value.every(plainJson);
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every(plainJson);
}

describe('inventory() lists every guard', () => {
  for (const framework of FRAMEWORKS.filter((f) => !f.startsWith('nest'))) {
    test(framework, async () => {
      authorizer = createAuthorizer({ baseUrl: BASE });
      expect(authorizer.inventory()).toEqual([]);
      running = await startApp(framework, authorizer);
      const inventory = authorizer.inventory();
      expect(inventory).toEqual(EXPECTED);
      expect(plainJson(inventory)).toBe(true);
      // A copy: changing it changes nothing.
      (inventory[0] as { service: string }).service = 'x';
      expect(authorizer.inventory()).toEqual(EXPECTED);
    });
  }

  for (const framework of ['nest-express', 'nest-fastify'] as const) {
    test(`${framework}: the decorated handlers, by controller and handler, before any request`, async () => {
      authorizer = createAuthorizer({ baseUrl: BASE });
      running = await startApp(framework, authorizer);
      const inventory = authorizer.inventory();
      expect(plainJson(inventory)).toBe(true);
      const at = (handler: string) => ({ controller: 'VehicleController', handler });
      expect(inventory).toEqual(expect.arrayContaining([
        { service: 'vehicle-service', permission: 'READ', resourceType: 'VIN', mode: 'enforce', route: at('read') },
        { service: 'vehicle-service', permission: 'WRITE', resourceType: 'VIN', mode: 'enforce', route: at('write') },
        { service: 'vehicle-service', permission: 'READ', node: true, mode: 'enforce', route: at('node') },
        { service: 'vehicle-service', permissions: ['WRITE', 'READ'], resourceType: 'VIN', mode: 'enforce', route: at('any') },
        { service: 'vehicle-service', permission: 'WRITE', resourceType: 'VIN', mode: 'report', route: at('shadow') },
      ]));
      // @Authenticated() routes ask for no permission.
      expect(inventory.some((e) => e.route && 'handler' in e.route && e.route.handler === 'me')).toBe(false);
      // Requests change nothing.
      await fetch(`${running.url}/vehicle/WVW1`);
      await fetch(`${running.url}/any/WVW1`);
      expect(authorizer.inventory()).toEqual(inventory);
    });
  }
});

describe('inventory() order and de-duplication', () => {
  test('one entry per distinct guard, sorted; resource types stay apart', async () => {
    const { createFetchGuards } = await import('../../adapters/fetch/index.js');
    authorizer = createAuthorizer({ baseUrl: BASE, mode: 'report' });
    const guards = createFetchGuards(authorizer);
    const value = () => 'x';
    guards.requirePermission('b-service', 'READ', 'VIN', value);
    guards.requirePermission('a-service', 'READ', 'VIN', value);
    guards.requirePermission('a-service', 'READ', 'VIN', value);
    guards.requirePermission('a-service', 'READ', 'FLEET', value, { mode: 'enforce' });
    expect(authorizer.inventory()).toEqual([
      { service: 'a-service', permission: 'READ', resourceType: 'FLEET', mode: 'enforce' },
      { service: 'a-service', permission: 'READ', resourceType: 'VIN', mode: 'report' },
      { service: 'b-service', permission: 'READ', resourceType: 'VIN', mode: 'report' },
    ]);
  });
});
