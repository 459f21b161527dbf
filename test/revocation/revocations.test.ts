/**
 * The revocation list alone, on a fake clock: what matches (a `jti`; a `sub` with an earlier `iat`),
 * how long each entry is kept, the bound (past it the list collapses into "every token issued before
 * now", never trimming a revocation away), and what a received message may do — only ever add,
 * whatever it holds (property test over arbitrary values).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { Revocations } from '../../src/revocation/revocations.js';
import { Clock, NOW_SEC } from '../helpers/clock.js';

const claims = (over: { jti?: string; sub?: string; iat?: number } = {}) => ({ jti: 'j1', sub: 'alice', iat: NOW_SEC - 10, ...over });

describe('Revocations', () => {
  test('empty, it refuses nothing', () => {
    const list = new Revocations(new Clock().now, 3600, 100);
    expect(list.size).toBe(0);
    expect(list.refuses(claims())).toBe(false);
  });

  test('a jti: that token only, until retainSec after the revocation', () => {
    const clock = new Clock();
    const list = new Revocations(clock.now, 3600, 100);
    expect(list.add(list.entryOf({ jti: 'j1' }))).toBe(true);
    expect(list.refuses(claims())).toBe(true);
    expect(list.refuses(claims({ jti: 'j2' }))).toBe(false);
    clock.advance(3600_000);
    expect(list.refuses(claims())).toBe(true);
    clock.advance(1_000);
    expect(list.refuses(claims())).toBe(false);
    list.prune();
    expect(list.size).toBe(0);
  });

  test('a sub: its tokens issued before the moment (default now, rounded up), not those issued later', () => {
    const clock = new Clock(NOW_SEC * 1000 + 300);
    const list = new Revocations(clock.now, 3600, 100);
    const entry = list.entryOf({ sub: 'alice' });
    expect(entry).toMatchObject({ sub: 'alice', issuedBefore: NOW_SEC + 1 });
    list.add(entry);
    expect(list.refuses(claims({ iat: NOW_SEC }))).toBe(true); // the same second: refused too
    expect(list.refuses(claims({ iat: NOW_SEC + 1 }))).toBe(false);
    expect(list.refuses(claims({ sub: 'bob', iat: 0 }))).toBe(false);
    // A token without iat counts as issued before any moment.
    expect(list.refuses({ sub: 'alice' })).toBe(true);
    list.add(list.entryOf({ sub: 'alice', issuedBefore: NOW_SEC - 100 }));
    // The wider revocation stays.
    expect(list.refuses(claims({ iat: NOW_SEC - 50 }))).toBe(true);
  });

  test('bad arguments are a TypeError naming what is wrong', () => {
    const list = new Revocations(new Clock().now, 3600, 100);
    for (const bad of [null, 'j1', {}, { jti: '' }, { jti: 1 }, { sub: 'a', jti: 'b' }, { sub: 'a', issuedBefore: -1 }, { sub: 'a', issuedBefore: 1.5 }, { sub: 'x'.repeat(1025) }, { jti: 'a', extra: 1 }]) {
      expect(() => list.entryOf(bad as never)).toThrow(TypeError);
    }
  });

  test('past maxEntries it collapses into one revocation of every token issued up to now: nothing revoked gets in again', () => {
    const clock = new Clock();
    const list = new Revocations(clock.now, 3600, 3);
    for (const jti of ['a', 'b', 'c', 'd']) list.add(list.entryOf({ jti }));
    expect(list.collapsed).toBe(true);
    for (const jti of ['a', 'b', 'c', 'd', 'never-revoked']) expect(list.refuses(claims({ jti }))).toBe(true);
    // A token issued after the collapse is admitted (unless revoked itself).
    expect(list.refuses(claims({ jti: 'fresh', iat: NOW_SEC + 1 }))).toBe(false);
    expect(list.refuses(claims({ jti: 'd', iat: NOW_SEC + 1 }))).toBe(true);
  });

  test('a full list takes a revocation it already holds again (replayed) without collapsing', () => {
    const list = new Revocations(new Clock().now, 3600, 2);
    list.add(list.entryOf({ jti: 'a' }));
    list.add(list.entryOf({ sub: 'bob' }));
    expect(list.add(list.entryOf({ jti: 'a' }))).toBe(true);
    expect(list.add(list.entryOf({ sub: 'bob' }))).toBe(true);
    expect(list.collapsed).toBe(false);
    expect(list.refuses(claims({ jti: 'other', sub: 'alice' }))).toBe(false);
  });

  test('while revocations keep coming, those whose tokens have expired leave within a minute', () => {
    const clock = new Clock();
    const list = new Revocations(clock.now, 60, 1_000);
    for (let i = 0; i < 100; i++) list.add(list.entryOf({ jti: `old-${i}` }));
    expect(list.size).toBe(100);
    clock.advance(61_000);
    list.add(list.entryOf({ jti: 'new' }));
    expect(list.size).toBe(1);
    expect(list.refuses(claims({ jti: 'new' }))).toBe(true);
    expect(list.refuses(claims({ jti: 'old-1' }))).toBe(false);
  });

  test('a received message: checked field by field, its until capped; whatever it is, it never removes a revocation nor throws', () => {
    fc.assert(fc.property(fc.anything(), fc.array(fc.anything(), { maxLength: 5 }), (message, more) => {
      const clock = new Clock();
      const list = new Revocations(clock.now, 3600, 50);
      list.add(list.entryOf({ jti: 'kept' }));
      list.add(list.entryOf({ sub: 'kept-sub' }));
      for (const m of [message, ...more]) list.add(m, true);
      expect(list.refuses(claims({ jti: 'kept' }))).toBe(true);
      expect(list.refuses(claims({ jti: 'x', sub: 'kept-sub' }))).toBe(true);
    }));
    const list = new Revocations(new Clock().now, 3600, 50);
    expect(list.add({ type: 'revocation', jti: 'far', until: Number.MAX_SAFE_INTEGER }, true)).toBe(true);
    expect(list.add({ type: 'revocation', jti: 'x', sub: 'y', until: NOW_SEC + 10 }, true)).toBe(false);
    expect(list.add({ type: 'revocation', sub: 'y', until: NOW_SEC + 10 }, true)).toBe(false); // no issuedBefore
    expect(list.add({ type: 'policy', jti: 'x', until: NOW_SEC + 10 }, true)).toBe(false);
  });
});
