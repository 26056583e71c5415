/**
 * /api/users/blocked and /api/users/{id}/block: blocking people. SUBSCRIBER and above (declared
 * on this router, mounted before the directory's router so `/blocked` is not taken for an id).
 * The database enforces a block (`app.user_blocks` and its triggers: a blocked person cannot
 * start a direct conversation with the blocker, send into one or add them to a group, 403
 * `blocked`; their mentions of the blocker notify nothing) and shows it to the blocker only.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  errors,
  json,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { listBlocked, setBlock } from "./blocks.queries.ts";

export const blocks = router();
blocks.use("*", requireRole("SUBSCRIBER"));

const blockedPersonSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  image: z.string().nullable(),
}).openapi("BlockedPerson");

const blockStateSchema = z.object({
  userId: z.uuid(),
  blocked: z.boolean(),
}).openapi("BlockState");

blocks.openapi(
  createRoute({
    method: "get",
    path: "/blocked",
    operationId: "listBlockedPeople",
    summary: "The people the caller blocks",
    description: "Newest block first, in keyset pages. Public fields only.",
    security: signedIn,
    request: {
      query: z.object({ limit: limitParam, cursor: z.string().max(500).optional() }),
    },
    responses: {
      200: json(pageOf(blockedPersonSchema), "A page of blocked people"),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(c, (tx) => listBlocked(tx, { after, limit: q.limit }));
    return c.json(page, 200);
  },
);

blocks.openapi(
  createRoute({
    method: "put",
    path: "/{id}/block",
    operationId: "blockUser",
    summary: "Block a person",
    description: "Idempotent. The blocked person cannot start a direct conversation with the " +
      "caller, send into one or add the caller to a group (403 `blocked`), and their mentions " +
      "notify nothing; in shared groups their messages still arrive, marked `senderBlocked`. " +
      "Nothing else tells them. 404 for a suspended, deleted or unknown user; 422 for oneself.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(blockStateSchema, "Blocked"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => setBlock(tx, id, true)), 200);
  },
);

blocks.openapi(
  createRoute({
    method: "delete",
    path: "/{id}/block",
    operationId: "unblockUser",
    summary: "Unblock a person",
    description: "Idempotent: unblocking someone not blocked is not an error. 422 for oneself.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(blockStateSchema, "Not blocked"),
      ...errors(400, 401, 403, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await asUser(c, (tx) => setBlock(tx, id, false)), 200);
  },
);
