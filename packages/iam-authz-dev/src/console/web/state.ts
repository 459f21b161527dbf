/**
 * The page's one state: the saved configuration and the draft being edited, the session's CSRF
 * token and the configuration's ETag, the chosen application and view, and the last minted token
 * (in memory only, never in localStorage or sessionStorage).
 */
import type { Application, Config, Minted, Status, View } from './types.js';

export const state: {
  csrf: string;
  etag: string;
  saved: Config;
  draft: Config;
  status: Status | undefined;
  app: string;
  view: View;
  minted: Minted | undefined;
} = {
  csrf: '',
  etag: '',
  saved: { idps: [], applications: [], actors: [] },
  draft: { idps: [], applications: [], actors: [] },
  status: undefined,
  app: '',
  view: 'roles',
  minted: undefined,
};

export function isDirty(): boolean {
  return JSON.stringify(state.draft) !== JSON.stringify(state.saved);
}

export function currentApp(): Application | undefined {
  return state.draft.applications.find((a) => a.id === state.app);
}

export function appIndex(): number {
  return state.draft.applications.findIndex((a) => a.id === state.app);
}
