// GET /vehicles/:vin needs READ on VIN=<vin> in vehicle-service. IAM_BASE_URL: the IAM; PORT: where to listen.
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule);
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000));
console.log(`listening on ${JSON.stringify(app.getHttpServer().address())}`);
