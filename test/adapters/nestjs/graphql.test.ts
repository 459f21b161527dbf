/**
 * `IamGuard` on GraphQL resolvers (@nestjs/graphql with Apollo, code first) over real HTTP against
 * the development IAM: the token from the HTTP request in the GraphQL context, the resolver's
 * arguments available to `resolve`, refusals as GraphQL errors whose `extensions` are the other
 * adapters' problem body (`code`, `status`).
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { type INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, Field, GraphQLModule, ObjectType, Query, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { IamState } from '../../../src/index.js';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { Iam, IamAuthzModule, Public, RequirePermission } from '../../../adapters/nestjs/index.js';

const config = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let app: INestApplication;
let url: string;
let alice: string;

@ObjectType()
class Vehicle {
  @Field(() => String) vin!: string;
  @Field(() => String) caller!: string;
}

@Resolver(() => Vehicle)
class VehicleResolver {
  @Query(() => Vehicle)
  @RequirePermission('vehicle-service', 'READ', 'VIN', (view) => view.args.vin as string | undefined)
  vehicle(@Args('vin', { type: () => String }) vin: string, @Iam() state: IamState): Vehicle {
    return Object.assign(new Vehicle(), { vin, caller: state.claims.sub });
  }

  @Query(() => String)
  @Public()
  health(): string {
    return 'ok';
  }
}

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
  const moduleRef = await Test.createTestingModule({
    imports: [
      IamAuthzModule.forRoot({ baseUrl: iam.baseUrl, realm: 'vehicles' }),
      GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, context: ({ req }: { req: unknown }) => ({ req }) }),
    ],
    providers: [VehicleResolver],
  }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
});
afterAll(async () => {
  await app.close();
  await iam.close();
});

const query = (q: string, token?: string) => fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify({ query: q }),
});

test('a granted query sees @Iam(); the resolver reads the arguments', async () => {
  const res = await query('{ vehicle(vin: "WVW1") { vin caller } }', alice);
  expect([res.status, await res.json()]).toEqual([200, { data: { vehicle: { vin: 'WVW1', caller: 'actor-alice' } } }]);
});

test('refusals carry the code, status and challenge of the other adapters', async () => {
  const denied = await query('{ vehicle(vin: "WVW2") { vin } }', alice);
  // A field error: GraphQL over HTTP answers 200 with errors[]; the extensions are the problem body.
  expect(denied.status).toBe(200);
  expect(await denied.json()).toEqual({
    data: null,
    errors: [{
      message: 'the caller lacks the permission this request needs', locations: [{ line: 1, column: 3 }], path: ['vehicle'],
      extensions: { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'the caller lacks the permission this request needs', code: 'ERR_PERMISSION_DENIED' },
    }],
  });
  const missing = await query('{ vehicle(vin: "WVW1") { vin } }');
  expect(await missing.json()).toMatchObject({ data: null, errors: [{ extensions: { status: 401, code: 'ERR_TOKEN_MISSING' } }] });
  const forged = await query('{ vehicle(vin: "WVW1") { vin } }', `${alice.slice(0, -4)}AAAA`);
  const text = await forged.text();
  expect(text).toContain('ERR_TOKEN_INVALID');
  expect(text).not.toContain(alice.split('.')[2]!.slice(0, 20));
  expect(await (await query('{ health }')).json()).toEqual({ data: { health: 'ok' } });
});
