/**
 * /api/users: the people directory, so a member can find whom to message. SUBSCRIBER and above
 * (declared on this router). The database decides what is listed (`app.list_people`: active
 * users other than the caller, public fields only, never an e-mail); app.users itself still shows
 * a user only their own row.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../context.ts";
import {
  decodeCursor,
  encodeCursor,
  errors,
  json,
  limitParam,
  router,
  signedIn,
} from "../openapi.ts";
import { withUser } from "../../_shared/db.ts";
import { claimsOf } from "../session-claims.ts";
import { requireRole } from "../middleware/roles.ts";

export const users = router();
users.use("*", requireRole("SUBSCRIBER"));

const personSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  image: z.string().nullable(),
  role: z.enum(ROLES),
}).openapi("Person");

interface PersonRow {
  id: string;
  name: string;
  image: string | null;
  role: (typeof ROLES)[number];
}

users.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listPeople",
    summary: "Find people by name",
    description: "Active users other than the caller, by name (case-insensitive, A to Z). " +
      "`search` is a substring of the name. Public fields only: never an e-mail.",
    security: signedIn,
    request: {
      query: z.object({
        search: z.string().trim().max(200).optional(),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(
        z.object({ items: z.array(personSchema), nextCursor: z.string().nullable() }),
        "A page of people",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const [afterName, afterId] = q.cursor
      ? decodeCursor(q.cursor, ["string", "string"]) as [string, string]
      : [null, null];
    const rows = await withUser(
      c.get("deps").sql,
      claimsOf(c.get("user")!),
      (tx) =>
        tx<PersonRow[]>`
        select id, name, image, role
        from app.list_people(${q.search || null}, ${afterName}, ${afterId}::uuid, ${q.limit + 1})`,
    );
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return c.json({
      items: page.map((r) => ({ id: r.id, name: r.name, image: r.image, role: r.role })),
      nextCursor: rows.length > q.limit && last ? encodeCursor([last.name, last.id]) : null,
    }, 200);
  },
);
