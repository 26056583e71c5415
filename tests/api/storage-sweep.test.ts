/** Files follow their attachment rows out, whichever way the rows go. */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../helpers.ts";
import { sweepStorage } from "../../functions/api/storage-sweeper.ts";

const dir = await Deno.makeTempDir({ prefix: "agora-sweep-" });
const t = testApp({ AGORA_STORAGE_DIR: dir });

async function upload(token: string, name: string) {
  const form = new FormData();
  form.append(
    "file",
    new File([new TextEncoder().encode(`contents of ${name}`)], name, { type: "text/plain" }),
  );
  const response = await t.app.request("http://localhost:54321/api/attachments", {
    method: "POST",
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  const body = await expectJson(response, 201);
  const [row] = await t.deps.sql`select storage_key from app.attachments where id = ${body.id}`;
  return { id: body.id as string, key: row.storage_key as string };
}

const exists = (key: string) => Deno.stat(`${dir}/${key}`).then(() => true, () => false);

test("[storage] an upload never attached is removed with its file after a day", async () => {
  const user = await signInAs(t, "MEMBER");
  const file = await upload(user.accessToken, "forgotten.txt");
  assert.ok(await exists(file.key));
  await t.deps
    .sql`update app.attachments set created_at = now() - interval '25 hours' where id = ${file.id}`;
  await t.deps.sql`select app_private.collect_orphan_attachments()`;
  assert.equal((await t.deps.sql`select 1 from app.attachments where id = ${file.id}`).length, 0);
  while (await sweepStorage(t.deps)) { /* drain the queue */ }
  assert.equal(await exists(file.key), false, "the file is gone");
});

test("[storage] files of a conversation deleted by cascade are removed too", async () => {
  const a = await signInAs(t, "MEMBER");
  const b = await signInAs(t, "MEMBER");
  const conv = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: a.accessToken,
      body: { type: "group", participantIds: [b.user.id], title: "Cascade" },
    }),
    201,
  );
  const file = await upload(a.accessToken, "shared.txt");
  const sent = await t.request("POST", `/api/conversations/${conv.id}/messages`, {
    token: a.accessToken,
    body: { content: "see file", attachmentIds: [file.id] },
  });
  assert.equal(sent.status, 201);
  await t.deps.sql`delete from app.conversations where id = ${conv.id}`;
  while (await sweepStorage(t.deps)) { /* drain the queue */ }
  assert.equal(await exists(file.key), false);
});

test("[storage] a file whose removal fails stays queued for the next sweep", async () => {
  const user = await signInAs(t, "MEMBER");
  const file = await upload(user.accessToken, "stubborn.txt");
  await t.deps.sql`delete from app.attachments where id = ${file.id}`;
  const failing = {
    ...t.deps,
    storage: { ...t.deps.storage, remove: () => Promise.reject(new Error("storage down")) },
  };
  assert.equal(await sweepStorage(failing), 0);
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app_private.storage_deletions where storage_key = ${file.key}`;
  assert.equal(n, 1, "queued again");
  while (await sweepStorage(t.deps)) { /* drain the queue */ }
  assert.equal(await exists(file.key), false);
});
