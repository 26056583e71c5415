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
}).openapi("Message");

export type MessageJson = z.infer<typeof messageSchema>;
