/** Type tests: each adapter's request augmentation is visible to route handlers. */
import type { Request } from 'express';
import type { Context } from 'koa';
import type { FastifyRequest, FastifyInstance } from 'fastify';
import { expectTypeOf, test } from 'vitest';
import type { Decision, IamClaims, IamState } from '../../src/index.js';
import type { FastifyAuthz } from '../../adapters/fastify/index.js';
import '../../adapters/express/index.js';
import '../../adapters/koa/index.js';

test('express: req.iam', () => {
  expectTypeOf<Request['iam']>().toEqualTypeOf<IamState | undefined>();
  expectTypeOf<NonNullable<Request['iam']>['claims']>().toEqualTypeOf<IamClaims>();
  expectTypeOf<NonNullable<Request['iam']>['decision']>().toEqualTypeOf<Decision | undefined>();
});

test('koa: ctx.state.iam', () => {
  expectTypeOf<Context['state']['iam']>().toEqualTypeOf<IamState | undefined>();
});

test('fastify: request.iam and app.iamAuthz', () => {
  expectTypeOf<FastifyRequest['iam']>().toEqualTypeOf<IamState | null>();
  expectTypeOf<FastifyInstance['iamAuthz']>().toEqualTypeOf<FastifyAuthz>();
  expectTypeOf<IamClaims['app']>().toEqualTypeOf<string>();
});
