/**
 * /api/users: the people directory, so a member can find whom to message. SUBSCRIBER and above
 * (declared on this router). The database decides what is listed (`app.list_people`: active
 * users other than the caller, public fields only, never an e-mail); app.users itself still shows
 * a user only their own row. A person's public profile (`app.user_profile`) and uploaded picture
 * (`app.profile_image`) are here too: 404 for a suspended, deleted or unknown user.
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
import { notFound } from "../../_shared/errors.ts";
import { findProfileImage, readPublicProfile } from "./profile.queries.ts";
import { publicProfileSchema } from "./profile.schemas.ts";

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

users.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "getUserProfile",
    summary: "A person's public profile",
    description: "Name, picture, bio and role of an active user (`app.user_profile`). Never an " +
      "e-mail; a suspended, deleted or unknown user is 404.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(publicProfileSchema, "The public profile"),
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const found = await asUser(c, (tx) => readPublicProfile(tx, id));
    if (!found) throw notFound("User not found.");
    return c.json(found, 200);
  },
);

users.openapi(
  createRoute({
    method: "get",
    path: "/{id}/image",
    operationId: "getUserImage",
    summary: "A person's uploaded picture",
    description: "The picture an active user uploaded for their profile (`app.profile_image`), " +
      "for whoever may see the profile. `v` is the version the profile's `image` URL names (it " +
      "changes with the picture, so the answer may be kept by the browser). 404 for a " +
      "suspended, deleted or unknown user, or one whose picture is not an upload.",
    security: signedIn,
    request: {
      params: z.object({ id: z.uuid() }),
      query: z.object({ v: z.string().max(100).optional() }),
    },
    responses: {
      200: {
        description: "The image, served with the type it was uploaded with (PNG, JPEG, GIF or " +
          "WebP)",
        content: { "image/*": { schema: { type: "string", format: "binary" } } },
      },
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const deps = c.get("deps");
    const row = await asUser(c, (tx) => findProfileImage(tx, id));
    const file = row && await deps.storage.get(row.storage_key);
    if (!row || !file) {
      if (row) {
        deps.log("warn", "profile image file missing from storage", {
          requestId: c.get("requestId"),
          userId: id,
        });
      }
      throw notFound("Image not found.");
    }
    const headers = {
      "Content-Type": row.content_type,
      "Content-Length": String(file.size),
      "Content-Disposition": "inline",
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "default-src 'none'; sandbox",
      // The URL changes with the picture (`?v=`); private: it is for signed-in people only.
      "Cache-Control": "private, max-age=86400",
    };
    if (c.req.method === "HEAD") {
      await file.body.cancel();
      return c.body(null, 200, headers);
    }
    return c.body(file.body, 200, headers);
  },
);
