/**
 * Whatever text a token carries, what the CLI prints of it holds no code point a terminal acts on
 * (C0, DEL, C1, line separators, bidi controls, lone surrogates), and the escaping loses nothing:
 * two different texts never print the same.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { describeToken } from '../../src/cli/decode.js';
import { escapeUnsafe, visible } from '../../src/cli/terminal.js';

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]/u;
/** Any UTF-16 text, lone surrogates included, weighted towards the dangerous code points. */
const text = fc.string({ unit: fc.oneof(fc.constantFrom('\u001b', '\u009b', '\r', '\u007f', '\u202e', '\u2028', '\\', 'u', '0', '\ud800'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) });

function unescape(printed: string): string {
  return printed.replace(/\\(\\|u[0-9a-f]{4})/g, (_m, e: string) => (e === '\\' ? '\\' : String.fromCharCode(Number.parseInt(e.slice(1), 16))));
}

test('visible(): nothing unsafe comes out, and it is undone exactly', () => {
  fc.assert(fc.property(text, (s) => {
    const out = visible(s);
    expect(out).not.toMatch(UNSAFE);
    expect(unescape(out)).toBe(s);
  }));
});

test('escapeUnsafe() of JSON: nothing unsafe comes out, and it still parses to the same value', () => {
  fc.assert(fc.property(text, (s) => {
    const out = escapeUnsafe(JSON.stringify(s));
    expect(out).not.toMatch(UNSAFE);
    expect(JSON.parse(out)).toBe(s);
  }));
});

test('decode output of any header and claims has no unsafe code point, except its own line feeds', () => {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const json = fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.dictionary(text, text, { maxKeys: 2 })), { maxKeys: 4 });
  const ars = fc.array(fc.record({ r: fc.array(text, { maxLength: 2 }), c: fc.array(text, { maxLength: 2 }), n: fc.array(text, { maxLength: 2 }) }), { maxLength: 2 });
  fc.assert(fc.property(json, json, ars, (header, claims, arsClaim) => {
    const out = describeToken(`${part(header)}.${part({ ...claims, ars: arsClaim, exp: 2e9 })}.c2ln`, 1.9e12);
    expect(out).not.toMatch(UNSAFE);
  }));
});
