/**
 * /api/admin/config: the versioned system configuration, and its history
 * (/api/admin/config/versions). ADMIN only (the gate is on the admin
 * router, admin/admin.routes.ts). Queries: admin/config.queries.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  decodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
} from "../core/openapi.ts";
import { conflict } from "../../_shared/errors.ts";
import {
  applyPatch,
  configDocument,
  configPatch,
  diffConfig,
} from "../../_shared/config-document.ts";
import { asUser } from "../core/doors.ts";
import { setClient } from "../core/paging.ts";
import { currentConfig, insertConfigVersion, listConfigVersions } from "./config.queries.ts";

export const adminConfig = router();

const configSchema = configDocument.openapi("SystemConfig");

adminConfig.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getConfig",
    summary: "The current configuration and its version",
    security: signedIn,
    responses: {
      200: json(z.object({ version: z.number().int(), config: configSchema }), "The configuration"),
      ...errors(401, 403, 429),
    },
  }),
  async (c) => {
    const current = await asUser(c, (tx) => currentConfig(tx));
    return c.json(current, 200);
  },
);

adminConfig.openapi(
  createRoute({
    method: "put",
    path: "/",
    operationId: "updateConfig",
    summary: "Change part of the configuration",
    description: "`config` is a partial document (unknown keys are refused). A new version is " +
      "written with the reason; the answer holds the diff. With `expectedVersion`, a stale " +
      "version is refused with 409; without it, two concurrent writers still cannot both win.",
    security: signedIn,
    request: {
      body: jsonBody(z.object({
        config: configPatch,
        reason: z.string().trim().min(1).max(500),
        expectedVersion: z.number().int().positive().optional(),
      })),
    },
    responses: {
      200: json(
        z.object({
          version: z.number().int(),
          config: configSchema,
          diff: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
        }),
        "The new version",
      ),
      ...errors(400, 401, 403, 409, 429),
    },
  }),
  async (c) => {
    const { config: patch, reason, expectedVersion } = c.req.valid("json");
    const user = c.get("user")!;
    const deps = c.get("deps");
    const result = await asUser(c, async (tx) => {
      // The version's security event is written by its trigger, in this transaction, with the
      // client's address (app_private.audit_config_version).
      await setClient(tx, { ip: c.get("ip"), userAgent: c.get("userAgent") });
      const current = await currentConfig(tx);
      if (expectedVersion !== undefined && expectedVersion !== current.version) {
        throw conflict("The configuration has changed since you read it.", {
          expectedVersion,
          currentVersion: current.version,
        });
      }
      const next = applyPatch(current.config, patch);
      const diff = diffConfig(current.config, next);
      const version = current.version + 1;
      const saved = await insertConfigVersion(tx, {
        version,
        config: next,
        diff,
        reason,
        changedBy: user.id,
      });
      if (!saved) {
        throw conflict("Another change was saved at the same time; reload and try again.", {
          currentVersion: version,
        });
      }
      return { version, config: next, diff };
    });
    deps.config.invalidate();
    return c.json(result, 200);
  },
);

const configVersion = z.object({
  version: z.number().int(),
  reason: z.string(),
  changedBy: z.object({ id: z.uuid(), name: z.string() }).nullable().openapi({
    description: "Who wrote the version (their profile name); null once the account is gone",
  }),
  diff: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })).openapi({
    description: "What changed against the version before, by path (`limits.messageMaxLength`)",
  }),
  createdAt: z.iso.datetime(),
}).openapi("ConfigVersion");

adminConfig.openapi(
  createRoute({
    method: "get",
    path: "/versions",
    operationId: "listConfigVersions",
    summary: "The configuration's history, newest version first",
    description: "Every version written, with its reason, author and diff against the version " +
      "before. The current version is the first item of the first page.",
    security: signedIn,
    request: {
      query: z.object({ limit: limitParam, cursor: z.string().max(200).optional() }),
    },
    responses: {
      200: json(pageOf(configVersion), "A page of versions"),
      ...errors(400, 401, 403, 429),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const before = q.cursor ? decodeCursor(q.cursor, ["number"])[0] as number : null;
    const page = await asUser(c, (tx) => listConfigVersions(tx, { before, limit: q.limit }));
    return c.json(page, 200);
  },
);
