/**
 * The tests' helpers, one module each, re-exported here:
 *
 * - clock.ts: the tests' "now" (`NOW_MS`, `NOW_SEC`) and the hand-driven `Clock`;
 * - tokens.ts: the standard claim set (`claims`), the IAM header (`signClaims`) and `STATIC_KEY`;
 * - fixtures.ts: the generated keys `KEY` and `KEY2`, and `mint`;
 * - iam.ts: the loopback IAM (`useIam`, `startIam`) — its JWKS and policy API on one server, with
 *   authorizers over it on the tests' clock and its tokens: what any test that needs an IAM uses;
 * - policy-server.ts: a policy API alone and the spec's example policy, for the key-free tests;
 * - loopback.ts, authorizers.ts, errors.ts, hooks.ts, leaks.ts: servers, cleanup and assertions.
 *
 * Importing this module runs fixtures.ts, which generates two RSA keys. A file that must not (the
 * policy and engine tests, the token client's) imports the key-free modules directly: clock.ts,
 * tokens.ts, policy-server.ts and the rest, everything but fixtures.ts and iam.ts.
 */
export * from './authorizers.js';
export * from './clock.js';
export * from './errors.js';
export * from './fixtures.js';
export * from './hooks.js';
export * from './iam.js';
export * from './leaks.js';
export * from './loopback.js';
export * from './policy-server.js';
export * from './tokens.js';
