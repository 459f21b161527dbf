/** Rule "Extraction": `Bearer <token>` only, scheme case-insensitive; anything else is a missing token. */
import { afterAll, describe, expect, test } from 'vitest';
import { TokenInvalidError, TokenMissingError } from '../../src/index.js';
import { extractBearer } from '../../src/token/extract.js';
import { Authorizers, expectRefused, token } from './support.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());

const TOKEN = token();

describe('Bearer extraction', () => {
  test.each(['Bearer', 'BEARER', 'bearer', 'bEaReR'])('scheme %s is accepted (case-insensitive)', async (scheme) => {
    const authz = authorizers.static();
    const identity = await authz.authenticate(`${scheme} ${TOKEN}`);
    expect(identity.token).toBe(TOKEN);
    expect(identity.claims.sub).toBe('actor-alice');
  });

  test.each<[string, string | undefined]>([
    ['undefined', undefined],
    ['an empty string', ''],
    ['"Bearer" alone', 'Bearer'],
    ['"Bearer " with nothing after it', 'Bearer '],
    ['"Bearer" followed by spaces only', 'Bearer    '],
    ['the Basic scheme', `Basic ${Buffer.from('alice:secret').toString('base64')}`],
    ['the Basic scheme carrying a JWT', `Basic ${TOKEN}`],
    ['a made-up scheme', `Token ${TOKEN}`],
    ['the DPoP scheme', `DPoP ${TOKEN}`],
    ['"Bearer" glued to the token', `Bearer${TOKEN}`],
    ['a bare token without scheme', TOKEN],
    ['a scheme that only starts with Bearer', `Bearers ${TOKEN}`],
  ])('%s is ERR_TOKEN_MISSING (401)', async (_label, authorization) => {
    const authz = authorizers.static();
    await expectRefused(authz, TOKEN, 'ERR_TOKEN_MISSING', { authorization });
  });

  test('a header that is not a string (a JS caller passing junk) is ERR_TOKEN_MISSING', async () => {
    const authz = authorizers.static();
    await expect(authz.authenticate(42 as unknown as string)).rejects.toMatchObject({ code: 'ERR_TOKEN_MISSING', status: 401 });
    await expect(authz.authenticate(null as unknown as string)).rejects.toMatchObject({ code: 'ERR_TOKEN_MISSING', status: 401 });
  });

  test('two tokens after the scheme are not a token (ERR_TOKEN_INVALID)', async () => {
    const authz = authorizers.static();
    await expectRefused(authz, TOKEN, 'ERR_TOKEN_INVALID', { authorization: `Bearer ${TOKEN} ${TOKEN}` });
  });

  test('a comma-separated second credential is not accepted', async () => {
    const authz = authorizers.static();
    await expectRefused(authz, TOKEN, 'ERR_TOKEN_INVALID', { authorization: `Bearer ${TOKEN}, Basic abc` });
  });

  test('extractBearer returns exactly the token text', () => {
    expect(extractBearer(`Bearer ${TOKEN}`, 8192)).toBe(TOKEN);
    expect(extractBearer(`BEARER ${TOKEN}`, 8192)).toBe(TOKEN);
  });

  test('extractBearer throws the typed errors, never with the token in the message', () => {
    expect(() => extractBearer(`Basic ${TOKEN}`, 8192)).toThrow(TokenMissingError);
    expect(() => extractBearer('Bearer ', 8192)).toThrow(TokenMissingError);
    let error: unknown;
    try {
      extractBearer(`Basic ${TOKEN}`, 8192);
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).not.toContain(TOKEN.slice(0, 20));
  });

  test('extractBearer refuses a token longer than maxTokenBytes as invalid, before looking at the scheme or content', () => {
    expect(() => extractBearer(`Bearer ${'a'.repeat(101)}`, 100)).toThrow(TokenInvalidError);
    expect(() => extractBearer(`Bearer ${'a'.repeat(100)}`, 100)).not.toThrow();
    expect(() => extractBearer(`Bearer ${'a'.repeat(100_000)}`, 8192)).toThrow(TokenInvalidError);
  });
});
