/**
 * `auditRoutes(app)` from `iam-authz/nestjs` on real Nest applications (decorator syntax; see
 * tsconfig.json here), on the Express and the Fastify platform alike: the one expected application
 * of test/adapters/audit-expected.ts, exactly; `throwOn`; routes as Nest mounts them (global prefix
 * and its exclusions, path arrays, RouterModule, URI versioning, `@All()`); what guards a handler as
 * `IamGuard` reads it (class and method decorators, the global guard or not, report mode); the app
 * answering the same over real HTTP before and after it is audited.
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import {
  All, Controller, Get, Injectable, Module, Post, Put, RequestMethod, UseGuards, Version, VERSION_NEUTRAL, VersioningType,
  type CanActivate, type INestApplication, type ModuleMetadata,
} from '@nestjs/common';
import { RouterModule } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { SubscribeMessage, WebSocketGateway } from '@nestjs/websockets';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import type { RouteAudit } from '../../../src/adapter/index.js';
import { Authenticated, auditRoutes, IamAuthzModule, IamGuard, Public, RequireAnyPermission, RequirePermission, type IamAuthzModuleOptions } from '../../../adapters/nestjs/index.js';
import { EXPECTED_AUDIT, SERVICE } from '../audit-expected.js';
import { thrownBy } from '../../helpers/errors.js';

const config = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
});
afterAll(async () => {
  await iam.close();
});

const vin = (view: { params: Record<string, string | undefined> }) => view.params.vin;

/** A guard of the application's own: the audit cannot know what it checks, so it counts for nothing. */
@Injectable()
class AuditLogGuard implements CanActivate {
  canActivate() { return true; }
}

// The expected application: globalGuard: false, so that an undecorated handler is unguarded.
@Controller()
class VehicleController {
  @Get('vehicle/:vin')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  read() { return { read: true }; }

  @Put('vehicle/:vin')
  @RequirePermission(SERVICE, 'WRITE', 'VIN', vin)
  write() { return { written: true }; }

  @Get('depots/:depotId')
  @RequirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' })
  depot() { return { depot: true }; }

  @Get('me')
  @Authenticated()
  me() { return { me: true }; }

  @Get('health')
  @Public()
  health() { return { ok: true }; }

  @Get('admin/export')
  @UseGuards(AuditLogGuard)
  export() { return { exported: true }; }
}

// The mounted sub-router: a controller under /fleet whose class-level @Authenticated() covers every handler.
@Controller('fleet')
@Authenticated()
class FleetController {
  @Get('vehicles/:vin')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  vehicle() { return { vehicle: true }; }

  @Get('summary')
  summary() { return { summary: true }; }
}

type Platform = 'express' | 'fastify';
const PLATFORMS: readonly Platform[] = ['express', 'fastify'];

interface Setup {
  controllers?: ModuleMetadata['controllers'];
  imports?: ModuleMetadata['imports'];
  providers?: ModuleMetadata['providers'];
  module?: Partial<IamAuthzModuleOptions> & { globalGuard?: boolean };
  configure?: (app: INestApplication) => void;
}

/** A Nest application of `setup` on `platform`, initialised (routes mounted), not listening. */
async function create(platform: Platform, setup: Setup): Promise<INestApplication> {
  const { controllers = [], imports = [], providers = [], module = {}, configure } = setup;
  const moduleRef = await Test.createTestingModule({
    imports: [IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, ...module }), ...imports],
    controllers,
    providers,
  }).compile();
  /* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class */
  const app: INestApplication = platform === 'express'
    ? moduleRef.createNestApplication({ logger: false })
    : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  /* eslint-enable @typescript-eslint/no-unsafe-class-instance-assignment */
  configure?.(app);
  await app.init();
  return app;
}

/** `auditRoutes` of a fresh application of `setup`, closed afterwards. */
async function audited(platform: Platform, setup: Setup): Promise<RouteAudit> {
  const app = await create(platform, setup);
  try {
    return auditRoutes(app);
  } finally {
    await app.close();
  }
}

/** The routes in a compact form: `GET /path access [SERVICE PERMISSION TYPE, …]`. */
const lines = (audit: RouteAudit): string[] => audit.routes.map(({ method, path, access, permissions }) =>
  [method, path, access, ...permissions.map((p) => [p.service, p.permission, p.resourceType].filter(Boolean).join(' '))].join(' '));

const EXPECTED_APP: Setup = { controllers: [VehicleController, FleetController], providers: [AuditLogGuard], module: { globalGuard: false } };

describe.each(PLATFORMS)('the expected application on %s', (platform) => {
  test('is audited exactly: routes and findings', async () => {
    const audit = await audited(platform, EXPECTED_APP);
    expect(audit).toStrictEqual(EXPECTED_AUDIT);
    expect(JSON.parse(JSON.stringify(audit))).toStrictEqual(audit);
  });

  test('throwOn names the offending routes only, as METHOD PATH', async () => {
    const app = await create(platform, EXPECTED_APP);
    try {
      const thrown = (throwOn: ('unguarded' | 'unscoped-parameter')[]): Error & { code?: string } => thrownBy(() => auditRoutes(app, { throwOn }));
      const unguarded = thrown(['unguarded']);
      expect(unguarded.code).toBe('ERR_ROUTE_AUDIT');
      expect(unguarded.message).toContain('GET /admin/export');
      expect(unguarded.message).not.toMatch(/\/depots|\/vehicle|\/fleet|\/me|\/health/);
      const unscoped = thrown(['unscoped-parameter']);
      expect(unscoped.message).toContain('GET /depots/{depotId}');
      expect(unscoped.message).not.toMatch(/\/admin|\/vehicle|\/fleet|\/me|\/health/);
      expect(thrown(['unguarded', 'unscoped-parameter']).message).toMatch(/GET \/admin\/export.*GET \/depots\/\{depotId\}|GET \/depots\/\{depotId\}.*GET \/admin\/export/);
      expect(auditRoutes(app, { throwOn: [] })).toStrictEqual(EXPECTED_AUDIT);
    } finally {
      await app.close();
    }
  });

  test('with the default global guard an undecorated handler is authenticated', async () => {
    const audit = await audited(platform, { ...EXPECTED_APP, module: {} });
    expect(audit.routes).toStrictEqual(EXPECTED_AUDIT.routes.map((r) => (r.path === '/admin/export' ? { ...r, access: 'authenticated' } : r)));
    expect(audit.findings).toStrictEqual(EXPECTED_AUDIT.findings.filter((f) => f.kind !== 'unguarded'));
  });

  test('over real HTTP the application answers the same before and after auditing', async () => {
    const app = await create(platform, EXPECTED_APP);
    try {
      await app.listen(0, '127.0.0.1');
      const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      const alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
      const bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
      const requests: [string, string, string | undefined][] = [
        ['GET', '/vehicle/WVW1', alice], ['GET', '/vehicle/WVW2', alice], ['GET', '/vehicle/WVW1', undefined],
        ['PUT', '/vehicle/WVW1', alice], ['PUT', '/vehicle/WVW1', bob], ['GET', '/depots/D1', alice],
        ['GET', '/me', alice], ['GET', '/me', undefined], ['GET', '/health', undefined], ['GET', '/admin/export', undefined],
        ['GET', '/fleet/summary', undefined], ['GET', '/fleet/summary', alice], ['GET', '/fleet/vehicles/WVW1', alice], ['GET', '/fleet/vehicles/WVW2', alice],
      ];
      const answers = () => Promise.all(requests.map(async ([method, path, token]) => {
        const res = await fetch(`${url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
        return `${method} ${path} ${token === alice ? 'alice' : token === bob ? 'bob' : 'anonymous'} ${res.status}`;
      }));
      const before = await answers();
      expect(before).toEqual([
        'GET /vehicle/WVW1 alice 200', 'GET /vehicle/WVW2 alice 403', 'GET /vehicle/WVW1 anonymous 401',
        'PUT /vehicle/WVW1 alice 403', 'PUT /vehicle/WVW1 bob 200', 'GET /depots/D1 alice 403',
        'GET /me alice 200', 'GET /me anonymous 401', 'GET /health anonymous 200', 'GET /admin/export anonymous 200',
        'GET /fleet/summary anonymous 401', 'GET /fleet/summary alice 200', 'GET /fleet/vehicles/WVW1 alice 200', 'GET /fleet/vehicles/WVW2 alice 403',
      ]);
      expect(auditRoutes(app)).toStrictEqual(EXPECTED_AUDIT);
      expect(auditRoutes(app)).toStrictEqual(EXPECTED_AUDIT);
      expect(await answers()).toEqual(before);
    } finally {
      await app.close();
    }
  });
});

// Paths as Nest mounts them.
@Controller(['cars', 'autos'])
class CarsController {
  @Get([':vin', 'by-vin/:vin'])
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  read() { return {}; }
}

@Controller()
class OpsController {
  @Get()
  @Public()
  root() { return {}; }

  @Get('health')
  @Public()
  health() { return {}; }

  @Get('metrics')
  @Public()
  metrics() { return {}; }

  @Post('metrics')
  @Authenticated()
  push() { return {}; }

  @All('proxy')
  @Authenticated()
  proxy() { return {}; }
}

@Controller({ path: 'fleet', version: '1' })
@Authenticated()
class VersionedController {
  @Get('summary')
  summary() { return {}; }

  @Get('vehicles/:vin')
  @Version('2')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  vehicle() { return {}; }

  @Get('ping')
  @Version([VERSION_NEUTRAL, '3'])
  @Public()
  ping() { return {}; }
}

@Controller({ path: 'status', version: '1' })
class StatusController {
  @Get()
  @Public()
  status() { return {}; }
}

@Controller('users')
class AdminUsersController {
  @Get(':userId')
  @RequirePermission(SERVICE, 'WRITE', { node: (view) => view.params.userId })
  user() { return {}; }
}

@Module({ controllers: [AdminUsersController] })
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is an empty decorated class
class AdminModule {}

describe.each(PLATFORMS)('paths as Nest mounts them, on %s', (platform) => {
  test('global prefix and its exclusions, path arrays, RouterModule, URI versions, @All()', async () => {
    const app = await create(platform, {
      controllers: [CarsController, OpsController, VersionedController, StatusController],
      imports: [AdminModule, RouterModule.register([{ path: 'admin', module: AdminModule }])],
      module: { globalGuard: false },
      configure: (app) => {
        app.setGlobalPrefix('api', { exclude: ['health', { path: 'metrics', method: RequestMethod.GET }, 'status'] });
        app.enableVersioning({ type: VersioningType.URI });
      },
    });
    onTestFinished(() => app.close());
    const audit = auditRoutes(app);
    const R = `${SERVICE} READ VIN`;
    expect(lines(audit)).toStrictEqual([
      // The root handler of a root controller is the prefix itself.
      'GET /api public',
      'GET /api/admin/users/{userId} permission vehicle-service WRITE',
      `GET /api/autos/by-vin/{vin} permission ${R}`,
      `GET /api/autos/{vin} permission ${R}`,
      `GET /api/cars/by-vin/{vin} permission ${R}`,
      `GET /api/cars/{vin} permission ${R}`,
      'POST /api/metrics authenticated',
      // @All(): every method, each its own operation.
      ...['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'].map((m) => `${m} /api/proxy authenticated`),
      'GET /api/v1/fleet/summary authenticated',
      'GET /api/v2/fleet/vehicles/{vin} permission vehicle-service READ VIN',
      'GET /api/v3/fleet/ping public',
      // VERSION_NEUTRAL: no version in the path.
      'GET /api/fleet/ping public',
      'GET /health public',
      // Excluded for GET only.
      'GET /metrics public',
      // Excluded from the prefix, with its version kept.
      'GET /v1/status public',
    ].sort(byPath));
    expect(audit.findings).toStrictEqual([]);
    // The router agrees: each audited route is served (401 without a token, or 200), the prefixed excluded ones are not.
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    const status = async (method: string, path: string) => (await fetch(`${url}${path.replace(/\{\w+\}/g, 'x')}`, { method })).status;
    for (const { method, path, access } of audit.routes) expect([method, path, await status(method, path)]).toEqual([method, path, access === 'public' ? 200 : 401]);
    for (const path of ['/api/health', '/api/status', '/api/v1/status', '/v1/fleet/summary', '/api/fleet/summary']) expect([path, await status('GET', path)]).toEqual([path, 404]);
  });

  test('URI versioning with a default version and a prefix of its own', async () => {
    const audit = await audited(platform, {
      controllers: [CarsController, VersionedController],
      configure: (app) => { app.enableVersioning({ type: VersioningType.URI, defaultVersion: '7', prefix: 'version-' }); },
    });
    expect(audit.routes.map((r) => r.path)).toStrictEqual([
      '/fleet/ping', '/version-1/fleet/summary', '/version-2/fleet/vehicles/{vin}', '/version-3/fleet/ping',
      '/version-7/autos/by-vin/{vin}', '/version-7/autos/{vin}', '/version-7/cars/by-vin/{vin}', '/version-7/cars/{vin}',
    ]);
  });
});

/** The audit's order: by path, then method (the lines start `METHOD /path`). */
function byPath(a: string, b: string): number {
  const [ma = '', pa = ''] = a.split(' ');
  const [mb = '', pb = ''] = b.split(' ');
  return pa < pb ? -1 : pa > pb ? 1 : ma < mb ? -1 : ma > mb ? 1 : 0;
}

// What guards a handler, as IamGuard reads it: the method's requirement, else its class's.
@Controller('cars')
@RequirePermission(SERVICE, 'READ', 'VIN', vin)
class ClassLevelController {
  @Get(':vin')
  read() { return {}; }

  @Get(':vin/owner')
  @Authenticated()
  owner() { return {}; }

  @Get(':vin/photo')
  @Public()
  photo() { return {}; }

  @Get(':vin/anonymous')
  @Authenticated({ optional: true })
  anonymous() { return {}; }

  @Put(':vin')
  @RequireAnyPermission(SERVICE, ['WRITE', 'READ'], 'VIN', vin)
  write() { return {}; }

  @Post(':vin/shadow')
  @RequirePermission(SERVICE, 'WRITE', 'VIN', vin, { mode: 'report' })
  shadow() { return {}; }
}

@Controller('open')
@Public()
class PublicController {
  @Get()
  index() { return {}; }

  @Get(':vin')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  read() { return {}; }
}

// globalGuard: false leaves IamGuard to @UseGuards; an undecorated handler under it needs a token.
@Controller('guarded')
@UseGuards(AuditLogGuard, IamGuard)
class GuardedController {
  @Get()
  index() { return {}; }
}

@Controller('own')
@UseGuards(AuditLogGuard)
class OwnGuardController {
  @Get()
  index() { return {}; }

  @Get('method')
  @UseGuards(AuditLogGuard)
  method() { return {}; }
}

// Not HTTP: a gateway's handlers are no routes, whatever they require.
@WebSocketGateway()
class VehicleGateway {
  @SubscribeMessage('read')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  read() { return {}; }
}

describe.each(PLATFORMS)('what guards a handler, on %s', (platform) => {
  const setup: Setup = {
    controllers: [ClassLevelController, PublicController, GuardedController, OwnGuardController],
    providers: [AuditLogGuard, VehicleGateway],
    module: { globalGuard: false },
  };

  test('a method decorator overrides the class one; @UseGuards(IamGuard) guards; other guards count for nothing', async () => {
    expect(lines(await audited(platform, setup))).toStrictEqual([
      'GET /cars/{vin} permission vehicle-service READ VIN',
      // RequireAnyPermission: any one of them grants.
      'PUT /cars/{vin} permission vehicle-service WRITE VIN vehicle-service READ VIN',
      'GET /cars/{vin}/anonymous public',
      'GET /cars/{vin}/owner authenticated',
      'GET /cars/{vin}/photo public',
      // Report mode enforces the token only.
      'POST /cars/{vin}/shadow authenticated',
      'GET /guarded authenticated',
      'GET /open public',
      'GET /open/{vin} permission vehicle-service READ VIN',
      'GET /own unguarded',
      'GET /own/method unguarded',
    ]);
  });

  test('the module\'s mode applies where a route sets none', async () => {
    @Controller('enforced')
    class EnforcedController {
      @Get(':vin')
      @RequirePermission(SERVICE, 'READ', 'VIN', vin, { mode: 'enforce' })
      read() { return {}; }
    }
    const audit = await audited(platform, { ...setup, controllers: [ClassLevelController, EnforcedController], module: { globalGuard: false, mode: 'report' } });
    expect(audit.routes.filter((r) => r.access === 'permission').map((r) => `${r.method} ${r.path}`)).toStrictEqual(['GET /enforced/{vin}']);
    expect(audit.routes.find((r) => r.method === 'GET' && r.path === '/cars/{vin}')?.access).toBe('authenticated');
  });
});

// Header versioning: one path, one handler per version; a request runs one of them.
@Controller({ path: 'items', version: '1' })
class ItemsV1Controller {
  @Get()
  list() { return {}; }

  @Get(':vin')
  @RequirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' })
  read() { return {}; }
}

@Controller({ path: 'items', version: '2' })
class ItemsV2Controller {
  @Get()
  @RequirePermission(SERVICE, 'READ', { node: () => 'N-ROOT' })
  list() { return {}; }

  @Get(':vin')
  @RequirePermission(SERVICE, 'READ', 'VIN', vin)
  read() { return {}; }
}

describe.each(PLATFORMS)('handlers that share a method and path, on %s', (platform) => {
  test('header versioning: the route is as guarded as its least guarded version', async () => {
    const audit = await audited(platform, {
      controllers: [ItemsV1Controller, ItemsV2Controller],
      module: { globalGuard: false },
      configure: (app) => { app.enableVersioning({ type: VersioningType.HEADER, header: 'x-api-version' }); },
    });
    expect(lines(audit)).toStrictEqual(['GET /items unguarded', 'GET /items/{vin} permission vehicle-service READ']);
    // Version 1 of /items/:vin never reads the VIN: the route has an unscoped parameter.
    expect(audit.findings.map((f) => `${f.kind} ${f.method} ${f.path}`)).toStrictEqual(['unguarded GET /items', 'unscoped-parameter GET /items/{vin}']);
  });
});

@Controller('files')
@Authenticated()
class FilesController {
  @Get('*path')
  file() { return {}; }

  @Get('docs{/:page}')
  docs() { return {}; }
}

// Fastify's router refuses this syntax (a wildcard must end the path): Express only.
describe('path syntax of the Express platform (path-to-regexp 8)', () => {
  test('a wildcard is one parameter; an optional group is a route with it and one without', async () => {
    const app = await create('express', { controllers: [FilesController] });
    onTestFinished(() => app.close());
    expect(auditRoutes(app).routes.map((r) => r.path)).toStrictEqual(['/files/docs', '/files/docs/{page}', '/files/{path}']);
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    for (const path of ['/files/docs', '/files/docs/2', '/files/a/b.txt']) expect([path, (await fetch(`${url}${path}`)).status]).toEqual([path, 401]);
  });
});

describe('misuse', () => {
  test('anything but a Nest HTTP application is a TypeError saying what to pass', async () => {
    const message = /auditRoutes: pass the INestApplication/;
    for (const wrong of [undefined, null, {}, 'app', () => undefined]) expect(() => auditRoutes(wrong as never)).toThrow(message);
    expect(() => auditRoutes(undefined as never)).toThrow(TypeError);
    const moduleRef = await Test.createTestingModule({ controllers: [OpsController] }).compile();
    try {
      expect(() => auditRoutes(moduleRef as never)).toThrow(message);
    } finally {
      await moduleRef.close();
    }
  });

  test('before app.init() the routes are not mounted: an Error saying so', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [IamAuthzModule.forRoot({ baseUrl: iam.baseUrl })], controllers: [OpsController] }).compile();
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    try {
      expect(() => auditRoutes(app)).toThrow(/auditRoutes: call it after `await app\.init\(\)`/);
      await app.init();
      expect(auditRoutes(app).routes.length).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });

  test('wrong options are a TypeError naming them', async () => {
    const app = await create('express', { controllers: [OpsController] });
    try {
      expect(() => auditRoutes(app, { throwOn: ['unguardded'] } as never)).toThrow(/auditRoutes: "throwOn"/);
      expect(() => auditRoutes(app, { throw: [] } as never)).toThrow(/auditRoutes: unknown option "throw"/);
      expect(() => auditRoutes(app, null as never)).toThrow(TypeError);
    } finally {
      await app.close();
    }
  });
});
