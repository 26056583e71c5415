/**
 * /api/conversations/{id}/settings: a participant's own settings for one conversation (its mute).
 * SUBSCRIBER and above; mounted on /api/conversations beside the conversations router. While
 * muted, the conversation's notifications are neither pushed nor mailed and mentions notify
 * nothing (decided in `app_private.notify_rows`); its MESSAGE notification and unread count
 * still move. Queries: messaging/conversation-settings.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, jsonBody, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { badRequest } from "../../_shared/errors.ts";
import { readMute, setMute } from "./conversation-settings.queries.ts";

export const conversationSettings = router();
conversationSettings.use("*", requireRole("SUBSCRIBER"));

const settingsSchema = z.object({
  conversationId: z.uuid(),
  muted: z.boolean(),
  mutedUntil: z.string().nullable().openapi({
    description: "When the mute ends; null when muted until unmuted, or not muted",
  }),
}).openapi("ConversationSettings");

const uuidParam = z.object({ id: z.uuid() });

conversationSettings.openapi(
  createRoute({
    method: "get",
    path: "/{id}/settings",
    operationId: "getConversationSettings",
    summary: "The caller's settings for a conversation (its mute)",
    security: signedIn,
    request: { params: uuidParam },
    responses: {
      200: json(settingsSchema, "The settings"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => readMute(tx, id)), 200);
  },
);

conversationSettings.openapi(
  createRoute({
    method: "put",
    path: "/{id}/settings",
    operationId: "updateConversationSettings",
    summary: "Mute or unmute a conversation for the caller",
    description: "`{ muted: true }` mutes until unmuted, `{ muted: true, mutedUntil }` (or " +
      "`mutedUntil` alone) until that time, which must be in the future (422 otherwise); " +
      "`{ muted: false }` clears both. While muted: no push or e-mail for the conversation and " +
      "no mention notification; its MESSAGE notification and unread count still move.",
    security: signedIn,
    request: {
      params: uuidParam,
      body: jsonBody(z.object({
        muted: z.boolean().optional(),
        mutedUntil: z.iso.datetime({ offset: true }).nullable().optional().openapi({
          example: "2026-12-01T08:00:00Z",
        }),
      })),
    },
    responses: {
      200: json(settingsSchema, "The settings"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    if (body.muted === false && body.mutedUntil) {
      throw badRequest("Invalid json.", [
        { path: "mutedUntil", message: "mutedUntil goes with muted: true" },
      ]);
    }
    return c.json(await asUser(c, (tx) => setMute(tx, id, body)), 200);
  },
);
