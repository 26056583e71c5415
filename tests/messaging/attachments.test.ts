/**
 * Attachments: uploads (size limit from the configuration, type allow-list, names), where the
 * bytes go (local disk under AGORA_STORAGE_DIR), who may download (uploader; participants once
 * attached; 404 for everyone else), attaching once by the uploader, and deletion with the message.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  createUser,
  expectError,
  expectJson,
  signInAs,
  test,
  type TestApp,
  testApp,
} from "../support/helpers.ts";
import { drain } from "../../functions/api/core/job-queue.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";

const storageDir = await Deno.makeTempDir({ prefix: "agora-attachments-" });
globalThis.addEventListener("unload", () => Deno.removeSync(storageDir, { recursive: true }));
const t = testApp({ AGORA_STORAGE_DIR: storageDir });
const alice = await signInAs(t, "SUBSCRIBER");
const bob = await signInAs(t, "SUBSCRIBER");
const carol = await signInAs(t, "SUBSCRIBER");
const visitor = await signInAs(t, "VISITOR");

const MULTIPART_OVERHEAD = 16 * 1024;

// --- helpers ----------------------------------------------------------------------------------

function bytesOf(size: number, seed = 7): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

function fileForm(bytes: Uint8Array<ArrayBuffer>, name: string, type: string): FormData {
  const form = new FormData();
  form.append("file", new File([bytes], name, { type }));
  return form;
}

async function upload(
  app: TestApp,
  token: string | undefined,
  bytes: Uint8Array<ArrayBuffer>,
  name = "note.txt",
  type = "text/plain",
  injectedFault = false,
): Promise<Response> {
  return await app.request("POST", "/api/attachments", {
    token,
    rawBody: fileForm(bytes, name, type),
    injectedFault,
  });
}

interface Uploaded {
  id: string;
  name: string;
  contentType: string;
  size: number;
}

async function uploaded(
  token: string,
  bytes: Uint8Array<ArrayBuffer>,
  name = "note.txt",
  type = "text/plain",
): Promise<Uploaded> {
  const response = await upload(t, token, bytes, name, type);
  return await expectJson(response, 201);
}

interface Part {
  field: string;
  filename?: string;
  type?: string;
  body: string;
}

/** A multipart body written by hand, for what FormData will not send. */
function multipart(parts: Part[], boundary = "agora-test-7d3f") {
  const lines = parts.map((p) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"${
      p.filename === undefined ? "" : `; filename="${p.filename}"`
    }\r\n${p.type === undefined ? "" : `Content-Type: ${p.type}\r\n`}\r\n${p.body}\r\n`
  );
  return {
    body: `${lines.join("")}--${boundary}--\r\n`,
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  };
}

async function storedFiles(userId: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(join(storageDir, userId))) names.push(entry.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return names.sort();
}

async function attachmentRows(userId: string): Promise<number> {
  const [{ count }] = await t.deps.sql<{ count: number }[]>`
    select count(*)::int from app.attachments where uploader_id = ${userId}`;
  return count;
}

async function storageKeyOf(id: string): Promise<string | undefined> {
  const [row] = await t.deps.sql<{ storage_key: string }[]>`
    select storage_key from app.attachments where id = ${id}`;
  return row?.storage_key;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Runs `fn` with `limits.attachmentMaxBytes` set in a new configuration version, then removes it. */
async function withUploadLimit(bytes: number, fn: () => Promise<void>): Promise<void> {
  const [{ version }] = await t.deps.sql<{ version: number }[]>`
    select coalesce(max(version), 0)::int as version from app.config_versions`;
  const [current] = await t.deps.sql<{ config: Record<string, Record<string, unknown>> }[]>`
    select config from app.config_versions where version = ${version}`;
  const config = current?.config ?? {};
  const changed = { ...config, limits: { ...(config.limits ?? {}), attachmentMaxBytes: bytes } };
  await t.deps.sql`insert into app.config_versions (version, config, reason) values (${
    version + 1
  }, ${t.deps.sql.json(changed)}, 'attachments test: upload limit')`;
  try {
    await fn();
  } finally {
    await t.deps.sql`delete from app.config_versions where version = ${version + 1}`;
  }
}

/** A request whose body is a stream; `pulled` counts the bytes the server took from it. */
function streamedUpload(opts: {
  token: string;
  total: number;
  chunk?: number;
  contentLength?: number;
}) {
  const chunkSize = opts.chunk ?? 64 * 1024;
  const head = new TextEncoder().encode(
    '--B\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n' +
      "Content-Type: text/plain\r\n\r\n",
  );
  const filler = new Uint8Array(chunkSize).fill(0x61);
  const state = { pulled: 0, pulls: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      state.pulls++;
      if (state.pulled >= opts.total) {
        controller.close();
        return;
      }
      const chunk = state.pulled === 0 ? head : filler;
      state.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 }); // pulled only when the server reads
  const headers: Record<string, string> = { "content-type": "multipart/form-data; boundary=B" };
  if (opts.contentLength !== undefined) headers["content-length"] = String(opts.contentLength);
  return {
    state,
    response: t.request("POST", "/api/attachments", { token: opts.token, headers, rawBody: body }),
  };
}

async function directConversationWith(token: string, otherUserId: string): Promise<string> {
  const response = await t.request("POST", "/api/conversations", {
    token,
    body: { type: "direct", participantIds: [otherUserId] },
  });
  return (await expectJson(response, [200, 201])).id;
}

async function send(
  token: string,
  conversationId: string,
  content: string,
  attachmentIds: string[],
): Promise<Response> {
  return await t.request("POST", `/api/conversations/${conversationId}/messages`, {
    token,
    body: { content, attachmentIds },
  });
}

async function messageCount(conversationId: string): Promise<number> {
  const [{ count }] = await t.deps.sql<{ count: number }[]>`
    select count(*)::int from app.messages where conversation_id = ${conversationId}`;
  return count;
}

// --- upload -----------------------------------------------------------------------------------

test("[attachments] an upload is 201 { id, name, contentType, size }; the bytes are on disk under the storage dir", async () => {
  const bytes = bytesOf(3000);
  const response = await upload(t, alice.accessToken, bytes, "report.pdf", "application/pdf");
  const body = await expectJson(response, 201);
  assert.deepEqual(Object.keys(body).sort(), ["contentType", "id", "name", "size"]);
  assert.match(body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(body.name, "report.pdf");
  assert.equal(body.contentType, "application/pdf");
  assert.equal(body.size, 3000);

  const [row] = await t.deps.sql`
    select uploader_id, name, content_type, size::int, storage_key, message_id, conversation_id
    from app.attachments where id = ${body.id}`;
  assert.equal(row.uploader_id, alice.user.id);
  assert.equal(row.message_id, null);
  assert.equal(row.conversation_id, null);
  assert.equal(row.size, 3000);
  assert.match(
    row.storage_key,
    new RegExp(`^${alice.user.id}/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`),
    "the key is made by the server: <uploader>/<uuid>, never the file's name",
  );
  const onDisk = await Deno.readFile(join(storageDir, row.storage_key));
  assert.deepEqual(onDisk, bytes);
});

test("[attachments] the content type is lowercased without parameters; names are reduced to a safe basename", async () => {
  const cases: [string, string][] = [
    ["../../etc/passwd.txt", "passwd.txt"],
    ["C:\\Users\\me\\notes.txt", "notes.txt"],
    ["bad\u0001name\u0007.txt", "badname.txt"],
    ["evil\u202etxt.exe.txt", "eviltxt.exe.txt"],
    ["..", "file"],
    ["dir/", "file"],
    ["   ", "file"],
    ["x".repeat(300) + ".txt", "x".repeat(251) + ".txt"],
  ];
  for (const [raw, expected] of cases) {
    const form = multipart([{
      field: "file",
      filename: raw,
      type: "Text/Plain; charset=UTF-8",
      body: "hello",
    }]);
    const response = await t.request("POST", "/api/attachments", {
      token: alice.accessToken,
      headers: form.headers,
      rawBody: form.body,
    });
    const body = await expectJson(response, 201);
    assert.equal(body.name, expected, JSON.stringify(raw));
    assert.equal(body.contentType, "text/plain");
    assert.ok(Array.from(body.name as string).length <= 255);
  }
});

test("[attachments] over the configured limit is 413 payload_too_large, and nothing is stored or inserted", async () => {
  const dave = await signInAs(t, "SUBSCRIBER");
  await withUploadLimit(1000, async () => {
    // The file itself is over the limit (the body fits within the multipart allowance).
    await expectError(await upload(t, dave.accessToken, bytesOf(1001)), 413, "payload_too_large");
    // The body is far over: refused while counting the stream.
    await expectError(
      await upload(t, dave.accessToken, bytesOf(200_000)),
      413,
      "payload_too_large",
    );
    assert.equal(await attachmentRows(dave.user.id), 0, "no row");
    assert.deepEqual(await storedFiles(dave.user.id), [], "no file");
    // Exactly at the limit is fine.
    const atLimit = await upload(t, dave.accessToken, bytesOf(1000));
    assert.equal(atLimit.status, 201, await atLimit.clone().text());
  });
  // The configuration is back to the default (10 MB): the same 200 kB file is accepted.
  const after = await upload(t, dave.accessToken, bytesOf(200_000));
  assert.equal(after.status, 201, await after.clone().text());
});

test("[attachments] a Content-Length over the limit is refused before any of the body is read", async () => {
  await withUploadLimit(1000, async () => {
    const { state, response } = streamedUpload({
      token: alice.accessToken,
      total: 50 * 1024 * 1024,
      contentLength: 50 * 1024 * 1024,
    });
    await expectError(await response, 413, "payload_too_large");
    assert.equal(state.pulled, 0, "not a byte was read");
  });
});

test("[attachments] a body without Content-Length is counted while read and never buffered whole", async () => {
  // Default limit (10 MB): a 64 MB stream is cut off just past limit + multipart allowance.
  const chunk = 64 * 1024;
  const { state, response } = streamedUpload({
    token: alice.accessToken,
    total: 64 * 1024 * 1024,
    chunk,
  });
  await expectError(await response, 413, "payload_too_large");
  assert.ok(
    state.pulled > 10_485_760 && state.pulled <= 10_485_760 + MULTIPART_OVERHEAD + 4 * chunk,
    `read ${state.pulled} bytes of 64 MB`,
  );
  await withUploadLimit(1000, async () => {
    const small = streamedUpload({ token: alice.accessToken, total: 8 * 1024 * 1024, chunk });
    await expectError(await small.response, 413, "payload_too_large");
    assert.ok(
      small.state.pulled > 1000 && small.state.pulled <= 1000 + MULTIPART_OVERHEAD + 4 * chunk,
      `read ${small.state.pulled} bytes`,
    );
  });
});

test("[attachments] a type that is not allowed is 415; so is a body that is not multipart/form-data", async () => {
  const erin = await signInAs(t, "SUBSCRIBER");
  await expectError(
    await upload(t, erin.accessToken, bytesOf(10), "page.html", "text/html"),
    415,
    "unsupported_media_type",
  );
  await expectError(
    await upload(t, erin.accessToken, bytesOf(10), "app.exe", "application/x-msdownload"),
    415,
    "unsupported_media_type",
  );
  const untyped = multipart([{ field: "file", filename: "blob.bin", body: "data" }]);
  await expectError(
    await t.request("POST", "/api/attachments", {
      token: erin.accessToken,
      headers: untyped.headers,
      rawBody: untyped.body,
    }),
    415,
    "unsupported_media_type",
  );
  const notMultipart: [Record<string, string>, string][] = [
    [{ "content-type": "application/json" }, JSON.stringify({ file: "aGVsbG8=" })],
    [{ "content-type": "text/plain" }, "hello"],
    [{ "content-type": "application/x-www-form-urlencoded" }, "file=hello"],
    [{}, "hello"],
  ];
  for (const [headers, rawBody] of notMultipart) {
    await expectError(
      await t.request("POST", "/api/attachments", { token: erin.accessToken, headers, rawBody }),
      415,
      "unsupported_media_type",
    );
  }
  assert.equal(await attachmentRows(erin.user.id), 0);
  assert.deepEqual(await storedFiles(erin.user.id), []);
});

test("[attachments] no `file` part, a text field, two files or a broken multipart body is 400", async () => {
  const frank = await signInAs(t, "SUBSCRIBER");
  const bodies = [
    multipart([{ field: "upload", filename: "a.txt", type: "text/plain", body: "a" }]),
    multipart([{ field: "file", body: "just text, not a file" }]),
    multipart([
      { field: "file", filename: "a.txt", type: "text/plain", body: "a" },
      { field: "file", filename: "b.txt", type: "text/plain", body: "b" },
    ]),
    multipart([]),
    { body: "--wrong\r\nnot multipart at all", headers: multipart([]).headers },
  ];
  for (const { body, headers } of bodies) {
    const error = await expectError(
      await t.request("POST", "/api/attachments", {
        token: frank.accessToken,
        headers,
        rawBody: body,
      }),
      400,
      "invalid_request",
    );
    assert.ok(error.error.message.length > 0);
  }
  assert.equal(await attachmentRows(frank.user.id), 0);
  assert.deepEqual(await storedFiles(frank.user.id), []);
});

test("[attachments] a VISITOR gets 403 and an anonymous caller 401, for uploads and downloads", async () => {
  const mine = await uploaded(alice.accessToken, bytesOf(10));
  await expectError(await upload(t, visitor.accessToken, bytesOf(10)), 403, "forbidden");
  await expectError(await upload(t, undefined, bytesOf(10)), 401, "unauthenticated");
  await expectError(
    await t.request("GET", `/api/attachments/${mine.id}`, { token: visitor.accessToken }),
    403,
    "forbidden",
  );
  await expectError(await t.request("GET", `/api/attachments/${mine.id}`), 401, "unauthenticated");
  assert.equal(await attachmentRows(visitor.user.id), 0);
  assert.deepEqual(await storedFiles(visitor.user.id), []);
});

test("[attachments] a cookie-authenticated upload without the CSRF token is refused and stores nothing", async () => {
  const grace = await signInAs(t, "SUBSCRIBER");
  const response = await t.request("POST", "/api/attachments", {
    cookies: { "agora-access-token": grace.accessToken },
    headers: { origin: "http://app.example.test" },
    rawBody: fileForm(bytesOf(10), "a.txt", "text/plain"),
  });
  await expectError(response, 403, "forbidden");
  assert.equal(await attachmentRows(grace.user.id), 0);
  assert.deepEqual(await storedFiles(grace.user.id), []);
});

test("[attachments] a failed insert removes the stored file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agora-attachments-fail-" });
  const other = testApp({ AGORA_STORAGE_DIR: dir });
  const henry = await signInAs(other, "SUBSCRIBER");
  const planted = await createUser(other.deps, "SUBSCRIBER");
  const original = other.deps.storage;
  const removed: string[][] = [];
  // After the file is stored, another row takes its key, so the route's insert fails (unique key).
  other.deps.storage = {
    async put(key, body, contentType) {
      await original.put(key, body, contentType);
      await other.deps.sql`
        insert into app.attachments (uploader_id, name, content_type, size, storage_key)
        values (${planted.id}, 'planted', 'text/plain', 0, ${key})`;
    },
    get: (key) => original.get(key),
    async remove(keys) {
      removed.push(keys);
      await original.remove(keys);
    },
  };
  try {
    // The planted row makes the insert fail (a fault of the test's storage, not in the document).
    const response = await upload(
      other,
      henry.accessToken,
      bytesOf(10),
      undefined,
      undefined,
      true,
    );
    assert.ok(response.status >= 400 && response.status < 500, `${response.status}`);
    await response.body?.cancel();
    assert.equal(removed.length, 1);
    assert.match(removed[0][0], new RegExp(`^${henry.user.id}/`));
    assert.equal(await exists(join(dir, removed[0][0])), false, "the file is gone");
    const [{ count }] = await other.deps.sql<{ count: number }[]>`
      select count(*)::int from app.attachments where uploader_id = ${henry.user.id}`;
    assert.equal(count, 0);
  } finally {
    other.deps.storage = original;
    await other.deps.sql`delete from app.attachments where uploader_id = ${planted.id}`;
    await Deno.remove(dir, { recursive: true });
  }
});

// --- download ---------------------------------------------------------------------------------

test("[attachments] the uploader downloads before attaching: bytes, type, length, disposition, nosniff, no caching", async () => {
  const bytes = bytesOf(5000, 3);
  const name = "résumé (final)'s.pdf";
  const file = await uploaded(alice.accessToken, bytes, name, "application/pdf");
  const response = await t.request("GET", `/api/attachments/${file.id}`, {
    token: alice.accessToken,
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/pdf");
  assert.equal(response.headers.get("content-length"), "5000");
  assert.equal(
    response.headers.get("content-disposition"),
    "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29%27s.pdf",
  );
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
  assert.equal(response.headers.get("cache-control"), "private, no-store");
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), bytes);

  const head = await t.request("HEAD", `/api/attachments/${file.id}`, { token: alice.accessToken });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-length"), "5000");
  assert.equal((await head.arrayBuffer()).byteLength, 0);
});

test("[attachments] before it is attached, nobody but the uploader sees a file: 404, as for an unknown id", async () => {
  const file = await uploaded(alice.accessToken, bytesOf(10));
  for (const token of [bob.accessToken, carol.accessToken]) {
    await expectError(
      await t.request("GET", `/api/attachments/${file.id}`, { token }),
      404,
      "not_found",
    );
  }
  await expectError(
    await t.request("GET", `/api/attachments/${crypto.randomUUID()}`, {
      token: alice.accessToken,
    }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("GET", "/api/attachments/not-a-uuid", { token: alice.accessToken }),
    400,
    "invalid_request",
  );
});

test("[attachments] a row whose file is missing from storage is 404", async () => {
  const file = await uploaded(alice.accessToken, bytesOf(10));
  await Deno.remove(join(storageDir, (await storageKeyOf(file.id))!));
  await expectError(
    await t.request("GET", `/api/attachments/${file.id}`, { token: alice.accessToken }),
    404,
    "not_found",
  );
});

test("[attachments] the OpenAPI document describes the upload (multipart) and the download", async () => {
  const doc = await expectJson(await t.request("GET", "/api/openapi.json"), 200);
  const post = doc.paths["/api/attachments"]?.post;
  assert.ok(post, "POST /api/attachments is documented");
  const schema = post.requestBody.content["multipart/form-data"].schema;
  assert.deepEqual(schema.required, ["file"]);
  assert.equal(schema.properties.file.format, "binary");
  for (const status of ["201", "400", "401", "403", "413", "415"]) {
    assert.ok(post.responses[status], `POST documents ${status}`);
  }
  const get = doc.paths["/api/attachments/{id}"]?.get;
  assert.ok(get, "GET /api/attachments/{id} is documented");
  assert.ok(get.responses["404"]);
});

// --- attached to messages ---------------------------------------------------------------------

test("[attachments] once attached, the other participant downloads it through the message's url; a non-participant gets 404", async () => {
  const bytes = bytesOf(4096, 11);
  const file = await uploaded(alice.accessToken, bytes, "photo.png", "image/png");
  const conversationId = await directConversationWith(alice.accessToken, bob.user.id);
  const sent = await send(alice.accessToken, conversationId, "look", [file.id]);
  const message = await expectJson(sent, 201);
  assert.deepEqual(message.attachments, [{
    id: file.id,
    name: "photo.png",
    contentType: "image/png",
    size: 4096,
    url: `/api/attachments/${file.id}`,
  }]);

  const downloaded = await t.request("GET", message.attachments[0].url, { token: bob.accessToken });
  assert.equal(downloaded.status, 200);
  assert.equal(downloaded.headers.get("content-type"), "image/png");
  assert.deepEqual(new Uint8Array(await downloaded.arrayBuffer()), bytes);

  // Carol is in no conversation with it: 404 for the file, as for the conversation itself.
  await expectError(
    await t.request("GET", message.attachments[0].url, { token: carol.accessToken }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("GET", `/api/conversations/${conversationId}/messages`, {
      token: carol.accessToken,
    }),
    404,
    "not_found",
  );
});

test("[attachments] a file is attached once: a second message with it fails and writes nothing", async () => {
  const file = await uploaded(alice.accessToken, bytesOf(10));
  const conversationId = await directConversationWith(alice.accessToken, bob.user.id);
  const first = await send(alice.accessToken, conversationId, "first", [file.id]);
  const firstId = (await expectJson(first, 201)).id;
  const before = await messageCount(conversationId);

  const again = await send(alice.accessToken, conversationId, "again", [file.id]);
  assert.ok([409, 422].includes(again.status), `${again.status} ${await again.clone().text()}`);
  await expectError(again, again.status);
  assert.equal(await messageCount(conversationId), before, "no second message");
  const [row] = await t.deps.sql`select message_id from app.attachments where id = ${file.id}`;
  assert.equal(row.message_id, firstId, "still on the first message");

  // Not in another conversation either.
  const other = await directConversationWith(alice.accessToken, carol.user.id);
  const moved = await send(alice.accessToken, other, "moved", [file.id]);
  assert.ok([409, 422].includes(moved.status), `${moved.status}`);
  await moved.body?.cancel();
  assert.equal(await messageCount(other), 0);
  await expectError(
    await t.request("GET", `/api/attachments/${file.id}`, { token: carol.accessToken }),
    404,
    "not_found",
  );
});

test("[attachments] a participant cannot attach someone else's upload (422), and nothing is written", async () => {
  const file = await uploaded(alice.accessToken, bytesOf(10));
  const conversationId = await directConversationWith(bob.accessToken, alice.user.id);
  const before = await messageCount(conversationId);
  await expectError(
    await send(bob.accessToken, conversationId, "mine now", [file.id]),
    422,
    "unprocessable",
  );
  assert.equal(await messageCount(conversationId), before);
  const [row] = await t.deps.sql`
    select message_id, conversation_id from app.attachments where id = ${file.id}`;
  assert.equal(row.message_id, null);
  assert.equal(row.conversation_id, null);
  await expectError(
    await t.request("GET", `/api/attachments/${file.id}`, { token: bob.accessToken }),
    404,
    "not_found",
  );
});

test("[attachments] deleting the message removes the attachment row and its file", async () => {
  const file = await uploaded(alice.accessToken, bytesOf(100));
  const key = (await storageKeyOf(file.id))!;
  assert.ok(await exists(join(storageDir, key)));
  const conversationId = await directConversationWith(alice.accessToken, bob.user.id);
  const sent = await send(alice.accessToken, conversationId, "soon gone", [file.id]);
  const message = await expectJson(sent, 201);

  const deleted = await t.request("DELETE", `/api/messages/${message.id}`, {
    token: alice.accessToken,
  });
  assert.equal(deleted.status, 200, await deleted.clone().text());
  assert.equal(await storageKeyOf(file.id), undefined, "the row is gone");
  // Its file is a storage.delete job now, removed by the queue's next drain.
  assert.ok(await exists(join(storageDir, key)), "the file waits for the drain");
  await drain(t.deps, { registry: appJobs() });
  assert.equal(await exists(join(storageDir, key)), false, "the file is gone");
  for (const token of [alice.accessToken, bob.accessToken]) {
    await expectError(
      await t.request("GET", `/api/attachments/${file.id}`, { token }),
      404,
      "not_found",
    );
  }
  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conversationId}/messages`, {
      token: bob.accessToken,
    }),
    200,
  );
  const tombstone = page.items.find((m: { id: string }) => m.id === message.id);
  assert.deepEqual(tombstone.attachments, []);
});

test("[attachments] the conversation list's preview counts the newest message's files, cuts its text at 280 characters, and shows a tombstone empty", async () => {
  const files = [
    await uploaded(alice.accessToken, bytesOf(10)),
    await uploaded(alice.accessToken, bytesOf(20)),
  ];
  const conversationId = await directConversationWith(alice.accessToken, bob.user.id);
  const long = "ä".repeat(300);
  const message = await expectJson(
    await send(alice.accessToken, conversationId, long, files.map((f) => f.id)),
    201,
  );
  const preview = async () => {
    const list = await expectJson(
      await t.request("GET", "/api/conversations", { token: bob.accessToken }),
      200,
    );
    return list.items.find((c: { id: string }) => c.id === conversationId).lastMessage;
  };
  assert.deepEqual(await preview(), {
    id: message.id,
    senderId: alice.user.id,
    content: "ä".repeat(280),
    attachmentCount: 2,
    createdAt: message.createdAt,
    deletedAt: null,
  });
  const deleted = await t.request("DELETE", `/api/messages/${message.id}`, {
    token: alice.accessToken,
  });
  assert.equal(deleted.status, 200, await deleted.clone().text());
  const gone = await preview();
  assert.equal(gone.id, message.id);
  assert.equal(gone.content, "");
  assert.equal(gone.attachmentCount, 0);
  assert.match(gone.deletedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
});
