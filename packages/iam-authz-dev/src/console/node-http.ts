/** Mounts the console on a node:http server: turns the IncomingMessage into a ConsoleRequest and writes the answer. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DevIamConsole } from './handler.js';

/** True when `path` belongs to the console (`/console` or below). */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

/** Answers one node:http request whose path {@link isConsolePath} accepts, with `handler`. */
export async function serveConsole(handler: DevIamConsole, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const answer = await handler.handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers, body: req });
  const body = typeof answer.body === 'string' ? Buffer.from(answer.body) : answer.body;
  res.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.byteLength) });
  if (answer.headers.connection === 'close') {
    // A refused body is left unread; the connection ends with the answer.
    res.on('finish', () => { req.destroy(); });
  }
  res.end(req.method === 'HEAD' ? undefined : body);
}
