/**
 * Which `Host` values the development IAM answers, on every endpoint (token, IdP, JWKS, policy,
 * console). A web page can make a browser send requests to the IAM under a DNS name it controls
 * (DNS rebinding: `evil.example` resolves to 127.0.0.1 after the page loaded), and then read the
 * answers as same-origin — minted tokens included. Such a request carries the page's own name in
 * `Host`, so answering only to the names of where the IAM listens defeats it.
 */
import { isIP } from 'node:net';

/** `localhost`, `127.0.0.0/8` or `::1`: reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(?:\.\d{1,3}){3}$/.test(h) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(h);
}

/**
 * The `Host` values (lower case) always answered: the listening address and the loopback names
 * of its port (browsers pin `localhost` to loopback, so no page can rebind it).
 */
export function allowedHosts(baseUrl: string): ReadonlySet<string> {
  const url = new URL(baseUrl);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  const hosts = [url.host, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`];
  // Browsers leave the default port out of Host.
  if (url.port === '') hosts.push(url.hostname, 'localhost', '127.0.0.1', '[::1]');
  return new Set(hosts);
}

/**
 * True when a request with this `Host` may be answered by the IAM listening at `baseUrl`.
 *
 * Bound to loopback: only {@link allowedHosts}. Bound beyond loopback (e.g. `0.0.0.0`, so other
 * machines or containers can reach it): also any IP literal with the IAM's port, since those
 * clients name the host by its address. A rebinding page can never produce an IP literal — the
 * browser sends the name in the page's URL — so DNS names other than `localhost` stay refused.
 */
export function isAllowedHost(host: string | undefined, baseUrl: string): boolean {
  if (host === undefined) return false;
  const h = host.toLowerCase();
  if (allowedHosts(baseUrl).has(h)) return true;
  const url = new URL(baseUrl);
  if (isLoopbackHost(url.hostname)) return false;
  const match = /^(\[[0-9a-f:.]+\]|[0-9.]+):(\d{1,5})$/.exec(h);
  if (match === null || match[2] !== (url.port === '' ? '80' : url.port)) return false;
  const address = (match[1] as string).replace(/^\[|\]$/g, '');
  return isIP(address) === ((match[1] as string).startsWith('[') ? 6 : 4);
}
