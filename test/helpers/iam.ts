/**
 * The loopback IAM: one server on 127.0.0.1 that answers as the IAM does — its JWKS and its policy
 * API — with the tests' clock, authorizers over it and tokens it would issue. A test file says
 * `const iam = useIam()`; a test that needs an IAM of its own awaits `startIam()` and closes it.
 *
 * The policy API is at `policyUrl` (`${url}/policy/v1/roles`, what `baseUrl` derives); every other
 * path is the JWKS, so that a `jwksUri` of any shape reaches the keys.
 */
import type { IncomingMessage, Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { SigningKey } from '../../packages/iam-authz-dev/src/sign-jwt.js';
import type { Authorizer, AuthorizerOptions } from '../../src/index.js';
import type { RolePolicy } from '../../src/types.js';
import { Authorizers } from './authorizers.js';
import { Clock, NOW_MS } from './clock.js';
import { KEY, mint } from './fixtures.js';
import { defined } from './hooks.js';
import { json, startLoopback, type Handler, type Loopback } from './loopback.js';
import { appOfRequest, examplePolicy, servePolicy } from './policy-server.js';

/** What the IAM answers; each can be set at any time, and `reset()` puts back what was given at the start. */
export interface IamState {
  /** The policy the API serves, or one per application (the `app` claim of the token it is sent). Default: {@link examplePolicy}(). */
  policy: RolePolicy | ((app: string) => RolePolicy);
  /** The JWKs the JWKS publishes: set it to rotate. Default: `[KEY.jwk]`. */
  keys: readonly object[];
  /** When set, every request is answered with this status and `{ "error": "down" }`. */
  down: number | undefined;
}

/** Which part of the IAM a request is for. */
export type IamPart = 'jwks' | 'policy';

const POLICY_PATH = '/policy/v1/roles';
const partOf = (req: IncomingMessage): IamPart => (new URL(req.url ?? '/', 'http://iam').pathname.endsWith(POLICY_PATH) ? 'policy' : 'jwks');

export class Iam implements IamState, Loopback {
  policy: IamState['policy'];
  keys: IamState['keys'];
  down: IamState['down'];
  /** The clock of the authorizers made by {@link authorizer}: at `NOW_MS` after every `reset()`. */
  readonly clock = new Clock();
  readonly #initial: IamState;
  #loopback: Loopback | undefined;
  readonly #authorizers = new Authorizers();
  /** While a test of `useIam` runs: the authorizers to close after it. */
  #testAuthorizers: Authorizers | undefined;

  constructor(initial: Partial<IamState> = {}) {
    this.#initial = { policy: examplePolicy(), keys: [KEY.jwk], down: undefined, ...initial };
    ({ policy: this.policy, keys: this.keys, down: this.down } = this.#initial);
  }

  get url(): string { return this.#open.url; }
  /** The issuer of the tokens of {@link token}: `${url}/authentication/v1`. */
  get issuer(): string { return `${this.url}/authentication/v1`; }
  /** The JWKS URL that `baseUrl` derives. */
  get jwksUri(): string { return `${this.issuer}/.well-known/jwks.json`; }
  /** The policy API's URL that `baseUrl` derives. */
  get policyUrl(): string { return `${this.url}${POLICY_PATH}`; }
  get server(): Server { return this.#open.server; }
  /** Every request, oldest first; `reset()` empties it. */
  get requests(): IncomingMessage[] { return this.#open.requests; }
  /** The whole answer of the server: replace it to answer as no IAM would; `reset()` restores the IAM's. */
  get handler(): Handler { return this.#open.handler; }
  set handler(handler: Handler) { this.#open.handler = handler; }

  /** The requests for one part of the IAM, oldest first. */
  requestsTo(part: IamPart): IncomingMessage[] {
    return this.requests.filter((req) => partOf(req) === part);
  }

  /**
   * An authorizer over this IAM, closed by the fixture: `baseUrl` this IAM's URL (unless `options`
   * name the `issuer`), `now` the {@link clock}, then `options`.
   */
  authorizer(options: AuthorizerOptions = {}): Authorizer {
    const where = options.issuer === undefined ? { baseUrl: this.url } : {};
    return (this.#testAuthorizers ?? this.#authorizers).create({ ...where, now: this.clock.now, ...options });
  }

  /** A token of the standard claims this IAM issues, then `claims`; signed by `KEY` unless told. */
  token(claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
    return mint(this.url, claims, header, key);
  }

  /** `Bearer ` and {@link token}. */
  bearer(claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: SigningKey = KEY): string {
    return `Bearer ${this.token(claims, header, key)}`;
  }

  async start(): Promise<this> {
    this.#loopback = await startLoopback(this.#answer);
    return this;
  }

  /** Back to the start: the state given, the IAM's handler, the clock at `NOW_MS`, no requests. */
  reset(): void {
    ({ policy: this.policy, keys: this.keys, down: this.down } = this.#initial);
    this.handler = this.#answer;
    this.clock.set(NOW_MS);
    this.requests.length = 0;
  }

  /** Closes every authorizer made by {@link authorizer}, then the server. */
  async close(): Promise<void> {
    await this.#testAuthorizers?.closeAll();
    await this.#authorizers.closeAll();
    await this.#loopback?.close();
  }

  /** Registers the hooks of {@link useIam}. */
  static use(initial?: Partial<IamState>): Iam {
    const iam = new Iam(initial);
    beforeAll(async () => { await iam.start(); });
    beforeEach(() => {
      iam.reset();
      iam.#testAuthorizers = new Authorizers();
    });
    afterEach(async () => {
      await iam.#testAuthorizers?.closeAll();
      iam.#testAuthorizers = undefined;
    });
    afterAll(() => iam.close());
    return iam;
  }

  get #open(): Loopback { return defined(this.#loopback, 'the loopback IAM'); }

  readonly #answer: Handler = (req, res) => {
    if (this.down !== undefined) json(res, this.down, { error: 'down' });
    else if (partOf(req) === 'jwks') json(res, 200, { keys: this.keys });
    else servePolicy(req, res, typeof this.policy === 'function' ? this.policy(appOfRequest(req)) : this.policy);
  };
}

/** A loopback IAM, started; the caller closes it. */
export function startIam(initial?: Partial<IamState>): Promise<Iam> {
  return new Iam(initial).start();
}

/**
 * Registers the hooks of a test file that talks to a loopback IAM: the server is started before
 * the file's tests and closed after them; before every test the IAM is `reset()`; the authorizers
 * a test makes are closed after it, those made outside a test (in `beforeAll`) after the file.
 */
export function useIam(initial?: Partial<IamState>): Iam {
  return Iam.use(initial);
}
