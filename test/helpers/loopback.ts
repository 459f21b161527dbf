/** A real HTTP server on 127.0.0.1 with a swappable handler and a request log. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface Loopback {
  url: string;
  server: Server;
  requests: IncomingMessage[];
  handler: Handler;
  close(): Promise<void>;
}

export async function startLoopback(handler: Handler): Promise<Loopback> {
  const state: Loopback = {
    url: '',
    requests: [],
    handler,
    server: undefined as unknown as Server,
    async close() {
      state.server.closeAllConnections();
      await new Promise<void>((resolve) => state.server.close(() => { resolve(); }));
    },
  };
  state.server = createServer((req, res) => {
    state.requests.push(req);
    void Promise.resolve(state.handler(req, res)).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
