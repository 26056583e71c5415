/**
 * The chat page's message state without a browser (web/app/pages/chat/conversation-state.ts):
 * the counts shown after a burst of reactions are the last event's, whatever order the caller's
 * own answers, page reads and live events arrive in.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import { initialState, reducer, type State } from "../../web/app/pages/chat/conversation-state.ts";
import type { Message } from "../../web/app/pages/chat/types.ts";

function message(reactions: Message["reactions"]): Message {
  return {
    id: "m1",
    conversationId: "c1",
    seq: 1,
    senderId: "u1",
    content: "react",
    replyToId: null,
    attachments: [],
    createdAt: "2026-11-28T12:00:00.000000Z",
    editedAt: null,
    deletedAt: null,
    threadId: null,
    thread: null,
    reactions,
    mentions: [],
  } as Message;
}

function loaded(reactions: Message["reactions"]): State {
  return reducer(initialState(), { type: "merge", messages: [message(reactions)], readFrom: 0 });
}

test("[web] chat state: the caller's own answer arriving after newer events does not put the counts back", () => {
  let state = loaded([{ emoji: "👍", count: 1, me: true }]);
  // The caller adds 🎉; before the answer comes back, the event of that change and the event of
  // someone else's later 🎉 arrive.
  const readFrom = state.tick;
  state = reducer(state, {
    type: "reactions",
    id: "m1",
    reactions: [{ emoji: "👍", count: 1 }, { emoji: "🎉", count: 1 }].map((r) => ({
      ...r,
      me: false,
    })),
  });
  state = reducer(state, {
    type: "reactions",
    id: "m1",
    reactions: [{ emoji: "👍", count: 1 }, { emoji: "🎉", count: 2 }].map((r) => ({
      ...r,
      me: false,
    })),
  });
  state = reducer(state, {
    type: "own reactions",
    id: "m1",
    readFrom,
    reactions: [{ emoji: "👍", count: 1, me: true }, { emoji: "🎉", count: 1, me: true }],
  });
  assert.deepEqual(state.byId.get("m1")!.reactions, [
    { emoji: "👍", count: 1, me: true },
    { emoji: "🎉", count: 2, me: true },
  ]);
});

test("[web] chat state: without events meanwhile (the feed down), the answer's counts are shown", () => {
  let state = loaded([{ emoji: "👍", count: 3, me: false }]);
  state = reducer(state, {
    type: "own reactions",
    id: "m1",
    readFrom: state.tick,
    reactions: [{ emoji: "👍", count: 5, me: true }],
  });
  assert.deepEqual(state.byId.get("m1")!.reactions, [{ emoji: "👍", count: 5, me: true }]);
});

test("[web] chat state: a page read that started before a reactions event keeps the event's counts, and events keep the page's `me`", () => {
  let state = loaded([{ emoji: "🔥", count: 1, me: true }]);
  const readFrom = state.tick;
  state = reducer(state, {
    type: "reactions",
    id: "m1",
    reactions: [{ emoji: "🔥", count: 7, me: false }],
  });
  state = reducer(state, {
    type: "merge",
    messages: [message([{ emoji: "🔥", count: 4, me: true }])],
    readFrom,
  });
  assert.deepEqual(state.byId.get("m1")!.reactions, [{ emoji: "🔥", count: 7, me: true }]);
  // A read that started after it is newer: taken as it is.
  state = reducer(state, {
    type: "merge",
    messages: [message([{ emoji: "🔥", count: 8, me: true }])],
    readFrom: state.tick,
  });
  assert.deepEqual(state.byId.get("m1")!.reactions, [{ emoji: "🔥", count: 8, me: true }]);
  state = reducer(state, {
    type: "reactions",
    id: "m1",
    reactions: [{ emoji: "🔥", count: 9, me: false }],
  });
  assert.deepEqual(state.byId.get("m1")!.reactions, [{ emoji: "🔥", count: 9, me: true }]);
});
