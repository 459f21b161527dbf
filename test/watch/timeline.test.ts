/**
 * The timeline behind every watch of an authorizer: items due at whole seconds, one timer. Opening
 * and closing watches again and again (a per-request `signal`) must not grow it: its heap holds a
 * second once, however often a bucket is emptied and filled again.
 */
import { describe, expect, test } from 'vitest';
import { Timeline } from '../../src/watch/timeline.js';
import { Clock, NOW_MS } from '../helpers/clock.js';

describe('Timeline', () => {
  test('adding and deleting at the same seconds a million times keeps one heap entry per second', () => {
    const clock = new Clock();
    const due: string[] = [];
    const timeline = new Timeline<string>(clock.now, (item) => { due.push(item); });
    // Something earlier is pending, so the later seconds are never popped meanwhile.
    timeline.add(NOW_MS + 1_000, 'pending');
    for (let i = 0; i < 1_000_000; i++) {
      const item = `w${i % 3}`;
      const key = timeline.add(NOW_MS + 60_000 + (i % 3) * 1_000, item);
      timeline.delete(key, item);
    }
    expect(timeline.size).toBe(1);
    expect(timeline.heapSize).toBeLessThanOrEqual(4);
    timeline.clear();
    expect(due).toEqual([]);
  });

  test('items come due in order of their second, each once; a deleted one never', async () => {
    const timeline = new Timeline<string>(Date.now, (item) => { due.push(item); });
    const due: string[] = [];
    const now = Date.now();
    timeline.add(now + 1_200, 'b');
    const key = timeline.add(now + 100, 'gone');
    timeline.add(now + 100, 'a');
    timeline.delete(key, 'gone');
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    expect(due).toEqual(['a', 'b']);
    expect(timeline.size).toBe(0);
  });
});
