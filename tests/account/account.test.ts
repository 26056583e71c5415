/**
 * The account: GET /api/account/export (every part of the contract, the caller's data only, no
 * secret anywhere in it) and DELETE /api/account (a fresh sign-in, every session ends at once,
 * personal data erased, messages kept as tombstones for the others, files removed, the last ADMIN
 * kept, the address free for a new account).
 */
import assert from "node:assert/strict";
import {
  createUser,
  expectError,
  expectJson,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { drain } from "../../functions/api/core/job-queue.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { startStackServer } from "../../stack/server.ts";
import { openSse } from "../realtime/sse-client.ts";

const dir = await Deno.makeTempDir({ prefix: "agora-account-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const t = testApp({ AGORA_STORAGE_DIR: dir, AGORA_SSE_HEARTBEAT_MS: "300" });
const server = startStackServer(t.deps, { port: 0 });
const base = `http://127.0.0.1:${server.port}`;

const CONTRACT_KEYS = [
  "exportedAt",
  "profile",
  "identities",
  "sessions",
  "conversations",
  "messages",
  "notifications",
  "preferences",
  "orders",
  "vendor",
  "wallet",
];

async function upload(token: string, name: string) {
  const form = new FormData();
  form.append("file", new File([new TextEncoder().encode(name)], name, { type: "text/plain" }));
  const response = await t.app.request("http://localhost:54321/api/attachments", {
    method: "POST",
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  return (await expectJson(response, 201)).id as string;
}

async function conversation(a: SignedIn, b: SignedIn, type: "direct" | "group" = "direct") {
  const response = await t.request("POST", "/api/conversations", {
    token: a.accessToken,
    body: type === "direct"
      ? { type, participantIds: [b.user.id] }
      : { type, participantIds: [b.user.id], title: "Group" },
  });
  return (await expectJson(response, [200, 201])).id as string;
}

async function send(
  s: SignedIn,
  conversationId: string,
  content: string,
  attachmentIds?: string[],
) {
  return await expectJson(
    await t.request("POST", `/api/conversations/${conversationId}/messages`, {
      token: s.accessToken,
      body: { content, attachmentIds },
    }),
    201,
  );
}

/** Polls `check` for up to five seconds. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await check();
}

const exists = (key: string) => Deno.stat(`${dir}/${key}`).then(() => true, () => false);

/** Every string anywhere in a JSON value, and every key. */
function walk(
  value: unknown,
  out: { keys: string[]; strings: string[] } = { keys: [], strings: [] },
) {
  if (typeof value === "string") out.strings.push(value);
  else if (Array.isArray(value)) value.forEach((v) => walk(v, out));
  else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.keys.push(k);
      walk(v, out);
    }
  }
  return out;
}

// --- export ----------------------------------------------------------------------------------------

test("[account] the export holds every part of the contract and the caller's data, messages in left conversations included", async () => {
  const me = await signInAs(t, "MEMBER");
  const other = await signInAs(t, "MEMBER");
  const direct = await conversation(me, other);
  const fileId = await upload(me.accessToken, "notes.txt");
  const written = await send(me, direct, "hello there", [fileId]);
  await expectJson(
    await t.request("PUT", `/api/messages/${written.id}`, {
      token: me.accessToken,
      body: { content: "hello there, edited" },
    }),
    200,
  );
  await send(other, direct, "a reply from someone else");
  const group = await conversation(other, me, "group");
  await send(me, group, "said before leaving");
  await expectJson(
    await t.request("DELETE", `/api/conversations/${group}/participants/${me.user.id}`, {
      token: me.accessToken,
    }),
    200,
  );

  const response = await t.request("GET", "/api/account/export", { token: me.accessToken });
  const doc = await expectJson(response, 200);
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.match(
    response.headers.get("content-disposition") ?? "",
    /^attachment; filename="account-export-/,
  );
  assert.deepEqual(Object.keys(doc).sort(), [...CONTRACT_KEYS].sort());
  assert.equal(doc.profile.id, me.user.id);
  assert.equal(doc.profile.email, me.user.email);
  assert.deepEqual(doc.identities.map((i: { provider: string }) => i.provider), ["email"]);
  assert.ok(doc.sessions.length >= 1);
  assert.deepEqual(doc.conversations.map((c: { id: string }) => c.id), [direct]);
  const contents = doc.messages.map((m: { content: string }) => m.content).sort();
  assert.deepEqual(contents, ["hello there, edited", "said before leaving"]);
  const mine = doc.messages.find((m: { id: string }) => m.id === written.id);
  assert.deepEqual(mine.earlierVersions.map((v: { content: string }) => v.content), [
    "hello there",
  ]);
  assert.deepEqual(mine.attachments.map((a: { name: string }) => a.name), ["notes.txt"]);
  // (Among the messages: the MESSAGE notification the digest writes may quote the reply, and is
  // rightly in their notifications once its job has run.)
  assert.ok(
    !JSON.stringify(doc.messages).includes("a reply from someone else"),
    "only what they wrote",
  );
  assert.ok(!JSON.stringify(doc).includes(other.user.email), "nothing about the others");

  const [event] = await t.deps.sql`
    select details from app.security_events where type = 'account.exported' and user_id = ${me.user.id}`;
  assert.deepEqual(event.details.parts, [...CONTRACT_KEYS].sort());
});

test("[account] the export holds no secret: no token, hash, CSRF or refresh material, no key material", async () => {
  const me = await signInAs(t, "MEMBER");
  const second = await signIn(t, me.user.email);
  const csrf = (await expectJson(
    await t.request("GET", "/api/auth/csrf", { token: me.accessToken }),
    200,
  )).csrfToken;
  const hashes = await t.deps.sql<{ value: string }[]>`
    select rt.token_hash as value from app_private.refresh_tokens rt
    join app.sessions s on s.id = rt.session_id where s.user_id = ${me.user.id}
    union all
    select token_hash from app_private.magic_links where email = ${me.user.email}`;
  assert.ok(hashes.length >= 3);
  const doc = await expectJson(
    await t.request("GET", "/api/account/export", { token: me.accessToken }),
    200,
  );
  const { keys, strings } = walk(doc);
  const secrets = [
    me.accessToken,
    me.refreshToken,
    second.accessToken,
    second.refreshToken,
    csrf,
    ...hashes.map((h) => h.value),
  ];
  for (const secret of secrets) {
    assert.ok(!strings.some((s) => s.includes(secret)), "a secret value is in the export");
  }
  const suspicious = keys.filter((k) =>
    /token|hash|secret|password|csrf|refresh|verifier|nonce|private|key$/i.test(k)
  );
  assert.deepEqual(suspicious, [], `keys that look like secrets: ${suspicious.join(", ")}`);
  // And the scan itself finds one when there is one.
  assert.ok(walk({ a: [{ refreshToken: me.refreshToken }] }).keys.includes("refreshToken"));
});

test("[account] the export needs a session", async () => {
  await expectError(await t.request("GET", "/api/account/export"), 401, "unauthenticated");
});

// --- deletion ------------------------------------------------------------------------------------------

async function staleSignIn(s: SignedIn) {
  await t.deps.sql`
    update app.sessions set authenticated_at = now() - interval '11 minutes'
    where user_id = ${s.user.id}`;
}

function deleteAccount(s: SignedIn, confirm: unknown = "delete my account") {
  return t.request("DELETE", "/api/account", { token: s.accessToken, body: { confirm } });
}

test("[account] deletion needs a sign-in within security.freshSignInSeconds (403 reauthentication_required) and the exact confirmation", async () => {
  const me = await signInAs(t, "MEMBER");
  await staleSignIn(me);
  const refused = await expectError(await deleteAccount(me), 403, "reauthentication_required");
  assert.equal((refused.error.details as { freshSignInSeconds: number }).freshSignInSeconds, 600);
  // The database checks too, whatever the API asked: a direct call with the stale session fails.
  const [session] = await t.deps.sql`select id from app.sessions where user_id = ${me.user.id}`;
  await assert.rejects(
    t.deps.sql.begin(async (tx) => {
      await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${
        JSON.stringify({ sub: me.user.id, role: "authenticated", session_id: session.id })
      }, true)`;
      await tx`select app.delete_account()`;
    }),
    (err: { code?: string; hint?: string }) =>
      err.code === "AG403" && err.hint === "reauthentication_required",
  );
  // A new sign-in is fresh.
  const fresh = await signIn(t, me.user.email);
  await expectError(await deleteAccount(fresh, "yes"), 400, "invalid_request");
  await expectJson(await deleteAccount(fresh), 202);
});

test("[account] deletion: every session ends at once, personal data goes, messages stay as tombstones, files are removed, the address makes a new account", async () => {
  const me = await signInAs(t, "MEMBER");
  const phone = await signIn(t, me.user.email);
  const other = await signInAs(t, "MEMBER");
  const third = await signInAs(t, "MEMBER");
  const direct = await conversation(me, other);
  const fileId = await upload(me.accessToken, "photo.txt");
  const [{ storage_key: key }] = await t.deps
    .sql`select storage_key from app.attachments where id = ${fileId}`;
  const message = await send(me, direct, "remember me", [fileId]);
  await t.request("PUT", `/api/messages/${message.id}`, {
    token: me.accessToken,
    body: { content: "remember me (edited)" },
  });
  const reply = await send(other, direct, "I will");
  const group = await conversation(me, other, "group");
  await t.request("POST", `/api/conversations/${group}/participants`, {
    token: me.accessToken,
    body: { userIds: [third.user.id] },
  });
  const solo = await conversation(me, other, "group");
  await t.request("DELETE", `/api/conversations/${solo}/participants/${other.user.id}`, {
    token: me.accessToken,
  });
  const stream = await openSse(`${base}/api/realtime/sse?topics=user:${me.user.id}`, {
    authorization: `Bearer ${phone.accessToken}`,
  });
  assert.equal((await stream.next())?.event, "ready");

  const response = await deleteAccount(me);
  const body = await expectJson(response, 202);
  assert.ok(Date.now() - Date.parse(body.deletedAt) < 60_000);

  // Every session, at once.
  for (const s of [me, phone]) {
    assert.equal(
      (await expectJson(await t.request("GET", "/api/auth/session", { token: s.accessToken }), 200))
        .user,
      null,
    );
    await expectError(
      await t.request("POST", "/api/auth/refresh", { body: { refreshToken: s.refreshToken } }),
      401,
    );
  }
  assert.equal(await stream.next(3_000), null, "the realtime stream ended");
  stream.close();

  // The person is gone.
  const [left] = await t.deps.sql`
    select (select count(*)::int from app.users where id = ${me.user.id}) as users,
           (select count(*)::int from app.identities where user_id = ${me.user.id}) as identities,
           (select count(*)::int from app.sessions where user_id = ${me.user.id}) as sessions,
           (select count(*)::int from app.conversation_participants where user_id = ${me.user.id}) as memberships,
           (select count(*)::int from app.attachments where uploader_id = ${me.user.id}) as files,
           (select count(*)::int from app_private.magic_links where email = ${me.user.email}) as links,
           (select count(*)::int from app.access_logs where user_id = ${me.user.id}) as logs,
           (select count(*)::int from app.security_events where user_id = ${me.user.id}) as events,
           (select count(*)::int from app.events where topic = ${`user:${me.user.id}`}) as topic`;
  assert.deepEqual({ ...left }, {
    users: 0,
    identities: 0,
    sessions: 0,
    memberships: 0,
    files: 0,
    links: 0,
    logs: 0,
    events: 0,
    topic: 0,
  });

  // The others keep the conversation, with a tombstone in the message's place.
  const page = await expectJson(
    await t.request("GET", `/api/conversations/${direct}/messages`, { token: other.accessToken }),
    200,
  );
  const byId = Object.fromEntries(page.items.map((m: { id: string }) => [m.id, m]));
  assert.equal(byId[message.id].content, "");
  assert.ok(byId[message.id].deletedAt);
  assert.equal(byId[message.id].senderId, null);
  assert.deepEqual(byId[message.id].attachments, []);
  assert.equal(byId[reply.id].content, "I will");
  const [versions] = await t.deps.sql`
    select count(*)::int as n from app.message_versions where message_id = ${message.id}`;
  assert.equal(versions.n, 0, "earlier versions are erased too");
  // The group passed to the longest-standing other participant; the one left empty is gone.
  const [g] = await t.deps.sql`select created_by from app.conversations where id = ${group}`;
  assert.equal(g.created_by, other.user.id);
  assert.equal((await t.deps.sql`select 1 from app.conversations where id = ${solo}`).length, 0);

  // The file follows its row out through the job queue (the stack server's worker drains it);
  // so do log lines written after the deletion (the access log is written in batches, off the
  // request path): here one written late on purpose.
  await t.deps.sql`
    insert into app.access_logs (request_id, user_id, method, route, status, duration_ms)
    values ('late-line', ${me.user.id}, 'GET', '/api/auth/session', 200, 1)`;
  await t.deps.sql`
    update app_private.jobs set run_at = now()
    where dedupe_key = ${`account.erase_access_logs:${me.user.id}`}`;
  await drain(t.deps, { registry: appJobs(), maxJobs: 1000 });
  const lateLines = async () =>
    (await t.deps
      .sql`select count(*)::int as n from app.access_logs where user_id = ${me.user.id}`)[0]
      .n;
  assert.ok(await eventually(async () => !(await exists(key)) && await lateLines() === 0));

  // Recorded, without the person (the id only, which nothing resolves any more).
  const [event] = await t.deps.sql`
    select user_id, details from app.security_events
    where type = 'account.deleted' and details ->> 'userId' = ${me.user.id}`;
  assert.equal(event.user_id, null);

  // The address may be used again: a new account.
  const again = await signIn(t, me.user.email);
  assert.notEqual(again.user.id, me.user.id);
  assert.equal(again.user.role, "SUBSCRIBER");
});

test("[account] the last active ADMIN cannot delete their account (422); with another ADMIN they can", async () => {
  // Make this admin the only active one for the duration of the test.
  const admin = await signInAs(t, "ADMIN");
  const others = await t.deps.sql<{ id: string }[]>`
    update app.users set role = 'MEMBER'
    where role = 'ADMIN' and status = 'active' and id <> ${admin.user.id} returning id`;
  try {
    await expectError(await deleteAccount(admin), 422, "unprocessable");
    assert.equal((await t.deps.sql`select 1 from app.users where id = ${admin.user.id}`).length, 1);
    assert.ok(
      (await expectJson(
        await t.request("GET", "/api/auth/session", { token: admin.accessToken }),
        200,
      ))
        .user,
      "nothing was erased",
    );
  } finally {
    for (const { id } of others) {
      await t.deps.sql`update app.users set role = 'ADMIN' where id = ${id}`;
    }
  }
  await createUser(t.deps, "ADMIN");
  await expectJson(await deleteAccount(admin), 202);
});

test("[account] deleting needs a session", async () => {
  await expectError(
    await t.request("DELETE", "/api/account", { body: { confirm: "delete my account" } }),
    401,
  );
  const unknown = await signIn(t, uniqueEmail("twice"));
  await expectJson(await deleteAccount(unknown), 202);
  await expectError(await deleteAccount(unknown), 401);
});
