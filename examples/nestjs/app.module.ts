import { Controller, Get, Module, Param } from '@nestjs/common';
import type { IamState } from 'iam-authz';
import { Iam, IamAuthzModule, RequirePermission } from 'iam-authz/nestjs';

@Controller('vehicles')
export class VehiclesController {
  @Get(':vin')
  @RequirePermission('vehicle-service', 'READ', 'VIN', (req) => req.params.vin)
  read(@Param('vin') vin: string, @Iam() iam: IamState): { vin: string; readBy: string } {
    return { vin, readBy: iam.claims.sub };
  }
}

@Module({
  // A global guard: every route needs a valid token unless marked @Public().
  imports: [IamAuthzModule.forRoot({ baseUrl: process.env.IAM_BASE_URL ?? 'http://localhost:4000' })],
  controllers: [VehiclesController],
})
// eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a decorated class
export class AppModule {}
