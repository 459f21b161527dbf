/**
 * `@RequirePermission` on GraphQL field resolvers (`@ResolveField`, @nestjs/apollo over real HTTP):
 * Nest runs guards on field resolvers only with `fieldResolverEnhancers: ['guards']`, so without it
 * the application refuses to start (naming the resolver and the fix); with it, the field is enforced.
 */
import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { type INestApplication } from '@nestjs/common';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import { Args, Field, GraphQLModule, ObjectType, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDevIam, type DevIam } from 'iam-authz-dev';
import { IamAuthzModule, Public, RequirePermission, type IamRequestView } from '../../../adapters/nestjs/index.js';

const config = fileURLToPath(new URL('../../../examples/vehicle-service/iam.json', import.meta.url));
let iam: DevIam;
let alice: string;

@ObjectType()
class Car {
  @Field(() => String) vin!: string;
}

/** The parent object of a field resolver is the first resolver argument. */
const parentVin = (view: IamRequestView) => view.context.getArgs<[Car]>()[0].vin;

@Resolver(() => Car)
class CarResolver {
  @Query(() => Car)
  @Public()
  car(@Args('vin', { type: () => String }) vin: string): Car {
    return Object.assign(new Car(), { vin });
  }

  @ResolveField('secret', () => String, { nullable: true })
  @RequirePermission('vehicle-service', 'READ', 'VIN', parentVin)
  secretOf(@Parent() car: Car): string {
    return `secret-of-${car.vin}`;
  }
}

@ObjectType()
class Boat {
  @Field(() => String) vin!: string;
}

// The class-level requirement reaches the field resolver too.
@Resolver(() => Boat)
@RequirePermission('vehicle-service', 'READ', 'VIN', parentVin)
class BoatResolver {
  @Query(() => Boat)
  @Public()
  boat(): Boat {
    return Object.assign(new Boat(), { vin: 'WVW1' });
  }

  @ResolveField(() => String, { nullable: true })
  hull(@Parent() boat: Boat): string {
    return `hull-of-${boat.vin}`;
  }
}

beforeAll(async () => {
  iam = await startDevIam({ config, console: false });
  alice = iam.mintToken({ actor: 'actor-alice', tenantId: 'tenant-1' });
});
afterAll(async () => {
  await iam.close();
});

async function create(resolver: unknown, graphql: Partial<ApolloDriverConfig>): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      IamAuthzModule.forRoot({ baseUrl: iam.baseUrl }),
      GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true, context: ({ req }: { req: unknown }) => ({ req }), ...graphql }),
    ],
    providers: [resolver as never],
  }).compile();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment -- Nest types its plain options object as a class
  return moduleRef.createNestApplication({ logger: false });
}

/** Starts the app, expecting a refusal; returns its message (and closes whatever did start). */
async function refusal(resolver: unknown, graphql: Partial<ApolloDriverConfig>): Promise<string> {
  const app = await create(resolver, graphql);
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    return (error as Error).message;
  } finally {
    await app.close().catch(() => undefined);
  }
  throw new Error('the application started');
}

describe.each([
  ['no fieldResolverEnhancers', {}],
  ['fieldResolverEnhancers without guards', { fieldResolverEnhancers: ['interceptors', 'filters'] }],
] as const)('%s', (_name, graphql) => {
  test('a decorated field resolver: the application refuses to start, naming it and the fix', async () => {
    const message = await refusal(CarResolver, graphql as Partial<ApolloDriverConfig>);
    expect(message).toMatch(/CarResolver\.secretOf/);
    expect(message).toMatch(/"secret"/);
    expect(message).toContain(`fieldResolverEnhancers: ['guards']`);
  });

  test('a field resolver under a class-level requirement: refused as well', async () => {
    const message = await refusal(BoatResolver, graphql as Partial<ApolloDriverConfig>);
    expect(message).toMatch(/BoatResolver\.hull/);
    expect(message).toContain(`fieldResolverEnhancers: ['guards']`);
  });
});

describe("fieldResolverEnhancers: ['guards']", () => {
  let app: INestApplication;
  let url: string;
  beforeAll(async () => {
    app = await create(CarResolver, { fieldResolverEnhancers: ['guards'] });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/graphql`;
  });
  afterAll(async () => {
    await app.close();
  });

  const query = async (vin: string, token?: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query: `{ car(vin: "${vin}") { vin secret } }` }),
    });
    return res.json() as Promise<{ data: { car: { vin: string; secret: string | null } }; errors?: { extensions: { status: number; code: string } }[] }>;
  };

  test('the application starts; a permitted caller sees the field', async () => {
    expect(await query('WVW1', alice)).toEqual({ data: { car: { vin: 'WVW1', secret: 'secret-of-WVW1' } } });
  });

  test('anonymous and unpermitted callers never see its value', async () => {
    const anonymous = await query('WVW1');
    expect(anonymous.data.car).toEqual({ vin: 'WVW1', secret: null });
    expect(anonymous.errors).toMatchObject([{ extensions: { status: 401, code: 'ERR_TOKEN_MISSING' } }]);
    const denied = await query('WVW2', alice);
    expect(denied.data.car).toEqual({ vin: 'WVW2', secret: null });
    expect(denied.errors).toMatchObject([{ extensions: { status: 403, code: 'ERR_PERMISSION_DENIED' } }]);
    expect(JSON.stringify([anonymous, denied])).not.toContain('secret-of');
  });
});
