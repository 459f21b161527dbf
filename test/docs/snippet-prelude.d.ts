/**
 * The placeholders a documentation snippet may use without declaring them: the things a reader's own
 * application already has in scope where the snippet would be pasted. test/docs/snippets.test.ts
 * typechecks every ```ts block of README.md and docs/ against the built package with this file as
 * its only ambient addition. Keep it small: a snippet that needs more declares or imports it itself
 * (a snippet's own `const app = …` simply shadows the placeholder).
 */
import type { Express, Request, Response } from 'express';
import type { Context } from 'koa';
import type { Authorizer, Identity } from 'iam-authz';
import type { DevIamConfig } from 'iam-authz-dev';

declare global {
  /** The incoming request of a route handler (Express shape, with the route's `:vin` parameter). */
  const req: Request<{ vin: string }>;
  /** The response of a route handler (Express). */
  const res: Response;
  /** A Koa context. */
  const ctx: Context;
  /** An Express application. */
  const app: Express;
  /** The service's authorizer, from `createAuthorizer(…)`. */
  const authorizer: Authorizer;
  /** A verified caller, from `authorizer.authenticate(…)`. */
  const identity: Identity;
  /** A development-IAM configuration (see the README's config example). */
  const config: DevIamConfig;
  /** How the application obtains its identity-provider token (its own login flow). */
  function getIdpToken(): Promise<string>;
}
