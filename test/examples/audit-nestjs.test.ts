/**
 * The NestJS example audits itself: every route of examples/nestjs/ with what guards it. A change
 * to a route or its guard changes this snapshot, so it shows in review.
 */
import type { INestApplication, NestApplicationOptions } from '@nestjs/common';
import { auditRoutes } from 'iam-authz/nestjs';
import { expect, test } from 'vitest';

// Imported by a path tsc does not follow: the example is written with decorators, which only its
// own tsconfig.json (examples/nestjs/) enables; vitest compiles it with that one.
const example = '../../examples/nestjs/app.js';
const { createApp } = await import(example) as { createApp(options?: NestApplicationOptions): Promise<INestApplication> };

test('examples/nestjs: every route guarded, none with an unchecked object', async () => {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  const app = await createApp({ logger: false });
  try {
    expect(auditRoutes(app, { throwOn: ['unguarded', 'unscoped-parameter'] })).toMatchInlineSnapshot(`
      {
        "findings": [],
        "routes": [
          {
            "access": "permission",
            "method": "GET",
            "path": "/vehicles/{vin}",
            "permissions": [
              {
                "permission": "READ",
                "resourceType": "VIN",
                "service": "vehicle-service",
              },
            ],
          },
        ],
      }
    `);
  } finally {
    await app.close();
  }
});
