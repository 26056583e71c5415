/**
 * Events of the signed-in user's own topic (`user:<id>`), fanned out to the pages that care:
 * the conversation list (conversation.joined, conversation.left) today; notifications, orders and
 * wallet transactions as those domains land.
 */
import type { RealtimeEnvelope } from "../../realtime/transport.ts";

type Listener = (event: RealtimeEnvelope) => void;
const listeners = new Set<Listener>();

export const userEvents = {
  emit(event: RealtimeEnvelope) {
    for (const listener of [...listeners]) listener(event);
  },
  on(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
