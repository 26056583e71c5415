/**
 * /api/users: the people directory, so a member can find whom to message. SUBSCRIBER and above
 * (declared on this router). The database decides what is listed (`app.list_people`: active
 * users other than the caller, public fields only, never an e-mail); app.users itself still shows
 * a user only their own row.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../core/context.ts";
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
import { listPeople } from "./users.queries.ts";
import { requireRole } from "../core/middleware/roles.ts";

export const users = router();
users.use("*", requireRole("SUBSCRIBER"));

const personSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  image: z.string().nullable(),
  role: z.enum(ROLES),
}).openapi("Person");

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
        pageOf(personSchema),
        "A page of people",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(
      c,
      (tx) => listPeople(tx, { search: q.search, after, limit: q.limit }),
    );
    return c.json(page, 200);
  },
);
