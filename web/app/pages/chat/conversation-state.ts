/**
 * The conversation view's message state, pure (no Preact), so its rules are tested without a
 * browser (tests/web/chat-state.test.ts).
 *
 * Reactions' counts come from two sources that race: live `message.reactions` events (in the
 * log's order, each holding the counts after every change committed before it, no `me`) and
 * reads (the caller's own PUT/DELETE answer, a page or thread read: `me` exact, counts as of the
 * read). An answer can arrive after events of later changes: applied as it is, it would put the
 * counts back to an older state, and after a burst the last thing shown would be wrong although
 * the last event was right. So each message remembers the tick of the last reactions event it
 * got, a read remembers the tick it started at, and a read that started before an event of the
 * same message only brings `me`: the counts stay the event's (the event of the caller's own
 * change is still to come, or already in).
 */
import type { Message, Reaction } from "./types.ts";

export interface State {
  byId: Map<string, Message>;
  /** Cursor to older messages; null when the start was reached. */
  older: string | null | undefined;
  loading: boolean;
  error: string | null;
  /** How many `message.reactions` events arrived so far (any message). */
  tick: number;
  /** The tick of the last `message.reactions` event per message. */
  reactionTicks: Map<string, number>;
}

export type Action =
  /** `readFrom`: the tick when the read (a page, a thread) started; absent for events. */
  | { type: "merge"; messages: Message[]; fromEvent?: boolean; readFrom?: number }
  /** A `message.reactions` event (counts, no `me`). */
  | { type: "reactions"; id: string; reactions: Reaction[] }
  /** The caller's own PUT/DELETE answer (counts and `me`), read from `readFrom`. */
  | { type: "own reactions"; id: string; reactions: Reaction[]; readFrom: number }
  | { type: "deleted"; id: string; deletedAt: string }
  | { type: "older"; cursor: string | null }
  | { type: "loading"; loading: boolean }
  | { type: "error"; error: string | null };

export function initialState(): State {
  return {
    byId: new Map(),
    older: undefined,
    loading: true,
    error: null,
    tick: 0,
    reactionTicks: new Map(),
  };
}

/** Whether a read that started at `readFrom` is older than the message's last reactions event. */
function eventSince(state: State, id: string, readFrom: number | undefined): boolean {
  return readFrom !== undefined && (state.reactionTicks.get(id) ?? 0) > readFrom;
}

export function reducer(state: State, action: Action): State {
  switch (action.type) {
    case "merge": {
      const byId = new Map(state.byId);
      for (const m of action.messages) {
        const known = byId.get(m.id);
        // A tombstone never comes back to life; an older copy never replaces a newer one.
        if (known?.deletedAt && !m.deletedAt) continue;
        if (known?.editedAt && m.editedAt && m.editedAt < known.editedAt) continue;
        let reactions = m.reactions;
        if (known && action.fromEvent) {
          // An event goes to everyone, so its reactions carry no `me`: keep the page's own.
          reactions = keepMine(known.reactions, m.reactions);
        } else if (known && eventSince(state, m.id, action.readFrom)) {
          // A read older than the last reactions event: its `me`, the event's counts.
          reactions = takeMine(known.reactions, m.reactions);
        }
        byId.set(m.id, { ...m, reactions });
      }
      return { ...state, byId };
    }
    case "deleted": {
      const known = state.byId.get(action.id);
      if (!known) return state;
      const byId = new Map(state.byId);
      byId.set(action.id, { ...known, content: "", attachments: [], deletedAt: action.deletedAt });
      return { ...state, byId };
    }
    case "reactions": {
      const tick = state.tick + 1;
      const reactionTicks = new Map(state.reactionTicks).set(action.id, tick);
      const known = state.byId.get(action.id);
      if (!known || known.deletedAt) return { ...state, tick, reactionTicks };
      const reactions = keepMine(known.reactions, action.reactions);
      return {
        ...state,
        tick,
        reactionTicks,
        byId: new Map(state.byId).set(action.id, { ...known, reactions }),
      };
    }
    case "own reactions": {
      const known = state.byId.get(action.id);
      if (!known || known.deletedAt) return state;
      const reactions = eventSince(state, action.id, action.readFrom)
        ? takeMine(known.reactions, action.reactions)
        : action.reactions;
      return { ...state, byId: new Map(state.byId).set(action.id, { ...known, reactions }) };
    }
    case "older":
      return { ...state, older: action.cursor };
    case "loading":
      return { ...state, loading: action.loading };
    case "error":
      return { ...state, error: action.error };
  }
}

/** The incoming counts with the `me` of what is known (events carry none). */
export function keepMine(known: Reaction[], incoming: Reaction[]): Reaction[] {
  const mine = new Set(known.filter((r) => r.me).map((r) => r.emoji));
  return incoming.map((r) => ({ ...r, me: mine.has(r.emoji) }));
}

/** The known counts with the `me` of a read (newer about the caller, older about the counts). */
export function takeMine(known: Reaction[], read: Reaction[]): Reaction[] {
  const mine = new Set(read.filter((r) => r.me).map((r) => r.emoji));
  return known.map((r) => ({ ...r, me: mine.has(r.emoji) }));
}
