/**
 * Shared pieces for routes described with zod: the one validation hook (every route fails the
 * same way), the error schema, and small builders so each route stays a few lines.
 */
import { type Hook, OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "./context.ts";
import { badRequest } from "../../_shared/errors.ts";
import { unstorablePath } from "../../_shared/storable.ts";

export const errorSchema = z.object({
  error: z.object({
    code: z.string().openapi({ example: "invalid_request" }),
    message: z.string(),
    details: z.unknown().optional(),
  }),
}).openapi("Error");

/** Field errors as `[{ path, message }]`: what a 400's `details` holds. */
export function fieldErrors(issues: readonly z.core.$ZodIssue[]) {
  return issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(root)",
    message: issue.message,
  }));
}

/**
 * The one validation hook. Beyond each schema, text Postgres cannot store (a NUL, a lone UTF-16
 * surrogate) is refused here for every route and every part of a request, so no handler can write
 * half of what a request carried, nor lose an audit record over it (_shared/storable.ts).
 */
// deno-lint-ignore no-explicit-any
export const validationHook: Hook<any, AppEnv, any, any> = (result) => {
  if (!result.success) {
    throw badRequest(`Invalid ${result.target}.`, fieldErrors(result.error.issues));
  }
  const where = unstorablePath(result.data);
  if (where !== null) {
    throw badRequest(`Invalid ${result.target}.`, [{
      path: where || "(root)",
      message: "holds a NUL character or a lone UTF-16 surrogate, which cannot be stored",
    }]);
  }
};

/** A router for one resource: same validation hook everywhere. */
export function router(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

/** A JSON response entry for `createRoute({ responses })`. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** A JSON request body entry for `createRoute({ request })`. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

/** The error responses a route can give, documented once. */
export function errors(...statuses: number[]) {
  const described: Record<number, string> = {
    400: "Invalid input",
    401: "Not signed in",
    403: "Not allowed",
    404: "Not found (or not visible to the caller)",
    409: "Conflict",
    413: "Payload too large",
    415: "Unsupported media type (send application/json)",
    422: "A domain rule refused the change",
    429: "Rate limited (see Retry-After)",
    503: "Unavailable: the database, or an outside service the answer needs now " +
      "(`chain_unavailable`, with Retry-After)",
  };
  return Object.fromEntries(statuses.map((s) => [s, json(errorSchema, described[s] ?? "Error")]));
}

/**
 * What holds for every operation, whatever its route declares, added to the generated document
 * here, once: with a JSON body, the app's middleware refuses an oversized body (413) and another
 * content type (415), and the validation hook a malformed or invalid one (400); and any operation
 * may answer 503 `unavailable` with Retry-After while the database is not there (a restart, a
 * failover: docs/operations.md), since every one reads the session or the configuration from it.
 */
const METHODS = new Set(["get", "put", "post", "delete", "patch", "options", "head", "trace"]);

export function withCommonResponses<D extends { paths?: Record<string, unknown> }>(
  document: D,
): D {
  const refusals = errors(400, 413, 415);
  const unavailable = errors(503)[503];
  const add = (operation: { responses?: Record<string, unknown> }, status: string, d: string) => {
    operation.responses ??= {};
    operation.responses[status] ??= {
      description: d,
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
  };
  for (const item of Object.values(document.paths ?? {}) as Record<string, unknown>[]) {
    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.has(method)) continue; // `parameters`, `summary`: not operations
      const operation = value as {
        requestBody?: { content?: Record<string, unknown> };
        responses?: Record<string, unknown>;
      };
      add(operation, "503", unavailable.description);
      if (!operation.requestBody?.content?.["application/json"]) continue;
      for (const [status, response] of Object.entries(refusals)) {
        add(operation, status, response.description);
      }
    }
  }
  return document;
}

/** Cookie or bearer security requirement, for the OpenAPI document. */
export const signedIn: Record<string, string[]>[] = [{ bearer: [] }, { cookie: [] }];

/** No session needed (`security: []`): the operation answers anyone. */
export const anyone: Record<string, string[]>[] = [];

/**
 * Opaque keyset cursors: base64url of the UTF-8 JSON of the last row's sort key. (UTF-8 first:
 * `btoa` takes only Latin-1, and a sort key can be a name in any script.)
 */
export function encodeCursor(key: unknown[]): string {
  const bytes = new TextEncoder().encode(JSON.stringify(key));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

export function decodeCursor(cursor: string, shape: ("string" | "number")[]): unknown[] {
  try {
    const binary = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const text = new TextDecoder("utf-8", { fatal: true })
      .decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
    const key = JSON.parse(text);
    if (
      Array.isArray(key) && key.length === shape.length &&
      key.every((v, i) => typeof v === shape[i])
    ) return key;
  } catch {
    // fall through
  }
  throw badRequest("Invalid cursor.", [{ path: "cursor", message: "not a cursor from this list" }]);
}

/**
 * The cursor of a list ordered by (time, id), newest first: the previous page's last pair as
 * text, or null on the first page. 400 for anything else.
 */
export function timeIdCursor(cursor: string | undefined): [string, string] | null {
  return cursor ? decodeCursor(cursor, ["string", "string"]) as [string, string] : null;
}

/** A page of a list, as every list answers: `{ items, nextCursor }`. */
export const pageOf = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), nextCursor: z.string().nullable() });

export const limitParam = z.coerce.number().int().min(1).max(200).default(50);
