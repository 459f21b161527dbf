/**
 * Several issuers (issue #11 §5): each issuer's keys come from its own JWKS, cached separately; a
 * token's key is looked up only in its own issuer's set; one issuer's JWKS outage does not affect
 * the other's tokens.
 */
import { describe, expect, test } from 'vitest';
import { createAuthorizer } from '../../src/index.js';
import { KEY, KEY2, useIam } from '../helpers/index.js';

/** Two IAMs, each with a key of its own. */
const iamA = useIam();
const iamB = useIam({ keys: [KEY2.jwk] });

function setup() {
  const [a, b] = [iamA, iamB];
  const authz = a.authorizer({ issuer: [a.issuer, b.issuer], jwks: { minRefreshIntervalMs: 0, ttlMs: 1, maxStaleMs: 0 } });
  return { a, b, authz, tokenA: a.token({}, {}, KEY), tokenB: b.token({}, {}, KEY2) };
}

describe('several issuers', () => {
  test('each issuer\'s tokens verify with its own keys, fetched from its own JWKS', async () => {
    const { a, b, authz, tokenA, tokenB } = setup();
    expect((await authz.authenticate(`Bearer ${tokenA}`)).claims.iss).toBe(`${a.url}/authentication/v1`);
    expect((await authz.authenticate(`Bearer ${tokenB}`)).claims.iss).toBe(`${b.url}/authentication/v1`);
    expect(a.requests.every((r) => r.url === '/authentication/v1/.well-known/jwks.json')).toBe(true);
    expect(a.requests.length).toBeGreaterThan(0);
    expect(b.requests.length).toBeGreaterThan(0);
  });

  test('a key is looked up only in the token\'s own issuer\'s set', async () => {
    const { a, b, authz } = setup();
    // Claims issuer B, signed with A's key (kid key-1): B's JWKS has no key-1.
    const crossed = b.token({ jti: 'crossed' }, {}, KEY);
    await expect(authz.authenticate(`Bearer ${crossed}`)).rejects.toMatchObject({ code: 'ERR_TOKEN_INVALID' });
    expect(a.requests).toHaveLength(0);
    expect(b.requests.length).toBeGreaterThan(0);
  });

  test('one issuer\'s JWKS outage leaves the other\'s tokens alone', async () => {
    const { b, authz, tokenA, tokenB } = setup();
    b.down = 500;
    expect((await authz.authenticate(`Bearer ${tokenA}`)).claims.sub).toBe('actor-alice');
    await expect(authz.authenticate(`Bearer ${tokenB}`)).rejects.toMatchObject({ code: 'ERR_JWKS_UNAVAILABLE', status: 503 });
    expect((await authz.authenticate(`Bearer ${tokenA}`)).claims.sub).toBe('actor-alice'); // still, after B's failure
  });

  test('a token of an issuer not accepted: 401 naming the actual and the accepted issuers', async () => {
    const { a, authz } = setup();
    const foreign = a.token({ iss: 'https://other.example/authentication/v1' }, {}, KEY);
    const error = await authz.authenticate(`Bearer ${foreign}`).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_TOKEN_INVALID', detail: 'token issuer is not the expected one' });
    expect((error as Error).message).toMatch(/token issuer "https:\/\/other.example\/authentication\/v1" is not one of /);
  });

  test('jwksUri: one URL per issuer; a string with several issuers, or a map naming another issuer, is a TypeError', async () => {
    const { a, b } = setup();
    const issA = `${a.url}/authentication/v1`;
    const issB = `${b.url}/authentication/v1`;
    const mapped = a.authorizer({ issuer: [issA, issB], jwksUri: { [issB]: `${b.url}/keys` } });
    await mapped.authenticate(b.bearer({}, {}, KEY2));
    expect(b.requests.at(-1)?.url).toBe('/keys');
    expect(() => createAuthorizer({ issuer: [issA, issB], jwksUri: `${a.url}/jwks` })).toThrow(/map each issuer/);
    expect(() => createAuthorizer({ issuer: [issA], jwksUri: { 'https://x': 'https://x/jwks' } })).toThrow(/not an accepted issuer/);
    expect(() => createAuthorizer({ issuer: [] })).toThrow(/"issuer"/);
  });
});
