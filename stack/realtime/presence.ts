/**
 * Presence for one gateway process, in Phoenix.Presence's shapes: the state of a topic is
 * `{ [key]: { metas: [{ phx_ref, ...meta }] } }`, a diff is `{ joins, leaves }` in that shape.
 * Each channel tracks at most one meta under its presence key; tracking again replaces it (the
 * new meta carries `phx_ref_prev`). Presence is per process: see docs/realtime.md.
 */

export type Meta = Record<string, unknown>;
export type PresenceState = Record<string, { metas: Meta[] }>;
export interface PresenceDiff {
  joins: PresenceState;
  leaves: PresenceState;
}

interface Entry {
  key: string;
  ref: string;
  /** The ref this entry replaced, kept as Phoenix's tracker keeps it. */
  prev?: string;
  meta: Meta;
}

function newRef(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}

const withRef = (e: Entry): Meta => ({
  ...e.meta,
  phx_ref: e.ref,
  ...(e.prev ? { phx_ref_prev: e.prev } : {}),
});

export class PresenceStore {
  /** topic key -> tracker id (one per channel) -> entry */
  private topics = new Map<string, Map<string, Entry>>();

  /** Tracks (or replaces) the tracker's meta; returns the diff to broadcast. */
  track(topic: string, tracker: string, key: string, meta: Meta): PresenceDiff {
    let entries = this.topics.get(topic);
    if (!entries) this.topics.set(topic, entries = new Map());
    const previous = entries.get(tracker);
    const entry: Entry = { key, ref: newRef(), prev: previous?.ref, meta };
    entries.set(tracker, entry);
    const diff: PresenceDiff = {
      joins: { [key]: { metas: [withRef(entry)] } },
      leaves: {},
    };
    if (previous) diff.leaves[previous.key] = { metas: [withRef(previous)] };
    return diff;
  }

  /** Removes the tracker's meta; returns the diff, or null when it tracked nothing. */
  untrack(topic: string, tracker: string): PresenceDiff | null {
    const entries = this.topics.get(topic);
    const previous = entries?.get(tracker);
    if (!entries || !previous) return null;
    entries.delete(tracker);
    if (!entries.size) this.topics.delete(topic);
    return { joins: {}, leaves: { [previous.key]: { metas: [withRef(previous)] } } };
  }

  state(topic: string): PresenceState {
    const out: PresenceState = {};
    for (const entry of this.topics.get(topic)?.values() ?? []) {
      (out[entry.key] ??= { metas: [] }).metas.push(withRef(entry));
    }
    return out;
  }

  tracks(topic: string, tracker: string): Meta | undefined {
    return this.topics.get(topic)?.get(tracker)?.meta;
  }
}
