/**
 * A short history of each application's `changeId`, as the console saw it change (its own saves,
 * and reloads of the config file noticed on the next look). Kept in memory only.
 */

export interface ChangeIdEntry {
  readonly changeId: string;
  /** ISO 8601 time the console first saw this `changeId`. */
  readonly at: string;
}

/** Entries kept per application, newest first. */
export const HISTORY_LENGTH = 10;

export class ChangeIdHistory {
  readonly #byApp = new Map<string, ChangeIdEntry[]>();

  /** Records every application whose current `changeId` differs from the newest one recorded. */
  observe(current: Iterable<{ id: string; changeId: string }>, now = new Date()): void {
    const seen = new Set<string>();
    for (const { id, changeId } of current) {
      seen.add(id);
      const entries = this.#byApp.get(id) ?? [];
      if (entries[0]?.changeId !== changeId) {
        entries.unshift({ changeId, at: now.toISOString() });
        entries.length = Math.min(entries.length, HISTORY_LENGTH);
        this.#byApp.set(id, entries);
      }
    }
    for (const id of this.#byApp.keys()) if (!seen.has(id)) this.#byApp.delete(id);
  }

  of(applicationId: string): readonly ChangeIdEntry[] {
    return this.#byApp.get(applicationId) ?? [];
  }
}
