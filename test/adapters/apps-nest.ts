/**
 * The scenario table's vehicle app on NestJS (Express and Fastify platforms) through
 * `iam-authz/nestjs`. Decorators are applied as functions here, so this file needs no
 * `experimentalDecorators`; test/adapters/nestjs/ has the same with decorator syntax, as users write it.
 */
import 'reflect-metadata';
import { Controller, Get, HttpCode, Options, Put, type INestApplication, type Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { Authorizer, IamState } from '../../src/index.js';
import { Authenticated, Iam, IamAuthzModule, RequireAnyPermission, RequirePermission, type IamRequestView } from '../../adapters/nestjs/index.js';
import type { AppOptions, RunningApp } from './apps.js';

const boom = (): string => { throw new Error('resolver failed'); };
const later = (v: string | undefined): Promise<string | undefined> => new Promise((r) => setTimeout(() => { r(v); }, 5));
const param = (name: string) => (view: IamRequestView) => view.params[name];

type Decorate = (target: object, key: string, descriptor: PropertyDescriptor) => unknown;

/** Applies method decorators (and `@Iam()` on the first parameter) as TypeScript would. */
function route(controller: Type, method: string, ...decorators: Decorate[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(controller.prototype, method)!;
  for (const decorate of decorators.reverse()) decorate(controller.prototype as object, method, descriptor);
  Iam()(controller.prototype as object, method, 0);
}

function vehicleController(handled: { count: number }): Type {
  const reply = (iam: IamState | undefined) => {
    handled.count++;
    return { sub: iam?.claims.sub, decision: iam?.decision ?? null, shadow: iam?.shadow ?? false, anonymous: iam === undefined };
  };
  class VehicleController {
    read(iam?: IamState) { return reply(iam); }
    write(iam?: IamState) { return reply(iam); }
    async(iam?: IamState) { return reply(iam); }
    throws(iam?: IamState) { return reply(iam); }
    node(iam?: IamState) { return reply(iam); }
    multi(iam?: IamState) { return reply(iam); }
    empty(iam?: IamState) { return reply(iam); }
    me(iam?: IamState) { return reply(iam); }
    optional(iam?: IamState) { return reply(iam); }
    any(iam?: IamState) { return reply(iam); }
    anymulti(iam?: IamState) { return reply(iam); }
    shadow(iam?: IamState) { return reply(iam); }
    enforced(iam?: IamState) { return reply(iam); }
    options(_iam?: IamState) { handled.count++; }
  }
  Controller()(VehicleController);
  route(VehicleController, 'read', Get('vehicle/:vin'), RequirePermission('vehicle-service', 'READ', 'VIN', param('vin')));
  route(VehicleController, 'write', Put('vehicle/:vin'), HttpCode(200), RequirePermission('vehicle-service', 'WRITE', 'VIN', param('vin')));
  route(VehicleController, 'async', Get('async/:vin'), RequirePermission('vehicle-service', 'READ', 'VIN', (v) => later(v.params.vin)));
  route(VehicleController, 'throws', Get('throws/:vin'), RequirePermission('vehicle-service', 'READ', 'VIN', boom));
  route(VehicleController, 'node', Get('node/:id'), RequirePermission('vehicle-service', 'READ', { node: param('id') }));
  route(VehicleController, 'multi', Get('multi'), RequirePermission('vehicle-service', 'READ', 'VIN', () => ['WVW1', 'WVW2']));
  route(VehicleController, 'empty', Get('empty'), RequirePermission('vehicle-service', 'READ', 'VIN', () => undefined));
  route(VehicleController, 'me', Get('me'), Authenticated());
  route(VehicleController, 'optional', Get('optional'), Authenticated({ optional: true }));
  route(VehicleController, 'any', Get('any/:vin'), RequireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', param('vin')));
  route(VehicleController, 'anymulti', Get('anymulti'), RequireAnyPermission('vehicle-service', ['WRITE', 'READ'], 'VIN', () => ['WVW1', 'WVW2']));
  route(VehicleController, 'shadow', Get('shadow/:vin'), RequirePermission('vehicle-service', 'WRITE', 'VIN', param('vin'), { mode: 'report' }));
  route(VehicleController, 'enforced', Get('enforced/:vin'), RequirePermission('vehicle-service', 'WRITE', 'VIN', param('vin'), { mode: 'enforce' }));
  route(VehicleController, 'options', Options('me'), HttpCode(204));
  return VehicleController;
}

export async function startNestApp(platform: 'express' | 'fastify', authorizer: Authorizer, options: AppOptions = {}): Promise<RunningApp> {
  const handled = { count: 0 };
  const { passErrors: _unused, ...guardOptions } = options;
  const moduleRef = await Test.createTestingModule({
    imports: [IamAuthzModule.forRoot({ authorizer, realm: 'vehicle-service', ...guardOptions })],
    controllers: [vehicleController(handled)],
  }).compile();
  /* eslint-disable @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class */
  const app: INestApplication = platform === 'express'
    ? moduleRef.createNestApplication({ logger: false })
    : moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
  /* eslint-enable @typescript-eslint/no-unsafe-class-instance-assignment */
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { url, handled, close: () => app.close() };
}
