// The application, initialised but not listening: main.ts serves it, the tests audit it.
import 'reflect-metadata';
import type { INestApplication, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

export async function createApp(options?: NestApplicationOptions): Promise<INestApplication> {
  const app = await NestFactory.create(AppModule, options);
  // Nest mounts the routes here; auditRoutes reads them afterwards.
  await app.init();
  return app;
}
