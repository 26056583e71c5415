/**
 * Files follow their attachment rows out, whichever way the rows go: the trigger on
 * app.attachments queues a `storage.delete` job per file, and the job queue's drain removes it.
 */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { drain, JobRegistry } from "../../functions/api/core/job-queue.ts";
import { storageDelete } from "../../functions/api/messaging/jobs.ts";
import type { Deps } from "../../functions/api/core/context.ts";

const dir = await Deno.makeTempDir({ prefix: "agora-sweep-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
const t = testApp({ AGORA_STORAGE_DIR: dir });
// Only the kind under test: jobs of other domains (the wallet's, some queued by pg_cron every
// minute) must not change the counts these tests assert.
const registry = new JobRegistry([storageDelete]);

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

/** The job queued for a file, found by its dedupe key. */
async function jobFor(key: string) {
  const rows = await t.deps.sql<
    {
      state: string;
      attempts: number;
      last_error: string | null;
      due_in: number;
      payload: unknown;
    }[]
  >`
    select state, attempts, last_error, payload,
           extract(epoch from run_at - now())::float8 as due_in
    from app_private.jobs where kind = 'storage.delete' and dedupe_key = ${`storage.delete:${key}`}`;
  return rows;
}

const drainAll = (deps: Deps = t.deps) => drain(deps, { registry, maxJobs: 1000 });

test("[storage] an upload never attached is removed with its file after a day", async () => {
  const user = await signInAs(t, "MEMBER");
  const file = await upload(user.accessToken, "forgotten.txt");
  assert.ok(await exists(file.key));
  await t.deps
    .sql`update app.attachments set created_at = now() - interval '25 hours' where id = ${file.id}`;
  await t.deps.sql`select app_private.collect_orphan_attachments()`;
  assert.equal((await t.deps.sql`select 1 from app.attachments where id = ${file.id}`).length, 0);
  const [job] = await jobFor(file.key);
  assert.equal(job.state, "queued");
  assert.deepEqual(job.payload, { key: file.key });
  assert.ok(await exists(file.key), "the file waits for the drain");
  await drainAll();
  assert.equal(await exists(file.key), false, "the file is gone");
  assert.equal((await jobFor(file.key))[0].state, "done");
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
  await drainAll();
  assert.equal(await exists(file.key), false);
});

test("[storage] a rolled-back delete queues nothing", async () => {
  const user = await signInAs(t, "MEMBER");
  const file = await upload(user.accessToken, "kept.txt");
  await t.deps.sql.begin(async (tx) => {
    await tx`delete from app.attachments where id = ${file.id}`;
    throw new Error("roll back");
  }).catch(() => {});
  assert.equal((await jobFor(file.key)).length, 0);
  await drainAll();
  assert.ok(await exists(file.key), "the file stays with its row");
});

test("[storage] a file whose removal fails is retried after a backoff, then removed", async () => {
  const user = await signInAs(t, "MEMBER");
  const file = await upload(user.accessToken, "stubborn.txt");
  await drainAll(); // nothing else pending
  await t.deps.sql`delete from app.attachments where id = ${file.id}`;
  const failing: Deps = {
    ...t.deps,
    storage: { ...t.deps.storage, remove: () => Promise.reject(new Error("storage down")) },
  };
  const first = await drainAll(failing);
  assert.equal(first.retried, 1);
  const [job] = await jobFor(file.key);
  assert.equal(job.state, "queued");
  assert.equal(job.attempts, 1);
  assert.match(job.last_error ?? "", /storage down/);
  assert.ok(
    job.due_in > 4 && job.due_in <= 10,
    `retried in 5 to 10 s, not at once (${job.due_in})`,
  );
  assert.equal((await drainAll()).claimed, 0, "not before its time");
  assert.ok(await exists(file.key));
  await t.deps.sql`
    update app_private.jobs set run_at = now()
    where dedupe_key = ${`storage.delete:${file.key}`}`;
  assert.equal((await drainAll()).done, 1);
  assert.equal(await exists(file.key), false);
  assert.equal((await jobFor(file.key))[0].state, "done");
});

test("[storage] removing a file that is already gone succeeds (the job is idempotent)", async () => {
  const key = `${crypto.randomUUID()}/never-stored`;
  await t.deps.sql`
    select app_private.enqueue_job('storage.delete', jsonb_build_object('key', ${key}::text), now(),
                                   ${`storage.delete:${key}`})`;
  const result = await drainAll();
  assert.equal(result.done, 1);
  assert.equal((await jobFor(key))[0].state, "done");
});
