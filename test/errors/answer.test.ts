/**
 * An error renders from itself: `headers`, `problemDetails` and `getResponse()` read the error
 * alone — the defaults, or the answer options of the guard that rejected with it. Rendering changes
 * nothing, and an error two adapters reject with (one outage, every waiting request rejected with
 * the same error) leaves each adapter carrying its own answer.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { JwksUnavailableError, TokenMissingError, type Authorizer } from '../../src/index.js';
import { createGuards } from '../../src/adapter/index.js';
import { useIam } from '../helpers/index.js';

const iam = useIam();
let authz: Authorizer;

beforeAll(() => { authz = iam.authorizer(); });

/** `authz`, whose `authenticate` rejects every request with `error` (the same instance each time). */
function rejectingWith(error: Error): Authorizer {
  return { ...authz, authenticate: () => Promise.reject(error) };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('the guard let the request through');
}

describe('an error renders from itself', () => {
  test('an error no guard rejected with has the default answer', async () => {
    const error = new TokenMissingError();
    expect(error.headers).toStrictEqual({ 'www-authenticate': 'Bearer realm="iam"' });
    expect(error.problemDetails).toMatchObject({ status: 401, code: 'ERR_TOKEN_MISSING' });
    const response = error.getResponse();
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="iam"');
    expect(await response.json()).toStrictEqual(error.problemDetails);
    expect(Object.keys(error)).not.toContain('answerOptions'); // nothing enumerable added, ever
  });

  test('a guard rejects with an error carrying its adapter\'s answer; rendering it elsewhere changes nothing', async () => {
    const guards = createGuards(authz, { realm: 'vehicles', retryAfterSec: 7 });
    const refused = await rejection(guards.authenticate()(undefined, {}));
    expect(refused).toBeInstanceOf(TokenMissingError);
    expect((refused as TokenMissingError).headers).toStrictEqual({ 'www-authenticate': 'Bearer realm="vehicles"' });
    expect((refused as TokenMissingError).getResponse().headers.get('www-authenticate')).toBe('Bearer realm="vehicles"');
    expect(JSON.parse(JSON.stringify(refused))).toStrictEqual(JSON.parse(JSON.stringify(new TokenMissingError())));

    const caught = new TokenMissingError(); // e.g. from authorizer.authenticate, rendered by the adapter
    expect(guards.errorResponse(caught).headers).toStrictEqual({ 'www-authenticate': 'Bearer realm="vehicles"' });
    expect(caught.headers).toStrictEqual({ 'www-authenticate': 'Bearer realm="iam"' });
  });

  test('one error rejected through two adapters: each hands on an error with its own answer', async () => {
    const outage = new JwksUnavailableError('JWKS at http://iam.test/jwks answered 503', { cause: new Error('upstream'), misconfigured: false });
    const shared = rejectingWith(outage);
    const first = createGuards(shared, { realm: 'first', retryAfterSec: 7 }).requirePermission('vehicle-service', 'READ', 'VIN', () => 'WVW1');
    const second = createGuards(shared, { realm: 'second', retryAfterSec: 9 }).requirePermission('vehicle-service', 'READ', 'VIN', () => 'WVW1');

    const [a, b, againA] = await Promise.all([rejection(first('Bearer x', {})), rejection(second('Bearer x', {})), rejection(first('Bearer x', {}))]);
    expect((a as JwksUnavailableError).headers).toStrictEqual({ 'retry-after': '7' });
    expect((b as JwksUnavailableError).headers).toStrictEqual({ 'retry-after': '9' });
    expect(againA).toBe(a); // the same adapter: nothing copied
    expect((a as JwksUnavailableError).headers).toStrictEqual({ 'retry-after': '7' }); // the second adapter changed nothing

    // The second adapter's error is the same error in all but its answer.
    expect(b).not.toBe(outage);
    expect(b).toBeInstanceOf(JwksUnavailableError);
    for (const key of ['name', 'message', 'code', 'status', 'detail', 'misconfigured', 'cause', 'stack'] as const) {
      expect((b as JwksUnavailableError)[key], key).toBe(outage[key]);
    }
    expect(Object.keys(b as object).sort()).toStrictEqual(Object.keys(outage).sort());
  });
});
