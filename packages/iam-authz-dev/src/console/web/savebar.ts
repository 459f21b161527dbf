/**
 * The save bar: the unsaved-changes label with the draft validated as you type, Save (with If-Match,
 * and what each refusal means for the user), and reloading after a conflict.
 */
import { api, loadAll, refreshStatus } from './api.js';
import { button, byId } from './dom.js';
import { clearMessage, markField, say } from './messages.js';
import { render } from './render.js';
import { isDirty, state } from './state.js';
import type { Config } from './types.js';

export function updateDirty(): void {
  const dirty = isDirty();
  const label = byId('dirty');
  label.textContent = dirty ? 'Unsaved changes' : 'No unsaved changes';
  label.className = dirty ? 'unsaved' : '';
  (byId('save') as HTMLButtonElement).disabled = !dirty;
  (byId('discard') as HTMLButtonElement).disabled = !dirty;
  scheduleValidation();
}

export async function save(): Promise<void> {
  const res = await api<Config & { detail?: string; field?: string }>('PUT', 'config', state.draft, { 'if-match': state.etag });
  if (res.status === 200) {
    state.saved = res.data;
    state.draft = structuredClone(res.data);
    state.etag = res.etag ?? '';
    await refreshStatus();
    render();
    const where = state.status?.storage.kind === 'file' ? 'Saved to the config file.' : 'Saved in memory.';
    say('info', `${where} Running services pick up the new changeId on their next policy check.`);
    return;
  }
  if (res.status === 409) {
    say('error', 'Not saved: the configuration was changed elsewhere (another tab, a script or the file) since this page loaded it. Reload to get the current version, then make your change again.',
      button('Reload', () => { void reload(); }));
    return;
  }
  if (res.status === 403) {
    say('error', `Not saved: ${res.data.detail ?? 'refused'}. Reload the page to start a new session.`);
    return;
  }
  markField(res.data.field);
  say('error', `Not saved: ${res.data.detail ?? `error ${res.status}`}`);
}

async function reload(): Promise<void> {
  await loadAll();
  clearMessage();
  render();
}

let validationTimer: number | undefined;
/** Validated as you type: the draft goes through the server's config validation (nothing is saved). */
function scheduleValidation(): void {
  window.clearTimeout(validationTimer);
  if (!isDirty()) {
    markField(undefined);
    byId('dirty').textContent = 'No unsaved changes';
    return;
  }
  validationTimer = window.setTimeout(() => {
    void api<{ valid?: boolean; detail?: string; field?: string }>('POST', 'config/validate', state.draft).then((res) => {
      if (!isDirty()) return;
      markField(res.status === 200 ? undefined : res.data.field);
      byId('dirty').textContent = res.status === 200 ? 'Unsaved changes (valid)' : `Unsaved changes — ${res.data.detail ?? 'invalid'}`;
    });
  }, 300);
}
