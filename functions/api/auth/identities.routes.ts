/**
 * /api/auth/identities: how the caller signs in (e-mail, Google, Apple, wallets), and unlinking
 * one. Linking is signing in with `link: true` (POST /api/auth/signin). Any signed-in user
 * (declared on this router). Queries: auth/sessions.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, json, router, signedIn } from "../core/openapi.ts";
import { asUser } from "../core/doors.ts";
import { requireSignIn } from "../core/middleware/roles.ts";
import { listOwnIdentities, unlinkOwnIdentity } from "./sessions.queries.ts";
import { PROVIDERS } from "./providers.ts";

export const identities = router();
identities.use("*", requireSignIn());

const identitySchema = z.object({
  id: z.uuid(),
  provider: z.enum(PROVIDERS),
  address: z.string().nullable().openapi({ description: "A wallet's address; null otherwise" }),
  email: z.string().nullable().openapi({ description: "The address the provider gave" }),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime(),
}).openapi("Identity");

identities.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "listIdentities",
    summary: "The caller's sign-in identities, oldest first",
    security: signedIn,
    responses: {
      200: json(z.object({ items: z.array(identitySchema) }), "The identities"),
      ...errors(401),
    },
  }),
  async (c) => {
    const items = await asUser(c, (tx) => listOwnIdentities(tx));
    return c.json({ items: items as z.infer<typeof identitySchema>[] }, 200);
  },
);

identities.openapi(
  createRoute({
    method: "delete",
    path: "/{id}",
    operationId: "unlinkIdentity",
    summary: "Unlink one of the caller's identities",
    description: "Never the last one, and never the e-mail identity (magic links reach the " +
      "account through its address): 422. Another user's identity: 404. Recorded as " +
      "`auth.identity_unlinked`.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: json(z.object({ id: z.uuid(), unlinked: z.literal(true) }), "Unlinked"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    await asUser(
      c,
      (tx) => unlinkOwnIdentity(tx, id, { ip: c.get("ip"), userAgent: c.get("userAgent") }),
    );
    return c.json({ id, unlinked: true as const }, 200);
  },
);
