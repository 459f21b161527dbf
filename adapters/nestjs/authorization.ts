/**
 * The `Authorization` value of a Nest request: the header of an HTTP request, and for a socket the
 * one its handshake names. Ambiguity is refused as a missing token, never resolved by picking one.
 */

export type HeaderBag = Record<string, string | string[] | undefined>;

/** The request's one `Authorization` header. */
export function header(headers: HeaderBag | undefined): string | undefined {
  const value = headers?.authorization;
  // Several Authorization headers are ambiguous: refuse them as missing rather than pick one.
  return typeof value === 'string' ? value : undefined;
}

/** What of a gateway's client is read: socket.io's handshake, or what the gateway stored. */
export type WsClient = { handshake?: { headers?: HeaderBag; auth?: unknown }; iamAuthorization?: unknown };

/**
 * A socket's `Authorization` value. socket.io: the handshake's `Authorization` header (`Bearer …`),
 * or `auth: { token }` (the bare token; browsers cannot set headers), which becomes `Bearer token`;
 * both, naming different tokens, are ambiguous and refused as missing, as several headers are; a
 * `token` that is not a string is refused too. Other WebSocket libraries: whatever the gateway
 * stored at `client.iamAuthorization` on connection.
 */
export function wsAuthorization(client: WsClient): string | undefined {
  const fromHeader = header(client.handshake?.headers);
  const auth = client.handshake?.auth;
  const token = typeof auth === 'object' && auth !== null ? (auth as { token?: unknown }).token : undefined;
  if (token !== undefined) {
    if (typeof token !== 'string') return undefined;
    const fromAuth = `Bearer ${token}`;
    return fromHeader === undefined || fromHeader === fromAuth ? fromAuth : undefined;
  }
  return fromHeader ?? (typeof client.iamAuthorization === 'string' ? client.iamAuthorization : undefined);
}

