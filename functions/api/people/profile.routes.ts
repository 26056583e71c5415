/**
 * /api/profile: the caller's own profile (name, picture, bio, time zone, locale). Any signed-in
 * person (declared on each route); the row is the caller's own (RLS), so there is nobody else's
 * to reach. Queries: people/profile.queries.ts. What others see of it is GET /api/users/{id}
 * (people/users.routes.ts).
 */
import { createRoute } from "@hono/zod-openapi";
import { errors, errorSchema, json, jsonBody, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { readOwnProfile, updateOwnProfile } from "./profile.queries.ts";
import {
  canonicalLocale,
  canonicalTimeZone,
  ownProfileSchema,
  profileChangeSchema,
} from "./profile.schemas.ts";

export const profile = router();

profile.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getProfile",
    summary: "The caller's profile",
    description: "Name, picture, bio, time zone and locale of the signed-in person.",
    security: signedIn,
    responses: { 200: json(ownProfileSchema, "The profile"), ...errors(401, 403) },
  }),
  async (c) => c.json(await asUser(c, readOwnProfile), 200),
);

profile.openapi(
  createRoute({
    method: "put",
    path: "/",
    operationId: "updateProfile",
    summary: "Change the caller's profile",
    description: "The fields given change, the others stay. `name` 1-64 characters after " +
      "trimming, no control characters; `bio` up to 500; `timeZone` an IANA zone; `locale` a " +
      "BCP 47 tag (both stored canonical); `imageId` an upload of the caller's with an image " +
      "type (another person's upload: 404; another type: 415), null removes the picture. The " +
      "name and picture are what every endpoint shows from the next read on, and " +
      "`profile.updated` goes to `user:<id>`.",
    security: signedIn,
    request: { body: jsonBody(profileChangeSchema) },
    responses: {
      200: json(ownProfileSchema, "The profile as it is now"),
      ...errors(400, 401, 403, 404),
      415: json(errorSchema, "Not JSON, or an `imageId` whose file is not an image"),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const change = {
      name: body.name,
      bio: body.bio === undefined ? undefined : body.bio || null,
      timeZone: body.timeZone === undefined
        ? undefined
        : body.timeZone && canonicalTimeZone(body.timeZone),
      locale: body.locale === undefined ? undefined : body.locale && canonicalLocale(body.locale),
      imageId: body.imageId,
    };
    return c.json(await asUser(c, (tx) => updateOwnProfile(tx, change)), 200);
  },
);
