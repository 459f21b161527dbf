/**
 * The page's calls to the console's JSON API (same origin, never cached, the CSRF token on every
 * change), and the loads of the configuration and the status into the state.
 */
import { state } from './state.js';
import type { Config, Status } from './types.js';

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- T names the route's answer for the caller
export async function api<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<{ status: number; etag: string | null; data: T }> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  const init: RequestInit = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (method !== 'GET') {
    headers['content-type'] = 'application/json';
    headers['x-csrf-token'] = state.csrf;
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(`/console/api/${path}`, init);
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), data: (text === '' ? undefined : JSON.parse(text)) as T };
}

export async function loadAll(): Promise<void> {
  const [config, status] = await Promise.all([api<Config>('GET', 'config'), api<Status>('GET', 'status')]);
  state.saved = config.data;
  state.draft = structuredClone(config.data);
  state.etag = config.etag ?? '';
  state.status = status.data;
  if (!state.saved.applications.some((a) => a.id === state.app)) state.app = state.saved.applications[0]?.id ?? '';
}

export async function refreshStatus(): Promise<void> {
  state.status = (await api<Status>('GET', 'status')).data;
}
