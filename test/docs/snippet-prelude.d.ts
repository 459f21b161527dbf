/**
 * The placeholders a documentation snippet may use without declaring them: the things a reader's own
 * application already has in scope where the snippet would be pasted. test/docs/snippets.test.ts
 * typechecks every ```ts block of README.md and docs/ against the built package with this file as
 * its only ambient addition. Keep it small: a snippet that needs more should declare it itself.
 */
import type { Request, Response } from 'express';
import type { Context } from 'koa';
import type { DevIamConfig } from 'iam-authz/testing';

declare global {
  /** The incoming request of a route handler (Express shape, with the route's `:vin` parameter). */
  const req: Request<{ vin: string }>;
  /** The response of a route handler (Express). */
  const res: Response;
  /** A Koa context. */
  const ctx: Context;
  /** A development-IAM configuration (see the README's config example). */
  const config: DevIamConfig;
  /** How the application obtains its identity-provider token (its own login flow). */
  function getIdpToken(): Promise<string>;
}
