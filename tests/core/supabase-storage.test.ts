/**
 * The Supabase Storage client against a local stand-in that answers like the Storage API for the
 * three calls it makes: errors come as HTTP 400 with the real status in the JSON body
 * (`{ statusCode: "404", code: "NoSuchKey", error: "not_found", message: "Object not found" }`),
 * a bad bearer is `statusCode "403"` AccessDenied, a missing `apikey` is the gateway's 401.
 */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { supabaseStorage, SupabaseStorageError } from "../../functions/_shared/supabase-storage.ts";
import { createStorage } from "../../functions/_shared/storage-factory.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";

const SERVICE_KEY = `service-role-${crypto.randomUUID()}`;
const BUCKET = "attachments";

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: unknown;
}

const standIn = {
  objects: new Map<string, { bytes: Uint8Array; type: string }>(),
  buckets: new Set([BUCKET]),
  seen: [] as Seen[],
  /** Older servers: no `code` in the body. */
  legacyErrors: false,
};

function storageError(statusCode: string, code: string, error: string, message: string) {
  const body = standIn.legacyErrors ? { statusCode, error, message } : {
    statusCode,
    code,
    error,
    message,
  };
  return Response.json(body, { status: 400 });
}

async function handle(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const seen: Seen = {
    method: request.method,
    path: url.pathname,
    headers: Object.fromEntries(request.headers),
  };
  standIn.seen.push(seen);
  const prefix = "/storage/v1/object/";
  const routeNotFound = () =>
    Response.json({
      statusCode: "404",
      code: "InvalidRequest",
      error: "Not Found",
      message: `Route ${request.method}:${url.pathname} not found`,
    }, { status: 404 });
  if (!url.pathname.startsWith(prefix)) return routeNotFound();
  // The gateway in front of Storage wants an API key.
  const apikey = request.headers.get("apikey");
  if (!apikey) return Response.json({ message: "No API key found in request" }, { status: 401 });
  if (apikey !== SERVICE_KEY) return Response.json({ message: "Invalid API key" }, { status: 401 });
  if (request.headers.get("authorization") !== `Bearer ${SERVICE_KEY}`) {
    return storageError("403", "AccessDenied", "Unauthorized", "invalid signature");
  }
  const segments = url.pathname.slice(prefix.length).split("/").map(decodeURIComponent);
  const authenticated = segments[0] === "authenticated";
  const [bucket, ...rest] = authenticated ? segments.slice(1) : segments;
  const key = rest.join("/");
  if (!standIn.buckets.has(bucket)) {
    return storageError("404", "NoSuchBucket", "Bucket not found", "Bucket not found");
  }
  const id = `${bucket}/${key}`;
  if (request.method === "POST" && !authenticated && key) {
    if (standIn.objects.has(id) && request.headers.get("x-upsert") !== "true") {
      return storageError("409", "KeyAlreadyExists", "Duplicate", "The resource already exists");
    }
    standIn.objects.set(id, {
      bytes: new Uint8Array(await request.arrayBuffer()),
      type: request.headers.get("content-type") ?? "application/octet-stream",
    });
    return Response.json({ Id: crypto.randomUUID(), Key: id });
  }
  if (request.method === "GET" && authenticated && key) {
    const object = standIn.objects.get(id);
    if (!object) return storageError("404", "NoSuchKey", "not_found", "Object not found");
    return new Response(object.bytes as Uint8Array<ArrayBuffer>, {
      headers: {
        "content-type": object.type,
        "content-length": String(object.bytes.byteLength),
      },
    });
  }
  if (request.method === "DELETE" && !authenticated && !key) {
    const body = await request.json().catch(() => null) as { prefixes?: unknown } | null;
    seen.body = body;
    if (
      !body || !Array.isArray(body.prefixes) || body.prefixes.length === 0 ||
      !body.prefixes.every((p) => typeof p === "string")
    ) {
      return storageError("400", "InvalidRequest", "InvalidRequest", "body/prefixes is required");
    }
    const deleted = [];
    for (const prefix of body.prefixes as string[]) {
      if (standIn.objects.delete(`${bucket}/${prefix}`)) {
        deleted.push({ name: prefix, bucket_id: bucket });
      }
    }
    return Response.json(deleted);
  }
  return routeNotFound();
}

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handle);
// The stand-in never keeps the test process alive.
server.unref();
const BASE = `http://127.0.0.1:${server.addr.port}`;

const storage = supabaseStorage({ url: `${BASE}/`, serviceRoleKey: SERVICE_KEY, bucket: BUCKET });
const bytes = (text: string) => new TextEncoder().encode(text);

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function baseSettingsEnv(extra: Record<string, string>) {
  return {
    AGORA_DB_URL: "postgres://nobody@127.0.0.1:1/none",
    AGORA_JWT_SECRET: "j".repeat(32),
    AGORA_CSRF_SECRET: "c".repeat(32),
    AGORA_REFRESH_SECRET: "r".repeat(32),
    AGORA_WALLET_MASTER_KEY: "w".repeat(43),
    ...extra,
  };
}

test("[supabase-storage] put then get gives the same bytes, type and size; the calls carry the right headers", async () => {
  standIn.seen.length = 0;
  const key = `${crypto.randomUUID()}/${crypto.randomUUID()}`;
  await storage.put(key, bytes("hello storage"), "text/plain");
  const upload = standIn.seen[0];
  assert.equal(upload.method, "POST");
  assert.equal(upload.path, `/storage/v1/object/${BUCKET}/${key}`);
  assert.equal(upload.headers["authorization"], `Bearer ${SERVICE_KEY}`);
  assert.equal(upload.headers["apikey"], SERVICE_KEY);
  assert.equal(upload.headers["x-upsert"], "false");
  assert.equal(upload.headers["content-type"], "text/plain");

  const file = await storage.get(key);
  assert.ok(file);
  assert.equal(file.size, 13);
  assert.deepEqual(await readAll(file.body), bytes("hello storage"));
  const download = standIn.seen[1];
  assert.equal(download.method, "GET");
  assert.equal(download.path, `/storage/v1/object/authenticated/${BUCKET}/${key}`);
  assert.equal(download.headers["apikey"], SERVICE_KEY);
});

test("[supabase-storage] a missing object is null, in the current and the older error shape", async () => {
  assert.equal(await storage.get(`${crypto.randomUUID()}/missing`), null);
  standIn.legacyErrors = true;
  try {
    assert.equal(await storage.get(`${crypto.randomUUID()}/missing`), null);
  } finally {
    standIn.legacyErrors = false;
  }
});

test("[supabase-storage] remove deletes in one call per 1000 keys; missing keys are not an error; none, no call", async () => {
  const a = `${crypto.randomUUID()}/a`;
  const b = `${crypto.randomUUID()}/b`;
  await storage.put(a, bytes("a"), "text/plain");
  await storage.put(b, bytes("b"), "text/plain");
  standIn.seen.length = 0;
  await storage.remove([a, `${crypto.randomUUID()}/never-stored`]);
  assert.equal(standIn.seen.length, 1);
  assert.equal(standIn.seen[0].method, "DELETE");
  assert.equal(standIn.seen[0].path, `/storage/v1/object/${BUCKET}`);
  assert.equal(standIn.seen[0].headers["content-type"], "application/json");
  assert.deepEqual((standIn.seen[0].body as { prefixes: string[] }).prefixes.length, 2);
  assert.equal(await storage.get(a), null);
  assert.ok(await storage.get(b), "the other file stays");

  standIn.seen.length = 0;
  await storage.remove([]);
  assert.equal(standIn.seen.length, 0);

  const many = Array.from({ length: 1001 }, (_, i) => `${crypto.randomUUID()}/${i}`);
  await storage.remove(many);
  assert.deepEqual(
    standIn.seen.map((s) => (s.body as { prefixes: string[] }).prefixes.length),
    [1000, 1],
  );
});

test("[supabase-storage] a refused key throws (never mistaken for a missing file) without showing the key", async () => {
  const key = `${crypto.randomUUID()}/x`;
  await storage.put(key, bytes("x"), "text/plain");
  const wrongBearer = supabaseStorage({
    url: BASE,
    serviceRoleKey: SERVICE_KEY,
    bucket: BUCKET,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set("authorization", "Bearer not-the-key");
      return fetch(input, { ...init, headers });
    },
  });
  await assert.rejects(wrongBearer.get(key), (err: unknown) => {
    assert.ok(err instanceof SupabaseStorageError);
    assert.equal(err.status, 400);
    assert.match(err.message, /403/);
    assert.match(err.message, /AccessDenied/);
    return true;
  });
  const wrongKey = supabaseStorage({ url: BASE, serviceRoleKey: "wrong-key", bucket: BUCKET });
  for (
    const call of [
      () => wrongKey.put(`${crypto.randomUUID()}/y`, bytes("y"), "text/plain"),
      () => wrongKey.get(key),
      () => wrongKey.remove([key]),
    ]
  ) {
    await assert.rejects(call(), (err: unknown) => {
      assert.ok(err instanceof SupabaseStorageError);
      assert.equal(err.status, 401);
      assert.ok(!err.message.includes("wrong-key"), "the key is not in the message");
      return true;
    });
  }
  assert.ok(await storage.get(key), "nothing was removed");
});

test("[supabase-storage] a missing bucket throws; an existing key is not overwritten (x-upsert false)", async () => {
  const noBucket = supabaseStorage({ url: BASE, serviceRoleKey: SERVICE_KEY, bucket: "nope" });
  await assert.rejects(noBucket.get(`${crypto.randomUUID()}/x`), /NoSuchBucket/);
  await assert.rejects(noBucket.put(`${crypto.randomUUID()}/x`, bytes("x"), "text/plain"), /404/);

  const key = `${crypto.randomUUID()}/once`;
  await storage.put(key, bytes("first"), "text/plain");
  await assert.rejects(storage.put(key, bytes("second"), "text/plain"), (err: unknown) => {
    assert.ok(err instanceof SupabaseStorageError);
    assert.match(err.message, /409/);
    return true;
  });
  const file = await storage.get(key);
  assert.deepEqual(await readAll(file!.body), bytes("first"));
});

test("[supabase-storage] unsafe keys are refused before any request", async () => {
  standIn.seen.length = 0;
  for (const key of ["../etc/passwd", "/abs", "a/../b", "a b", ""]) {
    await assert.rejects(storage.put(key, bytes("x"), "text/plain"), /unsafe storage key/);
    await assert.rejects(storage.get(key), /unsafe storage key/);
  }
  await assert.rejects(storage.remove(["ok/key", "../x"]), /unsafe storage key/);
  assert.equal(standIn.seen.length, 0);
});

test("[supabase-storage] AGORA_STORAGE=supabase needs SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY", async () => {
  assert.throws(
    () => createStorage(loadSettings(baseSettingsEnv({ AGORA_STORAGE: "supabase" }))),
    /SUPABASE_URL and SUPABASE_SERVICE_ROLE_KEY/,
  );
  assert.throws(
    () =>
      createStorage(
        loadSettings(baseSettingsEnv({ AGORA_STORAGE: "supabase", SUPABASE_URL: BASE })),
      ),
    /SUPABASE_SERVICE_ROLE_KEY/,
  );
  assert.throws(
    () =>
      createStorage(loadSettings(baseSettingsEnv({
        AGORA_STORAGE: "supabase",
        SUPABASE_URL: "not a url",
        SUPABASE_SERVICE_ROLE_KEY: SERVICE_KEY,
      }))),
    /SUPABASE_URL/,
  );
  const configured = createStorage(loadSettings(baseSettingsEnv({
    AGORA_STORAGE: "supabase",
    SUPABASE_URL: BASE,
    SUPABASE_SERVICE_ROLE_KEY: SERVICE_KEY,
    AGORA_STORAGE_BUCKET: BUCKET,
  })));
  const key = `${crypto.randomUUID()}/factory`;
  await configured.put(key, bytes("via settings"), "text/plain");
  assert.ok(standIn.objects.has(`${BUCKET}/${key}`));
});

test("[supabase-storage] the API with AGORA_STORAGE=supabase stores uploads in the bucket and serves them back", async () => {
  const t = testApp({
    AGORA_STORAGE: "supabase",
    SUPABASE_URL: BASE,
    SUPABASE_SERVICE_ROLE_KEY: SERVICE_KEY,
    AGORA_STORAGE_BUCKET: BUCKET,
  });
  const user = await signInAs(t, "SUBSCRIBER");
  const form = new FormData();
  form.append("file", new File([bytes("%PDF-1.7 test")], "doc.pdf", { type: "application/pdf" }));
  const uploaded = await t.request("POST", "/api/attachments", {
    token: user.accessToken,
    rawBody: form,
  });
  const { id } = await expectJson(uploaded, 201);
  const [{ storage_key: key }] = await t.deps.sql<{ storage_key: string }[]>`
    select storage_key from app.attachments where id = ${id}`;
  const stored = standIn.objects.get(`${BUCKET}/${key}`);
  assert.ok(stored, "the object is in the bucket");
  assert.equal(stored.type, "application/pdf");

  const downloaded = await t.request("GET", `/api/attachments/${id}`, { token: user.accessToken });
  assert.equal(downloaded.status, 200);
  assert.equal(downloaded.headers.get("content-length"), "13");
  assert.deepEqual(new Uint8Array(await downloaded.arrayBuffer()), bytes("%PDF-1.7 test"));

  standIn.objects.delete(`${BUCKET}/${key}`);
  const gone = await t.request("GET", `/api/attachments/${id}`, { token: user.accessToken });
  assert.equal((await expectJson(gone, 404)).error.code, "not_found");
});
