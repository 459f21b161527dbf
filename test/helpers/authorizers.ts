/** Authorizers that a test file creates and closes together. */
import { createAuthorizer, type Authorizer, type AuthorizerOptions } from '../../src/index.js';

/** Creates authorizers and closes them all at once (after a test or a file). */
export class Authorizers {
  readonly #open: Authorizer[] = [];

  create(options: AuthorizerOptions): Authorizer {
    const authz = createAuthorizer(options);
    this.#open.push(authz);
    return authz;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.#open.splice(0).map((a) => a.close()));
  }
}
