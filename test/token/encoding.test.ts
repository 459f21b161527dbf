/**
 * Rule "the token must match ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ and be canonical
 * base64url": one token has one spelling. Every variant below decodes (with Node's lenient
 * decoder) to the same bytes as a token the verifier accepts, and is signed over its own exact
 * text, so the only thing that can refuse it is the strict-encoding rule.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { TokenInvalidError } from '../../src/index.js';
import { parseCompact } from '../../src/token/compact.js';
import { KEY } from '../helpers/index.js';
import { Authorizers, baseClaims, expectAccepted, expectRefused, iamHeader, rsaSign, segment, token, withSegment } from './support.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The same segment with the unused low bits of its last character set: decodes to the same bytes. */
function sloppyLastChar(seg: string): string {
  const last = B64URL.indexOf(seg.at(-1)!);
  const slack = seg.length % 4 === 2 ? 0b1111 : seg.length % 4 === 3 ? 0b11 : 0;
  if (slack === 0) throw new Error('segment has no unused bits');
  return seg.slice(0, -1) + B64URL[last ^ 1]!;
}

/** A base64url text of JSON `value`, with spaces appended until its byte length is `mod` (mod 3). */
function encodedWithLength(value: unknown, mod: 0 | 1 | 2): string {
  let text = JSON.stringify(value);
  while (Buffer.byteLength(text) % 3 !== mod) text += ' ';
  return Buffer.from(text).toString('base64url');
}

/** Signs the exact text `h.p` with KEY. */
function signText(h: string, p: string): string {
  return `${h}.${p}.${rsaSign(`${h}.${p}`, KEY.privateKey)}`;
}

/** A genuine token whose signature contains both `-` and `_`. */
function tokenWithDashAndUnderscore(): string {
  for (let i = 0; i < 500; i++) {
    const t = token({ jti: `jti-${i}` });
    const sig = segment(t, 2);
    if (sig.includes('-') && sig.includes('_')) return t;
  }
  throw new Error('no such token');
}

describe('non-canonical base64url is refused even when correctly signed', () => {
  test('control: the canonical forms used below are accepted', async () => {
    const authz = authorizers.static();
    await expectAccepted(authz, signText(encodedWithLength(iamHeader(), 1), encodedWithLength(baseClaims(), 1)));
    await expectAccepted(authz, token());
  });

  test('the signature\'s last character changed so that it decodes to the same bytes', async () => {
    const authz = authorizers.static();
    const genuine = token();
    const sig = segment(genuine, 2);
    const variant = sloppyLastChar(sig);
    expect(variant).not.toBe(sig);
    expect(Buffer.from(variant, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    await expectRefused(authz, withSegment(genuine, 2, variant), 'ERR_TOKEN_INVALID');
  });

  test.each([1, 2] as const)('the payload\'s last character changed (length mod 3 = %i), re-signed over that text', async (mod) => {
    const authz = authorizers.static();
    const h = Buffer.from(JSON.stringify(iamHeader())).toString('base64url');
    const p = encodedWithLength(baseClaims(), mod);
    const variant = sloppyLastChar(p);
    expect(Buffer.from(variant, 'base64url')).toEqual(Buffer.from(p, 'base64url'));
    await expectAccepted(authz, signText(h, p));
    await expectRefused(authz, signText(h, variant), 'ERR_TOKEN_INVALID');
  });

  test('the header\'s last character changed, re-signed over that text', async () => {
    const authz = authorizers.static();
    const h = encodedWithLength(iamHeader(), 1);
    const p = Buffer.from(JSON.stringify(baseClaims())).toString('base64url');
    await expectRefused(authz, signText(sloppyLastChar(h), p), 'ERR_TOKEN_INVALID');
  });

  test('a stray extra character after a whole base64 group (ignored by lenient decoders), re-signed over that text', async () => {
    const authz = authorizers.static();
    const h = Buffer.from(JSON.stringify(iamHeader())).toString('base64url');
    const p = encodedWithLength(baseClaims(), 0);
    expect(p.length % 4).toBe(0);
    expect(Buffer.from(`${p}A`, 'base64url')).toEqual(Buffer.from(p, 'base64url'));
    await expectAccepted(authz, signText(h, p));
    await expectRefused(authz, signText(h, `${p}A`), 'ERR_TOKEN_INVALID');
  });

  test('"=" padding on the signature', async () => {
    const authz = authorizers.static();
    const genuine = token();
    await expectRefused(authz, `${genuine}==`, 'ERR_TOKEN_INVALID');
    await expectRefused(authz, `${genuine}=`, 'ERR_TOKEN_INVALID');
  });

  test('"=" padding on the payload and header, re-signed over that text', async () => {
    const authz = authorizers.static();
    const h = Buffer.from(JSON.stringify(iamHeader())).toString('base64url');
    const p1 = encodedWithLength(baseClaims(), 1); // needs "=="
    const p2 = encodedWithLength(baseClaims(), 2); // needs "="
    await expectRefused(authz, signText(h, `${p1}==`), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, signText(h, `${p2}=`), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, signText(`${encodedWithLength(iamHeader(), 2)}=`, p1), 'ERR_TOKEN_INVALID');
  });

  test('"+" and "/" (standard base64) instead of "-" and "_" in the signature', async () => {
    const authz = authorizers.static();
    const genuine = tokenWithDashAndUnderscore();
    await expectAccepted(authz, genuine);
    const sig = segment(genuine, 2);
    const std = sig.replaceAll('-', '+').replaceAll('_', '/');
    expect(Buffer.from(std, 'base64url')).toEqual(Buffer.from(sig, 'base64url'));
    await expectRefused(authz, withSegment(genuine, 2, std), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, withSegment(genuine, 2, sig.replace('-', '+')), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, withSegment(genuine, 2, sig.replace('_', '/')), 'ERR_TOKEN_INVALID');
  });

  test('"+" and "/" in the payload, re-signed over that text', async () => {
    const authz = authorizers.static();
    const h = Buffer.from(JSON.stringify(iamHeader())).toString('base64url');
    // "???" encodes to "Pz8_" and ">>>" to "Pj4-" when 3-aligned; try alignments until both appear.
    let p = '';
    for (let i = 0; i < 3 && !(p.includes('-') && p.includes('_')); i++) {
      p = Buffer.from(JSON.stringify(baseClaims({ note: `${'x'.repeat(i)}??????>>>>>>` }))).toString('base64url');
    }
    expect(p).toMatch(/-/);
    expect(p).toMatch(/_/);
    await expectAccepted(authz, signText(h, p));
    await expectRefused(authz, signText(h, p.replaceAll('-', '+').replaceAll('_', '/')), 'ERR_TOKEN_INVALID');
  });

  test.each([
    ['a space', ' '],
    ['a newline', '\n'],
    ['a tab', '\t'],
    ['CRLF', '\r\n'],
  ])('%s inside the signature', async (_label, ws) => {
    const authz = authorizers.static();
    const genuine = token();
    const sig = segment(genuine, 2);
    await expectRefused(authz, withSegment(genuine, 2, `${sig.slice(0, 100)}${ws}${sig.slice(100)}`), 'ERR_TOKEN_INVALID');
  });

  test('whitespace inside the payload, re-signed over that text', async () => {
    const authz = authorizers.static();
    const h = Buffer.from(JSON.stringify(iamHeader())).toString('base64url');
    const p = Buffer.from(JSON.stringify(baseClaims())).toString('base64url');
    await expectRefused(authz, signText(h, `${p.slice(0, 20)} ${p.slice(20)}`), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, signText(h, `${p.slice(0, 20)}\n${p.slice(20)}`), 'ERR_TOKEN_INVALID');
  });

  test('whitespace around the dots', async () => {
    const authz = authorizers.static();
    const genuine = token();
    await expectRefused(authz, genuine.replace('.', ' .'), 'ERR_TOKEN_INVALID');
    await expectRefused(authz, genuine.replace('.', '. '), 'ERR_TOKEN_INVALID');
  });
});

describe('parseCompact', () => {
  test('returns the decoded parts and the exact signing input of a canonical token', () => {
    const t = token();
    const parts = parseCompact(t);
    expect(parts.header).toEqual(iamHeader());
    expect(parts.payload).toEqual(baseClaims());
    expect(parts.signingInput.toString('latin1')).toBe(t.slice(0, t.lastIndexOf('.')));
    expect(parts.signature).toEqual(Buffer.from(segment(t, 2), 'base64url'));
  });

  test.each([
    ['sloppy last char', (t: string) => withSegment(t, 2, sloppyLastChar(segment(t, 2))), /canonical/],
    ['padding', (t: string) => `${t}==`, /compact/],
    ['standard alphabet', (t: string) => withSegment(t, 2, `+/${segment(t, 2).slice(2)}`), /compact/],
    ['whitespace', (t: string) => t.replace('.', '\n.'), /compact/],
    ['empty segment', (t: string) => t.slice(0, t.lastIndexOf('.') + 1), /compact/],
    ['trailing newline', (t: string) => `${t}\n`, /compact/],
  ])('refuses %s with TokenInvalidError', (_label, mutate, reason) => {
    expect(() => parseCompact(mutate(token()))).toThrow(TokenInvalidError);
    expect(() => parseCompact(mutate(token()))).toThrow(reason);
  });
});
