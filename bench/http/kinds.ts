/** The servers of the HTTP benchmark. A module of its own: importing server.ts would start one. */
export const KINDS = [
  'fastify-bare', 'fastify-noop', 'fastify-ceiling', 'fastify-ceiling-hook', 'fastify-least', 'fastify-iam', 'fastify-iam-nocache', 'fastify-iam-authn', 'fastify-iam-thin', 'fastify-iam-pool', 'fastify-jwt',
  'express-bare', 'express-noop', 'express-ceiling', 'express-ceiling-hook', 'express-least', 'express-iam', 'express-iam-nocache', 'express-oauth2-jwt-bearer', 'express-jwt',
] as const;
export type ServerKind = (typeof KINDS)[number];
