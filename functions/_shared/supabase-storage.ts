/**
 * Attachment files in Supabase Storage, over its REST API with the service role key (the API
 * decides who may read a file; the bucket stays private and is never reached by clients).
 *
 *   put     POST   {url}/storage/v1/object/{bucket}/{key}                (x-upsert: false)
 *   get     GET    {url}/storage/v1/object/authenticated/{bucket}/{key}
 *   remove  DELETE {url}/storage/v1/object/{bucket}   { "prefixes": [keys] }
 *
 * The Storage API reports most errors with HTTP 400 and the meaningful status in the body:
 * `{ "statusCode": "404", "code": "NoSuchKey", "error": "not_found", "message": "Object not
 * found" }`. A missing object is null here; every other failure (a missing bucket, a refused key)
 * throws, so a misconfiguration is loud.
 */
import type { Storage } from "./storage.ts";

export interface SupabaseStorageOptions {
  /** The project URL, e.g. https://<ref>.supabase.co (SUPABASE_URL). */
  url: string;
  /** The service role key (SUPABASE_SERVICE_ROLE_KEY): sent as `apikey` and as the bearer. */
  serviceRoleKey: string;
  bucket: string;
  /** How long to wait for the Storage API to answer (not for a download's body). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** The Storage API's error body (older servers omit `code`). */
interface StorageErrorBody {
  statusCode?: string;
  code?: string;
  error?: string;
  message?: string;
}

/** Up to this many keys per delete request (the Storage API's default limit). */
const DELETE_BATCH = 1000;
const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9/_.-]{0,300}$/;

export class SupabaseStorageError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly body: StorageErrorBody | null,
  ) {
    const detail = body
      ? [body.statusCode, body.code ?? body.error, body.message].filter(Boolean).join(" ")
      : "";
    super(`Supabase Storage ${operation} failed: HTTP ${status}${detail ? ` (${detail})` : ""}`);
    this.name = "SupabaseStorageError";
  }
}

function objectPath(key: string): string {
  if (!SAFE_KEY.test(key) || key.includes("..")) throw new Error(`unsafe storage key: ${key}`);
  return key.split("/").map(encodeURIComponent).join("/");
}

async function errorBody(response: Response): Promise<StorageErrorBody | null> {
  const text = await response.text().catch(() => "");
  try {
    const parsed = JSON.parse(text);
    return parsed && typeof parsed === "object" ? parsed as StorageErrorBody : null;
  } catch {
    return text ? { message: text.slice(0, 200) } : null;
  }
}

/** Object not found: HTTP 400 (or 404) with statusCode "404" and NoSuchKey / "not_found". */
function isMissingObject(status: number, body: StorageErrorBody | null): boolean {
  if (status !== 400 && status !== 404) return false;
  if (!body) return false;
  if (body.code === "NoSuchKey") return true;
  return body.code === undefined && body.statusCode === "404" && body.error === "not_found";
}

export function supabaseStorage(options: SupabaseStorageOptions): Storage {
  const base = `${options.url.replace(/\/+$/, "")}/storage/v1/object`;
  const bucket = encodeURIComponent(options.bucket);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const doFetch = options.fetch ?? fetch;
  const auth = {
    authorization: `Bearer ${options.serviceRoleKey}`,
    apikey: options.serviceRoleKey,
  };

  /** A request whose headers must arrive within the timeout; the body may take longer. */
  async function call(url: string, init: RequestInit): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new Error(`Supabase Storage did not answer in ${timeoutMs} ms`)),
      timeoutMs,
    );
    try {
      return await doFetch(url, { ...init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async put(key, body, contentType) {
      const response = await call(`${base}/${bucket}/${objectPath(key)}`, {
        method: "POST",
        headers: { ...auth, "content-type": contentType, "x-upsert": "false" },
        body: body as Uint8Array<ArrayBuffer>,
      });
      if (!response.ok) {
        throw new SupabaseStorageError("upload", response.status, await errorBody(response));
      }
      await response.body?.cancel();
    },

    async get(key) {
      const response = await call(`${base}/authenticated/${bucket}/${objectPath(key)}`, {
        method: "GET",
        // The bytes as stored: a compressed answer would not match its Content-Length once
        // fetch has decompressed it.
        headers: { ...auth, "accept-encoding": "identity" },
      });
      if (!response.ok) {
        const body = await errorBody(response);
        if (isMissingObject(response.status, body)) return null;
        throw new SupabaseStorageError("download", response.status, body);
      }
      const announced = response.headers.get("content-length");
      const length = announced === null ? NaN : Number(announced);
      const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
      if (response.body && !encoded && Number.isSafeInteger(length) && length >= 0) {
        return { body: response.body, size: length };
      }
      // No usable length (chunked, or decoded by fetch): read it to know its size.
      const bytes = new Uint8Array(await response.arrayBuffer());
      return {
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes);
            controller.close();
          },
        }),
        size: bytes.byteLength,
      };
    },

    async remove(keys) {
      const paths = keys.map((key) => {
        objectPath(key);
        return key;
      });
      for (let i = 0; i < paths.length; i += DELETE_BATCH) {
        const response = await call(`${base}/${bucket}`, {
          method: "DELETE",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ prefixes: paths.slice(i, i + DELETE_BATCH) }),
        });
        // Keys that do not exist are simply absent from the answer (200).
        if (!response.ok) {
          throw new SupabaseStorageError("delete", response.status, await errorBody(response));
        }
        await response.body?.cancel();
      }
    },
  };
}
