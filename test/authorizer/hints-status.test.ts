/** `status().hints`: null without a channel; otherwise the channel's own `connected` (absent: connected). */
import { expect, test } from 'vitest';
import { createAuthorizer, type HintChannel } from '../../src/index.js';

function channel(connected?: boolean): HintChannel {
  const hints: HintChannel = { publish: () => Promise.resolve(), subscribe: () => () => undefined };
  return connected === undefined ? hints : Object.assign(hints, { connected });
}

test.each([
  ['no channel', undefined, null],
  ['a channel without "connected"', channel(), { connected: true }],
  ['a connected channel', channel(true), { connected: true }],
  ['a disconnected channel', channel(false), { connected: false }],
])('%s', async (_name, hints, expected) => {
  const authorizer = createAuthorizer({ baseUrl: 'http://127.0.0.1:9', ...(hints ? { policy: { hints } } : {}) });
  try {
    expect(authorizer.status().hints).toEqual(expected);
  } finally {
    await authorizer.close();
  }
});
