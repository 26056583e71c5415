/**
 * /api/attachments: uploads and downloads. SUBSCRIBER and above (the gate below). Queries:
 * messaging/attachments.queries.ts.
 *
 * An upload is stored under a server-made key, then recorded as the uploader's row (RLS decides);
 * it is attached later, once, by its uploader's message (POST /api/conversations/:id/messages).
 * A download is served to whoever RLS lets see the row: the uploader, or the participants of the
 * conversation it is attached in; everyone else gets 404.
 *
 * The size limit is `limits.attachmentMaxBytes` of the current configuration. The body is never
 * read whole before it is counted: a Content-Length above the limit (plus room for the multipart
 * framing) is refused before reading, and the stream itself is counted while it is parsed.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { errors, errorSchema, json, router, signedIn } from "../core/openapi.ts";
import { ApiError, badRequest, notFound } from "../../_shared/errors.ts";
import { asUser } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { attachmentMaxBytes, findAttachment, insertAttachment } from "./attachments.queries.ts";

export const attachments = router();

attachments.use("*", requireRole("SUBSCRIBER"));

/** Room for the multipart framing around the file: boundaries, part headers, a long name. */
export const MULTIPART_OVERHEAD_BYTES = 16 * 1024;
const MAX_NAME_LENGTH = 255;

const attachmentSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  contentType: z.string(),
  size: z.number().int(),
}).openapi("Attachment");

function tooLarge(limit: number): ApiError {
  return new ApiError("payload_too_large", `A file has at most ${limit} bytes.`, { limit });
}

/** `type/subtype`, lowercased, without parameters ("Text/Plain; charset=utf-8" → "text/plain"). */
export function essence(contentType: string): string {
  return contentType.split(";")[0].trim().toLowerCase();
}

// Bidirectional overrides and isolates: they make "evil‮txt.exe" look like "evilexe.txt".
const BIDI_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// deno-lint-ignore no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * The name a file is shown and downloaded with: the last path segment (either slash), without
 * control characters, at most 255 characters (the extension kept when it is short), or "file".
 */
export function sanitizeName(raw: string): string {
  const base = raw.toWellFormed().split(/[/\\]/).pop() ?? "";
  const cleaned = base.replace(CONTROL_CHARACTERS, "").replace(BIDI_CONTROLS, "").trim();
  if (!cleaned || cleaned === "." || cleaned === "..") return "file";
  const chars = Array.from(cleaned);
  if (chars.length <= MAX_NAME_LENGTH) return cleaned;
  const dot = cleaned.lastIndexOf(".");
  const extension = dot > 0 ? Array.from(cleaned.slice(dot)) : [];
  if (extension.length > 1 && extension.length <= 16) {
    const stem = Array.from(cleaned.slice(0, dot)).slice(0, MAX_NAME_LENGTH - extension.length);
    return (stem.join("").trimEnd() || "file") + extension.join("");
  }
  return chars.slice(0, MAX_NAME_LENGTH).join("").trimEnd();
}

/** RFC 8187 `filename*` value: UTF-8, percent-encoded outside attr-char. */
function encodeFilename(name: string): string {
  return encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Parses a multipart body while counting it: past `maxBytes` the stream is cancelled and the
 * upload refused, so at most `maxBytes` (and one chunk) are ever held.
 */
async function readForm(
  body: ReadableStream<Uint8Array>,
  contentType: string,
  maxBytes: number,
  limit: number,
): Promise<FormData> {
  let seen = 0;
  let overflow = false;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) {
          overflow = true;
          controller.error(new Error("upload over the limit"));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  try {
    return await new Response(counted, { headers: { "content-type": contentType } }).formData();
  } catch {
    if (overflow) throw tooLarge(limit);
    throw badRequest("The body is not valid multipart/form-data.");
  }
}

attachments.openapi(
  createRoute({
    method: "post",
    path: "/",
    operationId: "uploadAttachment",
    summary: "Upload a file",
    description: "multipart/form-data with one part `file`. The file is the caller's until one " +
      "of their messages attaches it (`attachmentIds`), once. Its size is limited by the " +
      "configuration (`limits.attachmentMaxBytes`, default 10 MB: 413 above it) and its type " +
      "by the server's allow-list (AGORA_ATTACHMENT_TYPES: 415 otherwise; a body that is not " +
      "multipart/form-data is 415 too). The name is reduced to its last path segment without " +
      "control characters, at most 255 characters.",
    security: signedIn,
    request: {
      body: {
        required: true,
        content: {
          "multipart/form-data": {
            schema: {
              type: "object",
              required: ["file"],
              properties: {
                file: {
                  type: "string",
                  format: "binary",
                  description: "The file, with its file name and content type",
                },
              },
            },
          },
        },
      },
    },
    responses: {
      201: json(attachmentSchema, "Stored; not attached yet"),
      ...errors(400, 401, 403, 413),
      415: json(errorSchema, "Not multipart/form-data, or a content type that is not allowed"),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const user = c.get("user")!;
    const body = c.req.raw.body;
    const contentType = c.req.header("content-type") ?? "";
    if (essence(contentType) !== "multipart/form-data") {
      await body?.cancel().catch(() => {});
      throw new ApiError(
        "unsupported_media_type",
        "Upload the file as multipart/form-data with a part named `file`.",
      );
    }
    const limit = await asUser(c, (tx) => attachmentMaxBytes(tx));
    const maxBody = limit + MULTIPART_OVERHEAD_BYTES;
    const declared = Number(c.req.header("content-length"));
    if (Number.isFinite(declared) && declared > maxBody) {
      await body?.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    if (!body) throw badRequest("The body is empty.", [{ path: "file", message: "required" }]);

    const form = await readForm(body, contentType, maxBody, limit);
    const parts = form.getAll("file");
    const file = parts[0];
    if (parts.length !== 1 || !(file instanceof File)) {
      throw badRequest("Send exactly one file in the part `file`.", [{
        path: "file",
        message: parts.length > 1 ? "only one file" : "a file is required",
      }]);
    }
    const type = essence(file.type);
    if (!deps.settings.attachmentTypes.includes(type)) {
      throw new ApiError(
        "unsupported_media_type",
        `Files of type ${type.slice(0, 100) || "(none)"} are not accepted.`,
        { allowed: deps.settings.attachmentTypes },
      );
    }
    if (file.size > limit) throw tooLarge(limit);

    const name = sanitizeName(file.name);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const key = `${user.id}/${crypto.randomUUID()}`;
    await deps.storage.put(key, bytes, type);
    let id: string;
    try {
      id = await asUser(c, (tx) =>
        insertAttachment(tx, {
          uploaderId: user.id,
          name,
          contentType: type,
          size: bytes.byteLength,
          storageKey: key,
        }));
    } catch (err) {
      // No row points to the file: remove it, and report the insert's failure.
      await deps.storage.remove([key]).catch((removeErr) =>
        deps.log("error", "orphan attachment file not removed", {
          requestId: c.get("requestId"),
          error: String(removeErr),
        })
      );
      throw err;
    }
    return c.json({ id, name, contentType: type, size: bytes.byteLength }, 201);
  },
);

attachments.openapi(
  createRoute({
    method: "get",
    path: "/{id}",
    operationId: "downloadAttachment",
    summary: "Download a file",
    description: "For its uploader, and for the participants of the conversation it is " +
      "attached in; 404 for everyone else. Served as a download (`Content-Disposition: " +
      "attachment`), never cached by shared caches.",
    security: signedIn,
    request: { params: z.object({ id: z.uuid() }) },
    responses: {
      200: {
        description: "The file, served with the content type it was uploaded with (one of " +
          "AGORA_ATTACHMENT_TYPES)",
        content: { "*/*": { schema: { type: "string", format: "binary" } } },
      },
      ...errors(400, 401, 403, 404),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const deps = c.get("deps");
    const row = await asUser(c, (tx) => findAttachment(tx, id));
    if (!row) throw notFound("Attachment not found.");
    const file = await deps.storage.get(row.storage_key);
    if (!file) {
      deps.log("warn", "attachment file missing from storage", {
        requestId: c.get("requestId"),
        attachmentId: id,
      });
      throw notFound("Attachment not found.");
    }
    const headers = {
      "Content-Type": row.content_type,
      "Content-Length": String(file.size),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeFilename(row.name)}`,
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "default-src 'none'; sandbox",
      "Cache-Control": "private, no-store",
    };
    if (c.req.method === "HEAD") {
      // Hono answers HEAD with the GET route and drops the body: close the file here.
      await file.body.cancel();
      return c.body(null, 200, headers);
    }
    return c.body(file.body, 200, headers);
  },
);
