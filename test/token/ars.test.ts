/** Rule "ars normalised to { r, c, n }[] of strings; never throws; no prototype pollution". */
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { normalizeArs } from '../../src/token/ars.js';
import { Authorizers, baseClaims, iamHeader, signRaw, token } from './support.js';

const authorizers = new Authorizers();
afterAll(() => authorizers.closeAll());

/** Fails loudly if anything leaked onto Object.prototype, and cleans up so other tests are not affected. */
function expectNoPollution(): void {
  const probe = {} as Record<string, unknown>;
  const leaked = ['polluted', 'r', 'c', 'n', 'isAdmin'].filter((k) => probe[k] !== undefined);
  for (const k of leaked) Reflect.deleteProperty(Object.prototype, k);
  expect(leaked).toEqual([]);
  expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
}
afterEach(expectNoPollution);

describe('normalizeArs', () => {
  test.each<[string, unknown]>([
    ['undefined (missing claim)', undefined],
    ['null', null],
    ['an object', { r: ['OWNER'] }],
    ['a string', 'OWNER'],
    ['a number', 1],
    ['an empty array', []],
  ])('%s gives []', (_label, value) => {
    expect(normalizeArs(value)).toEqual([]);
  });

  test('entries that are not objects are dropped', () => {
    expect(normalizeArs([null, 1, 'OWNER', true, ['OWNER'], { r: ['DRIVER'] }])).toEqual([{ r: ['DRIVER'], c: [], n: [] }]);
  });

  test('an r, c or n that is not an array contributes nothing for that field', () => {
    expect(normalizeArs([{ r: 'OWNER', c: { 0: 'VIN=1', length: 1 }, n: null }])).toEqual([{ r: [], c: [], n: [] }]);
    expect(normalizeArs([{ r: ['OWNER'], c: 'VIN=1', n: ['node-1'] }])).toEqual([{ r: ['OWNER'], c: [], n: ['node-1'] }]);
  });

  test('non-string items are dropped, strings kept in order', () => {
    expect(normalizeArs([{ r: [1, 'A', null, { k: 'B' }, ['C'], 'D', true], c: ['VIN=1', 2], n: [undefined, 'n-1'] }])).toEqual([
      { r: ['A', 'D'], c: ['VIN=1'], n: ['n-1'] },
    ]);
  });

  test('all three fields are always present', () => {
    const [entry] = normalizeArs([{}]);
    expect(entry).toEqual({ r: [], c: [], n: [] });
    expect(Object.keys(entry!).sort()).toEqual(['c', 'n', 'r']);
  });

  test('r, c and n inherited from a prototype are not read', () => {
    const inherited = Object.create({ r: ['ADMIN'], c: ['VIN=*'], n: ['root'] }) as object;
    expect(normalizeArs([inherited])).toEqual([{ r: [], c: [], n: [] }]);
  });

  test('other members of an entry are not copied', () => {
    const [entry] = normalizeArs([{ r: ['A'], isAdmin: true, __proto__: null }]);
    expect(entry).toEqual({ r: ['A'], c: [], n: [] });
    expect(Object.hasOwn(entry!, 'isAdmin')).toBe(false);
  });

  test('the result and its arrays are frozen and fresh (not the claim arrays)', () => {
    const r = ['A'];
    const result = normalizeArs([{ r }]);
    expect(Object.isFrozen(result[0])).toBe(true);
    expect(Object.isFrozen(result[0]!.r)).toBe(true);
    expect(result[0]!.r).not.toBe(r);
  });

  test('hostile keys parsed from JSON (__proto__, constructor, prototype) pollute nothing', () => {
    const value: unknown = JSON.parse(
      '[{"__proto__":{"polluted":"yes","r":["ADMIN"]},"r":["A"]},' +
        '{"constructor":{"prototype":{"polluted":"yes"}},"c":["VIN=1"]},' +
        '{"r":{"__proto__":["ADMIN"]}},' +
        '{"prototype":{"polluted":"yes"},"n":["x"]}]',
    );
    const result = normalizeArs(value);
    expect(result).toEqual([
      { r: ['A'], c: [], n: [] },
      { r: [], c: ['VIN=1'], n: [] },
      { r: [], c: [], n: [] },
      { r: [], c: [], n: ['x'] },
    ]);
    for (const entry of result) {
      expect(Object.getPrototypeOf(entry)).toBe(Object.prototype);
      expect((entry as unknown as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  test('never throws on any JSON value, and always yields { r, c, n } of strings (property test)', () => {
    const entry = fc.dictionary(fc.constantFrom('r', 'c', 'n', '__proto__', 'constructor', 'x'), fc.oneof(fc.array(fc.jsonValue()), fc.jsonValue()));
    const arb = fc.oneof(fc.jsonValue(), fc.array(fc.oneof(entry, fc.jsonValue())));
    fc.assert(
      fc.property(arb, (value) => {
        // Round-trip through JSON text: exactly what the verifier hands to normalizeArs.
        const parsed: unknown = JSON.parse(JSON.stringify(value));
        const out = normalizeArs(parsed);
        expect(Array.isArray(out)).toBe(true);
        for (const ref of out) {
          expect(Object.keys(ref).sort()).toEqual(['c', 'n', 'r']);
          for (const list of [ref.r, ref.c, ref.n]) {
            expect(Array.isArray(list)).toBe(true);
            for (const item of list) expect(typeof item).toBe('string');
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('ars through authenticate (real signed tokens)', () => {
  test('missing ars gives []', async () => {
    const identity = await authorizers.static().authenticate(`Bearer ${token({ ars: undefined })}`);
    expect(identity.claims.ars).toEqual([]);
  });

  test('a messy ars is normalised', async () => {
    const ars = [{ r: ['OWNER', 3], c: 'VIN=1', n: ['node-1'] }, 'DRIVER', null, { c: ['VIN=2', null] }];
    const identity = await authorizers.static().authenticate(`Bearer ${token({ ars })}`);
    expect(identity.claims.ars).toEqual([
      { r: ['OWNER'], c: [], n: ['node-1'] },
      { r: [], c: ['VIN=2'], n: [] },
    ]);
    expect(Object.isFrozen(identity.claims.ars)).toBe(true);
  });

  test('__proto__ and constructor keys in the payload JSON cause no prototype pollution', async () => {
    const json = JSON.stringify(baseClaims({ ars: [] })).replace(
      '"ars":[]',
      '"ars":[{"__proto__":{"polluted":"yes"},"r":["A"]},{"constructor":{"prototype":{"polluted":"yes"}},"c":["VIN=1"]}],' +
        '"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}}',
    );
    expect(json).toContain('"__proto__":{"polluted"');
    const identity = await authorizers.static().authenticate(`Bearer ${signRaw(JSON.stringify(iamHeader()), json)}`);
    expect(identity.claims.ars).toEqual([
      { r: ['A'], c: [], n: [] },
      { r: [], c: ['VIN=1'], n: [] },
    ]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(identity.claims)).toBe(Object.prototype);
    expect((identity.claims as Record<string, unknown>).isAdmin).toBeUndefined();
    expect((identity.claims as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('__proto__ in the header JSON pollutes nothing and smuggles no crit/alg', async () => {
    const header = '{"alg":"RS256","kid":"key-1","cty":"t1","__proto__":{"polluted":"yes","crit":["x"],"alg":"none"}}';
    const identity = await authorizers.static().authenticate(`Bearer ${signRaw(header, JSON.stringify(baseClaims()))}`);
    expect(identity.header.alg).toBe('RS256');
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(identity.header)).toBe(Object.prototype);
  });
});
