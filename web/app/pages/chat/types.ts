/**
 * The chat's shapes, from the API's OpenAPI document (`Schema<...>` of lib/client.ts: never typed
 * by hand), and what the chat pages say about them.
 */
import type { Schema } from "../../lib/client.ts";

export type Message = Schema<"Message">;
export type Reaction = Schema<"Reaction">;
export type Conversation = Schema<"Conversation">;
export type Participant = Conversation["participants"][number];
export type Person = Schema<"Person">;
export type SearchResult = Schema<"MessageSearchResult">;
/** The caller's mute of a conversation (contract "Community": conversation settings). */
export type MuteState = Schema<"ConversationSettings">;

/** The emoji the picker offers. */
export const COMMON_EMOJI = ["👍", "❤️", "😂", "🎉", "😮", "😢", "🙏", "🔥"];

/** What the chat shows as a conversation's name. */
export function conversationName(c: Conversation, me: string): string {
  if (c.title) return c.title;
  const others = c.participants.filter((p) => p.userId !== me).map((p) => p.name);
  return others.length ? others.join(", ") : "Just you";
}
