/**
 * The vehicle-service on NestJS 11 (Express platform) with `iam-authz/nestjs`: GET /vehicle/:vin
 * needs READ, PUT needs WRITE on VIN=<vin>; GET /vehicles lists the readable ones from the token.
 *
 * Decorators are applied as functions (what TypeScript's `experimentalDecorators` emits), so this
 * file runs under the repository's plain tsconfig; in an application you write `@Get(…)`,
 * `@RequirePermission(…)`, `@Iam()` and `@Body()` on the methods as usual (README, NestJS section).
 */
import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, NotFoundException, Param, Put, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Authorizer, IamState } from 'iam-authz';
import { Authenticated, Iam, IamAuthzModule, IamHttpException, RequirePermission, type IamRequestView } from 'iam-authz/nestjs';
import { iamErrorAnswer, READABLE_VINS, VehicleStore, type RunningService } from './store.js';

type MethodDecorator = (target: object, key: string, descriptor: PropertyDescriptor) => unknown;
type ParameterDecorator = (target: object, key: string, index: number) => void;

/** Applies method and parameter decorators to `controller.prototype[method]`, as the compiler would. */
function decorate(controller: Type, method: string, methods: MethodDecorator[], parameters: ParameterDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(controller.prototype, method) as PropertyDescriptor;
  parameters.forEach((parameter, index) => { parameter(controller.prototype as object, method, index); });
  for (const apply of [...methods].reverse()) apply(controller.prototype as object, method, descriptor);
}

function vehicleController(authorizer: Authorizer, store: VehicleStore): Type {
  const vin = (view: IamRequestView) => view.params.vin;
  class VehicleController {
    read(id: string) {
      const vehicle = store.get(id);
      if (!vehicle) throw new NotFoundException('no such vehicle');
      return vehicle;
    }
    write(id: string, body: unknown, iam?: IamState) {
      return store.update(id, body, iam?.claims.sub ?? 'unknown');
    }
    async list(iam?: IamState) {
      try {
        return store.list(await authorizer.accessible(iam!, READABLE_VINS));
      } catch (error) {
        const answer = iamErrorAnswer(error);
        // The module's exception filter renders it like every guard refusal (headers included).
        if (answer) throw new IamHttpException(error as never, answer);
        throw error;
      }
    }
  }
  Controller()(VehicleController);
  decorate(VehicleController, 'list', [Get('vehicles'), Authenticated()], [Iam()]);
  decorate(VehicleController, 'read', [Get('vehicle/:vin'), RequirePermission('vehicle-service', 'READ', 'VIN', vin)], [Param('vin')]);
  decorate(VehicleController, 'write', [Put('vehicle/:vin'), HttpCode(200), RequirePermission('vehicle-service', 'WRITE', 'VIN', vin)], [Param('vin'), Body(), Iam()]);
  return VehicleController;
}

/** The vehicle-service as a Nest application, initialised (its routes mounted) but not listening: startNest serves it, the tests audit it. */
export async function createNestApp(authorizer: Authorizer, store = new VehicleStore()): Promise<INestApplication> {
  // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is an empty class its decorator describes
  class VehicleModule {}
  Module({
    // The module closes nothing it was given: the caller closes this authorizer, after the app.
    imports: [IamAuthzModule.forRoot({ authorizer, realm: 'vehicle-service' })],
    controllers: [vehicleController(authorizer, store)],
  })(VehicleModule);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  const app: INestApplication = await NestFactory.create(VehicleModule, { logger: false });
  await app.init();
  return app;
}

export async function startNest(authorizer: Authorizer, port: number, host = '127.0.0.1'): Promise<RunningService> {
  const app = await createNestApp(authorizer);
  await app.listen(port, host);
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return {
    url,
    async close() {
      await app.close();
      await authorizer.close();
    },
  };
}
