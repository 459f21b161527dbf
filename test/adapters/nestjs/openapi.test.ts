/**
 * `annotateOpenApi` on what `@nestjs/swagger` generates for a Nest application (decorator syntax;
 * see tsconfig.json here), annotated between `createDocument` and `SwaggerModule.setup`, as the
 * docs show. The audit is the one every framework's `auditRoutes` must give of this application
 * (test/adapters/audit-expected.ts); the controllers here declare the same routes.
 */
import 'reflect-metadata';
import { Controller, Get, Module, Param, Put } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect, test } from 'vitest';
import { annotateOpenApi } from '../../../src/adapter/index.js';
import { EXPECTED_AUDIT, SERVICE } from '../audit-expected.js';

@Controller('vehicle')
class VehicleController {
  @Get(':vin')
  read(@Param('vin') vin: string) {
    return { vin };
  }

  @Put(':vin')
  write(@Param('vin') vin: string) {
    return { vin };
  }
}

@Controller('fleet')
class FleetController {
  @Get('summary')
  summary() {
    return {};
  }

  @Get('vehicles/:vin')
  vehicle(@Param('vin') vin: string) {
    return { vin };
  }
}

@Controller()
class MiscController {
  @Get('health')
  health() {
    return { ok: true };
  }

  @Get('me')
  me() {
    return {};
  }
}

@Module({ controllers: [VehicleController, FleetController, MiscController] })
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is an empty decorated class
class AppModule {}

test.each(['3.0.0', '3.1.0'])('@nestjs/swagger %s: the generated document is annotated and validates', async (openapi) => {
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  try {
    const config = new DocumentBuilder().setTitle('vehicle-service').setVersion('1.0.0').setOpenAPIVersion(openapi).build();
    const doc = annotateOpenApi(SwaggerModule.createDocument(app, config), EXPECTED_AUDIT) as unknown as Record<string, any>;
    expect(doc.openapi).toBe(openapi);
    const write = doc.paths['/vehicle/{vin}'].put;
    expect(write.operationId).toBe('VehicleController_write');
    expect(write.security).toStrictEqual([{ iamBearer: [] }]);
    expect(write['x-iam-permissions']).toStrictEqual([{ service: SERVICE, permission: 'WRITE', resourceType: 'VIN' }]);
    expect(Object.keys(write.responses)).toStrictEqual(['200', '401', '403', '503']);
    expect(doc.paths['/me'].get.security).toStrictEqual([{ iamBearer: [] }]);
    expect(doc.paths['/health'].get.security).toBeUndefined();
    // A route Nest does not know of (the audit's /admin/export, /depots/{depotId}) is added.
    expect(doc.paths['/depots/{depotId}'].get.parameters).toStrictEqual([{ name: 'depotId', in: 'path', required: true, schema: { type: 'string' } }]);
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  } finally {
    await app.close();
  }
});
