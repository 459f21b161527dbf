/**
 * The platform-`fetch` transport (Cloudflare Workers). Redirects are returned, not followed
 * (`redirect: 'manual'`), so the 3xx check in `upstream.ts` refuses them like on the undici path.
 * The `dispatcher` option has no meaning here.
 */
import type { RawAnswer, SendOptions, Transport } from './transport.js';

export const fetchTransport: Transport = {
  name: 'fetch',
  async send(url: string, options: SendOptions, signal: AbortSignal): Promise<RawAnswer> {
    const res = await fetch(url, {
      method: options.method,
      headers: options.headers,
      ...(options.body === undefined ? {} : { body: options.body }),
      redirect: 'manual',
      signal,
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => { headers[name] = value; });
    const stream = res.body;
    return {
      statusCode: res.status,
      headers,
      body: stream ? chunksOf(stream) : emptyBody(),
      discard() {
        // A body never read must be cancelled, or workerd (and undici's fetch) keeps the
        // connection busy until it is collected.
        if (stream && !stream.locked) stream.cancel().catch(() => undefined);
      },
    };
  },
};

/** The chunks of `stream`; leaving early (an oversized body) cancels the stream. */
async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!done) reader.cancel().catch(() => undefined);
  }
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
