/**
 * `iam-authz/nestjs` as applications write it (decorator syntax; see tsconfig.json here), over real
 * HTTP against the development IAM: forRoot/forRootAsync, the global guard's default (a token is
 * required), @Public, @Authenticated, controller- and handler-level @RequirePermission, @Iam(),
 * resolvers reading the body and query, per-controller @UseGuards, closing on shutdown.
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { Body, Controller, Get, Inject, Module, Put, UseGuards, type INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, onTestFinished, test, vi } from 'vitest';
import type { Authorizer, IamState } from '../../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { createGuards } from '../../../src/adapter/index.js';
import { Authorizers } from '../../helpers/authorizers.js';
import { Authenticated, Iam, IAM_AUTHORIZER, IamAuthzModule, IamGuard, Public, RequireAnyPermission, RequirePermission, type IamAuthzModuleOptions } from '../../../adapters/nestjs/index.js';

const config = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let alice: string;
let bob: string;

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  bob = iam.mintToken({ actor: 'actor-bob', tenantId: 'tenant-1' });
});
afterAll(async () => {
  await iam.close();
});

@Controller('vehicles')
@RequirePermission('vehicle-service', 'READ', 'VIN', (view) => view.params.vin)
class VehiclesController {
  @Get(':vin')
  read(@Iam() state: IamState) {
    return { sub: state.claims.sub, reference: state.decision?.reference };
  }

  @Put(':vin')
  @RequirePermission('vehicle-service', 'WRITE', 'VIN', (view) => (view.body as { vin?: string } | undefined)?.vin)
  write(@Body() body: { vin: string }, @Iam() state: IamState) {
    return { updated: body.vin, by: state.claims.sub };
  }

  @Get(':vin/owner')
  @Authenticated()
  owner(@Iam() state: IamState) {
    return { sub: state.claims.sub, decision: state.decision ?? null };
  }
}

@Controller()
class MiscController {
  @Get('health')
  @Public()
  health(@Iam() state: IamState | undefined) {
    return { ok: true, iam: state ?? null };
  }

  @Get('undecorated')
  undecorated(@Iam() state: IamState) {
    return { sub: state.claims.sub };
  }

  @Get('search')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => (typeof view.query.vin === 'string' ? view.query.vin : undefined))
  search(@Iam() state: IamState) {
    return { reference: state.decision?.reference };
  }
}

const CONFIG_TOKEN = 'test:iam-base-url';
@Module({ providers: [{ provide: CONFIG_TOKEN, useFactory: () => iam.baseUrl }], exports: [CONFIG_TOKEN] })
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is an empty decorated class
class ConfigModule {}

async function start(imports: unknown[], controllers: unknown[], platform: 'express' | 'fastify' = 'express'): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({ imports: imports as never[], controllers: controllers as never[] }).compile();
  /* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class */
  const app = platform === 'express' ? moduleRef.createNestApplication({ logger: false }) : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  /* eslint-enable @typescript-eslint/no-unsafe-class-instance-assignment */
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

const call = (url: string, token?: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) } });

describe.each(['express', 'fastify'] as const)('IamAuthzModule.forRoot on %s', (platform) => {
  let app: INestApplication;
  let url: string;
  beforeAll(async () => {
    ({ app, url } = await start([IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, realm: 'vehicles' })], [VehiclesController, MiscController], platform));
  });
  afterAll(async () => {
    await app.close();
  });

  test('the controller-level requirement applies; the handler-level one overrides it', async () => {
    expect(await (await call(`${url}/vehicles/WVW1`, alice)).json()).toEqual({ sub: 'actor-alice', reference: 'VIN=WVW1' });
    const denied = await call(`${url}/vehicles/WVW9`, alice);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer realm="vehicles", error="insufficient_scope"/);
    expect(await (await call(`${url}/vehicles/WVW9/owner`, alice)).json()).toEqual({ sub: 'actor-alice', decision: null });
  });

  test('a resolver reads the parsed body and the query', async () => {
    const put = (token: string, vin: string) => call(`${url}/vehicles/ignored`, token, { method: 'PUT', body: JSON.stringify({ vin }) });
    expect((await put(alice, 'WVW1')).status).toBe(403);
    const ok = await put(bob, 'WVW1');
    expect([ok.status, await ok.json()]).toEqual([200, { updated: 'WVW1', by: 'actor-bob' }]);
    expect((await put(bob, 'WVW2')).status).toBe(403);
    expect(await (await call(`${url}/search?vin=WVW1`, alice)).json()).toEqual({ reference: 'VIN=WVW1' });
    expect((await call(`${url}/search?vin=WVW2`, alice)).status).toBe(403);
    expect((await call(`${url}/search?vin=WVW1&vin=WVW2`, alice)).status).toBe(403);
  });

  test('undecorated routes require a token (fail closed); @Public() needs none', async () => {
    const res = await call(`${url}/undecorated`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="vehicles"');
    expect(await res.json()).toEqual({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: expect.any(String) as string, code: 'ERR_TOKEN_MISSING' });
    expect(await (await call(`${url}/undecorated`, bob)).json()).toEqual({ sub: 'actor-bob' });
    expect(await (await call(`${url}/health`)).json()).toEqual({ ok: true, iam: null });
    const expired = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1', claims: { exp: Math.floor(Date.now() / 1000) - 3600 } });
    const late = await call(`${url}/undecorated`, expired);
    expect(late.status).toBe(401);
    expect((await late.json() as { code: string }).code).toBe('ERR_TOKEN_EXPIRED');
  });
});

describe('forRootAsync, per-controller guard, shutdown', () => {
  test('options from an injected provider; globalGuard: false leaves other controllers open', async () => {
    @Controller('guarded')
    @UseGuards(IamGuard)
    class Guarded {
      @Get()
      get(@Iam() state: IamState) { return { sub: state.claims.sub }; }
    }
    @Controller('open')
    class Open {
      @Get()
      get() { return { open: true }; }
    }
    const factory = vi.fn((baseUrl: string): IamAuthzModuleOptions => ({ baseUrl, realm: 'async' }));
    const { app, url } = await start([IamAuthzModule.forRootAsync({ imports: [ConfigModule], inject: [CONFIG_TOKEN], useFactory: factory, globalGuard: false })], [Guarded, Open]);
    try {
      expect(factory).toHaveBeenCalledWith(iam.baseUrl);
      expect(await (await call(`${url}/open`)).json()).toEqual({ open: true });
      const refused = await call(`${url}/guarded`);
      expect([refused.status, refused.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="async"']);
      expect(await (await call(`${url}/guarded`, alice)).json()).toEqual({ sub: 'actor-alice' });
    } finally {
      await app.close();
    }
  });

  test('the authorizer is injectable; the module closes the one it created, not one it was given', async () => {
    @Controller()
    class Uses {
      constructor(@Inject(IAM_AUTHORIZER) private readonly authorizer: Authorizer) {}
      @Get('check')
      @Public()
      async check() {
        const identity = await this.authorizer.authenticate(`Bearer ${bob}`);
        return this.authorizer.authorize(identity, { service: 'vehicle-service', permission: 'WRITE', resource: { type: 'VIN', value: 'WVW1' } });
      }
    }
    const { app, url } = await start([IamAuthzModule.forRoot({ baseUrl: iam.baseUrl })], [Uses]);
    const created = app.get<Authorizer>(IAM_AUTHORIZER);
    const closeCreated = vi.spyOn(created, 'close');
    expect(await (await call(`${url}/check`)).json()).toMatchObject({ granted: true, reference: 'VIN=WVW1' });
    await app.close();
    expect(closeCreated).toHaveBeenCalledOnce();

    const { createAuthorizer } = await import('../../../src/index.js');
    const mine = createAuthorizer({ baseUrl: iam.baseUrl });
    const closeMine = vi.spyOn(mine, 'close');
    const second = await start([IamAuthzModule.forRoot({ authorizer: mine })], [Uses]);
    expect(second.app.get(IAM_AUTHORIZER)).toBe(mine);
    await second.app.close();
    expect(closeMine).not.toHaveBeenCalled();
    await mine.close();
  });

  test('invalid options and decorator arguments fail at startup with a TypeError naming them', () => {
    expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, realm: '' })).toThrow(/"realm"/);
    expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, retryAfterSec: -1 })).toThrow(/"retryAfterSec"/);
    expect(() => IamAuthzModule.forRoot({ authorizer: {} as Authorizer })).toThrow(TypeError);
    expect(() => IamAuthzModule.forRoot({ authorizer: { check() {} } as unknown as Authorizer, baseUrl: 'x' } as never)).toThrow(/"baseUrl" cannot be given with "authorizer"/);
    expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, globalGuard: 'yes' as never })).toThrow(/"globalGuard"/);
    expect(() => IamAuthzModule.forRootAsync({ useFactory: undefined as never })).toThrow(/"useFactory"/);
    expect(() => RequirePermission('', 'READ', 'VIN', () => 'x')).toThrow(/"service"/);
    expect(() => RequirePermission('s', '', 'VIN', () => 'x')).toThrow(/"permission"/);
    expect(() => RequirePermission('s', 'READ', 'VIN=1', () => 'x')).toThrow(/resource type/);
    expect(() => RequirePermission('s', 'READ', 'VIN', 'x' as never)).toThrow(/resolver/);
    expect(() => RequirePermission('s', 'READ', { node: 1 as never })).toThrow(/resolver/);
    expect(() => RequirePermission('s', 'READ', null as never)).toThrow(/resolver/);
  });
});

describe('decorated handlers without the guard', () => {
  @Controller('bare')
  class Bare {
    @Get('read/:vin')
    @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => view.params.vin)
    read(@Iam() state: IamState) { return { sub: state.claims.sub }; }

    @Get('any/:vin')
    @RequireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', (view) => view.params.vin)
    any(@Iam() state: IamState) { return { sub: state.claims.sub }; }

    @Get('me')
    @Authenticated()
    me(@Iam() state: IamState) { return { sub: state.claims.sub }; }

    @Get('open')
    open() { return { open: true }; }
  }

  @Controller('whole')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => view.params.vin)
  class Whole {
    @Get(':vin')
    read(@Iam() state: IamState) { return { sub: state.claims.sub }; }
  }

  test('globalGuard: false and no @UseGuards(IamGuard): decorated handlers and controllers still enforce', async () => {
    const { app, url } = await start([IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, globalGuard: false })], [Bare, Whole]);
    try {
      for (const path of ['bare/read/WVW1', 'bare/any/WVW1', 'bare/me', 'whole/WVW1']) {
        const anonymous = await call(`${url}/${path}`);
        expect([path, anonymous.status]).toEqual([path, 401]);
        expect((await call(`${url}/${path}`, alice)).status).toBe(200);
      }
      expect((await call(`${url}/bare/read/WVW2`, alice)).status).toBe(403);
      expect((await call(`${url}/whole/WVW2`, alice)).status).toBe(403);
      expect(await (await call(`${url}/bare/read/WVW1`, alice)).json()).toEqual({ sub: 'actor-alice' });
      // An undecorated handler is the application's choice with globalGuard: false.
      expect(await (await call(`${url}/bare/open`)).json()).toEqual({ open: true });
    } finally {
      await app.close();
    }
  });

  test('the global guard and the decorator\'s guard check a request once', async () => {
    const authorizer = (await import('../../../src/index.js')).createAuthorizer({ baseUrl: iam.baseUrl });
    const authenticate = vi.spyOn(authorizer, 'authenticate');
    const { app, url } = await start([IamAuthzModule.forRoot({ authorizer })], [Bare]);
    try {
      expect((await call(`${url}/bare/read/WVW1`, alice)).status).toBe(200);
      expect(authenticate).toHaveBeenCalledOnce();
    } finally {
      await app.close();
      await authorizer.close();
    }
  });

  test('without IamAuthzModule, the application refuses to start, naming the controller and handler', async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [Whole, Bare] }).compile();
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
    const app: INestApplication = moduleRef.createNestApplication({ logger: false });
    try {
      await expect(app.listen(0, '127.0.0.1')).rejects.toThrow(/IamAuthzModule is not imported.*Whole\.read.*Bare\.read/s);
    } finally {
      await app.close().catch(() => undefined);
    }
  });
});

describe('options are checked where they are written', () => {
  const r = () => 'x';
  test('route options: a wrong mode, an unknown key or null is a TypeError naming it', () => {
    expect(() => RequirePermission('s', 'READ', 'VIN', r, { mode: 'enforc' } as never)).toThrow(TypeError);
    expect(() => RequirePermission('s', 'READ', 'VIN', r, { mode: 'enforc' } as never)).toThrow(/RequirePermission: "mode"/);
    expect(() => RequirePermission('s', 'READ', 'VIN', r, { mod: 'report' } as never)).toThrow(/RequirePermission: unknown route option "mod"/);
    expect(() => RequirePermission('s', 'READ', 'VIN', r, { mode: null } as never)).toThrow(/"mode"/);
    expect(() => RequirePermission('s', 'READ', { node: r }, { mode: 'x' } as never)).toThrow(/"mode"/);
    expect(() => RequirePermission('s', 'READ', { node: r, nod: 1 } as never)).toThrow(/"nod"/);
    expect(() => RequireAnyPermission('s', ['READ'], 'VIN', r, { mode: 'enforc' } as never)).toThrow(/RequireAnyPermission: "mode"/);
    expect(() => RequireAnyPermission('s', ['READ'], { node: r }, { mod: 'report' } as never)).toThrow(/"mod"/);
    expect(() => (RequirePermission as (...args: unknown[]) => unknown)('s', 'READ', 'VIN', r, {}, {})).toThrow(/RequirePermission: too many arguments/);
    expect(() => RequirePermission('s', 'READ', 'VIN', r, { mode: 'report' })).not.toThrow();
    expect(() => RequirePermission('s', 'READ', 'VIN', r, undefined)).not.toThrow();
  });

  test('decorators and the kit parse permission arguments once: the same mistake, the same message', () => {
    const authorizers = new Authorizers();
    const guards = createGuards(authorizers.create({ baseUrl: 'http://127.0.0.1:1' }));
    onTestFinished(() => authorizers.closeAll());
    const bad: unknown[][] = [
      ['', 'READ', 'VIN', r], ['s', '', 'VIN', r], ['s', 'READ', 'VIN=1', r], ['s', 'READ', null, r], ['s', 'READ', [r]],
      ['s', 'READ', 'VIN', 'x'], ['s', 'READ', { node: 1 }], ['s', 'READ', { node: r, nod: 1 }], ['s', 'READ', 'VIN', r, {}, {}],
      ['s', 'READ', { node: r }, {}, {}], ['s', 'READ', 'VIN', r, null], ['s', 'READ', 'VIN', r, { mode: null }], ['s', 'READ', 'VIN', r, { mod: 1 }],
    ];
    const message = (fn: () => unknown): string => {
      try {
        fn();
      } catch (error) {
        return (error as Error).message.replace(/^\w+: /, '');
      }
      return 'no error';
    };
    for (const args of bad) {
      const kit = message(() => (guards.requirePermission as (...a: unknown[]) => unknown)(...args));
      expect(kit, JSON.stringify(args)).not.toBe('no error');
      expect(message(() => (RequirePermission as (...a: unknown[]) => unknown)(...args)), JSON.stringify(args)).toBe(kit);
      const any = [args[0], [args[1]], ...args.slice(2)];
      expect(message(() => (RequireAnyPermission as (...a: unknown[]) => unknown)(...any))).toBe(message(() => (guards.requireAnyPermission as (...a: unknown[]) => unknown)(...any)));
    }
  });

  test('@Authenticated options: unknown keys, non-booleans and null are refused', () => {
    expect(() => Authenticated({ optinal: true } as never)).toThrow(/Authenticated: unknown option "optinal"/);
    expect(() => Authenticated({ optional: 'yes' } as never)).toThrow(/Authenticated: "optional"/);
    expect(() => Authenticated({ optional: null } as never)).toThrow(/"optional"/);
    expect(() => Authenticated(null as never)).toThrow(TypeError);
    expect(() => Authenticated({ optional: false })).not.toThrow();
  });

  test('forRoot refuses passErrors (Nest renders through exception filters)', () => {
    // @ts-expect-error -- not an option of the Nest adapter
    expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, passErrors: true })).toThrow(/IamAuthzModule: "passErrors" is not supported/);
  });

  test('null is never "default": forRoot and forRootAsync name the option', () => {
    for (const key of ['realm', 'exposeDecision', 'retryAfterSec', 'mode', 'globalGuard']) {
      expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, [key]: null })).toThrow(new RegExp(`IamAuthzModule: "${key}"`));
    }
    expect(() => IamAuthzModule.forRoot({ authorizer: null } as never)).toThrow(/IamAuthzModule: "authorizer"/);
    expect(() => IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, authorizer: null } as never)).toThrow(/IamAuthzModule: "authorizer"/);
    const useFactory = () => ({ baseUrl: iam.baseUrl });
    for (const key of ['inject', 'imports', 'globalGuard']) {
      expect(() => IamAuthzModule.forRootAsync({ useFactory, [key]: null })).toThrow(new RegExp(`IamAuthzModule.forRootAsync: "${key}"`));
    }
    expect(() => IamAuthzModule.forRootAsync({ useFactory, injects: [] } as never)).toThrow(/unknown option "injects"/);
  });

  test('forRootAsync: a factory\'s null option stops the start with a TypeError naming it', async () => {
    const moduleRef = Test.createTestingModule({ imports: [IamAuthzModule.forRootAsync({ useFactory: () => ({ baseUrl: iam.baseUrl, realm: null as never }) })] });
    await expect(moduleRef.compile()).rejects.toThrow(/IamAuthzModule: "realm"/);
  });
});
