/** The message shape shared by the messaging routes (built in SQL by `app.message_json`). */
import { z } from "@hono/zod-openapi";
import { MESSAGE_LENGTH_CEILING } from "../../_shared/config-document.ts";

/**
 * A message's text as a request carries it: 1 character up to the ceiling; the configured
 * `limits.messageMaxLength`, which may be lower, is checked by the send and the edit in SQL (400).
 */
export const messageContent = z.string().min(1).max(MESSAGE_LENGTH_CEILING);

export const attachmentRefSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int(),
  url: z.string().openapi({ description: "Download path; participants only" }),
}).openapi("AttachmentRef");

export const reactionSchema = z.object({
  emoji: z.string(),
  count: z.number().int(),
  me: z.boolean().openapi({ description: "Whether the caller is among them" }),
}).openapi("Reaction");

export const threadSummarySchema = z.object({
  replyCount: z.number().int(),
  lastReplyAt: z.string().nullable(),
}).openapi("ThreadSummary");

/**
 * An emoji as a path segment: exactly one emoji grapheme (a pictograph, with its modifiers,
 * variation selectors and joiners; a flag; a keycap), at most 32 code points. Anything else is 400.
 */
export function isOneEmoji(value: string): boolean {
  if ([...value].length > 32) return false;
  const graphemes = [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(value)];
  if (graphemes.length !== 1) return false;
  if (/[\p{C}\s]/u.test(value.replace(/[\u200d\ufe0e\ufe0f\u{e0020}-\u{e007f}]/gu, ""))) {
    return false;
  }
  const flags = value.match(/\p{Regional_Indicator}/gu)?.length ?? 0;
  if (flags) return flags === 2 && [...value].length === 2;
  return /\p{Extended_Pictographic}/u.test(value) || /^[0-9#*]\ufe0f?\u20e3$/u.test(value);
}

export const emojiParam = z.string().min(1).max(64).refine(isOneEmoji, {
  message: "Expected exactly one emoji.",
}).openapi({ example: "👍", description: "One emoji, URL-encoded" });

export const messageSchema = z.object({
  id: z.uuid(),
  conversationId: z.uuid(),
  seq: z.number().int().openapi({ description: "Position in the conversation (commit order)" }),
  senderId: z.uuid().nullable(),
  content: z.string().openapi({ description: "Empty for a deleted message" }),
  replyToId: z.uuid().nullable(),
  attachments: z.array(attachmentRefSchema),
  createdAt: z.string(),
  editedAt: z.string().nullable(),
  deletedAt: z.string().nullable(),
  threadId: z.uuid().nullable().openapi({
    description: "The root message of the thread this reply is in; null outside threads",
  }),
  thread: threadSummarySchema.nullable().openapi({
    description: "On a root with live replies; null otherwise",
  }),
  reactions: z.array(reactionSchema).openapi({ description: "None on a tombstone" }),
  mentions: z.array(z.uuid()).openapi({
    description: "The participants this message mentions; none on a tombstone",
  }),
  senderBlocked: z.boolean().optional().openapi({
    description: "In what the caller reads (lists, threads, search): true when the caller " +
      "blocks the sender. Absent from the send's answer and live events",
  }),
}).openapi("Message");

export type MessageJson = z.infer<typeof messageSchema>;
