/**
 * Reports and moderation through the API (POST /api/reports, GET and PUT /api/admin/reports):
 * what a reporter may report, the queue with its snapshots, resolutions whose action, security
 * event and notifications commit together or not at all, two ADMINs racing on one report, and
 * the per-user rate limit.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  createUser,
  expectError,
  expectJson,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { approvedVendor, product } from "../support/store.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const blocker = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 1, onnotice: () => {} });

async function group(creator: SignedIn, others: SignedIn[]) {
  return await expectJson(
    await t.request("POST", "/api/conversations", {
      token: creator.accessToken,
      body: { type: "group", participantIds: others.map((o) => o.user.id), title: "Reports" },
    }),
    201,
  );
}

async function send(who: SignedIn, conversationId: string, content: string) {
  return await expectJson(
    await t.request("POST", `/api/conversations/${conversationId}/messages`, {
      token: who.accessToken,
      body: { content },
    }),
    201,
  );
}

function report(who: SignedIn, type: string, id: string, reason = "spam", note?: string) {
  return t.request("POST", "/api/reports", {
    token: who.accessToken,
    body: { subject: { type, id }, reason, ...(note ? { note } : {}) },
  });
}

function resolve(by: SignedIn, id: string, body: Record<string, unknown>) {
  return t.request("PUT", `/api/admin/reports/${id}`, { token: by.accessToken, body });
}

async function queue(query = "") {
  return await expectJson(
    await t.request("GET", `/api/admin/reports?limit=200${query}`, { token: admin.accessToken }),
    200,
  );
}

async function moderationEvents(reportId: string) {
  return await t.deps.sql`
    select severity, details from app.security_events
    where type = 'moderation.report_resolved' and details -> 'reportIds' ? ${reportId}`;
}

async function reportNotifications(userId: string) {
  return await t.deps.sql`
    select title, body, data from app.notifications
    where user_id = ${userId} and type = 'SYSTEM' and data ->> 'kind' = 'report_resolved'`;
}

test("[moderation] a reported message is in the queue with its snapshot; deleting it resolves every report on it, with one event and each reporter's notification", async () => {
  const rita = await signInAs(t, "MEMBER");
  const otto = await signInAs(t, "MEMBER");
  const sam = await signInAs(t, "MEMBER");
  const stranger = await signInAs(t, "MEMBER");
  const conversation = await group(rita, [otto, sam]);
  const message = await send(sam, conversation.id, "Buy cheap pills now");

  const created = await expectJson(await report(rita, "message", message.id, "spam", "pills"), 201);
  assert.equal(created.status, "open");
  assert.deepEqual(created.subject, { type: "message", id: message.id });
  assert.equal(created.reason, "spam");
  await expectError(await report(rita, "message", message.id, "abuse"), 409);
  await expectError(await report(stranger, "message", message.id), 404);
  await expectError(await report(rita, "message", crypto.randomUUID()), 404);
  const second = await expectJson(await report(otto, "message", message.id, "abuse"), 201);

  const open = (await queue("&type=message")).items.filter((r: { subject: { id: string } }) =>
    r.subject.id === message.id
  );
  assert.deepEqual(open.map((r: { id: string }) => r.id), [created.id, second.id], "oldest first");
  assert.equal(open[0].reportCount, 2);
  assert.equal(open[0].note, "pills");
  assert.deepEqual(open[0].reporter, { id: rita.user.id, name: rita.user.name });
  assert.equal(open[0].snapshot.content, "Buy cheap pills now");
  assert.equal(open[0].snapshot.sender.id, sam.user.id);

  await expectError(
    await resolve(admin, created.id, { status: "actioned", action: "hide_product", note: "x" }),
    422,
  );
  await expectError(
    await resolve(admin, created.id, { status: "dismissed", action: "delete_message", note: "x" }),
    422,
  );
  await expectError(
    await resolve(admin, created.id, { status: "actioned", action: "delete_message" }),
    400,
  );
  await expectError(
    await resolve(admin, crypto.randomUUID(), { status: "dismissed", note: "x" }),
    404,
  );
  await expectError(await resolve(rita, created.id, { status: "dismissed", note: "x" }), 403);

  const resolved = await expectJson(
    await resolve(admin, created.id, {
      status: "actioned",
      action: "delete_message",
      note: "pill spam",
    }),
    200,
  );
  assert.equal(resolved.status, "actioned");
  assert.equal(resolved.action, "delete_message");
  assert.equal(resolved.resolutionNote, "pill spam");
  assert.equal(resolved.resolvedBy, admin.user.id);
  assert.equal(resolved.reportCount, 0);
  assert.ok(resolved.resolvedAt);

  const page = await expectJson(
    await t.request("GET", `/api/conversations/${conversation.id}/messages`, {
      token: rita.accessToken,
    }),
    200,
  );
  const tombstone = page.items.find((m: { id: string }) => m.id === message.id);
  assert.ok(tombstone.deletedAt, "the message is a tombstone");
  assert.equal(tombstone.content, "", "its content is gone");

  const actioned = (await queue("&status=actioned")).items.filter((
    r: { subject: { id: string } },
  ) => r.subject.id === message.id);
  assert.equal(actioned.length, 2, "both reports on the message are resolved");
  assert.equal(actioned[1].snapshot.content, "Buy cheap pills now", "the snapshot keeps it");

  const events = await moderationEvents(created.id);
  assert.equal(events.length, 1);
  assert.equal(events[0].details.action, "delete_message");
  assert.equal(events[0].details.by, admin.user.id);
  for (const reporter of [rita, otto]) {
    const notes = await reportNotifications(reporter.user.id);
    assert.equal(notes.length, 1, "one SYSTEM notification per reporter");
    assert.equal(notes[0].data.status, "actioned");
  }
});

test("[moderation] an action that fails midway leaves the report open, with no event and no notification", async () => {
  const reporter = await signInAs(t, "MEMBER");
  const created = await expectJson(await report(reporter, "user", admin.user.id, "abuse"), 201);
  // An ADMIN cannot suspend themselves (app.change_user_status): the resolution, already
  // written when the action fails, goes with it.
  await expectError(
    await resolve(admin, created.id, {
      status: "actioned",
      action: "suspend_user",
      note: "abusive",
    }),
    422,
  );
  const [row] = await t.deps.sql`select status from app.reports where id = ${created.id}`;
  assert.equal(row.status, "open");
  assert.equal((await moderationEvents(created.id)).length, 0);
  assert.equal((await reportNotifications(reporter.user.id)).length, 0);
  await expectJson(
    await resolve(admin, created.id, { status: "dismissed", note: "no breach" }),
    200,
  );
  const notes = await reportNotifications(reporter.user.id);
  assert.equal(notes.length, 1);
  assert.equal(notes[0].data.status, "dismissed");
});

test("[moderation] two ADMINs resolving the same report at once: one action, one event, one notification", async () => {
  const second = await signInAs(t, "ADMIN");
  const reporter = await signInAs(t, "MEMBER");
  const target = await signInAs(t, "MEMBER");
  const created = await expectJson(await report(reporter, "user", target.user.id, "abuse"), 201);

  // Hold the report's row so both resolutions are under way before either can lock it.
  const held = blocker.reserve();
  const tx = await held;
  await tx`begin`;
  await tx`select 1 from app.reports where id = ${created.id} for update`;
  const racing = [admin, second].map((by) =>
    resolve(by, created.id, { status: "actioned", action: "suspend_user", note: "harassment" })
  );
  await new Promise((r) => setTimeout(r, 300));
  await tx`commit`;
  tx.release();
  const answers = await Promise.all(racing);
  assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409]);
  for (const answer of answers) await answer.body?.cancel();

  const [{ n: suspensions }] = await t.deps.sql`
    select count(*)::int as n from app.status_changes where user_id = ${target.user.id}`;
  assert.equal(suspensions, 1, "one suspension");
  assert.equal((await moderationEvents(created.id)).length, 1, "one event");
  assert.equal((await reportNotifications(reporter.user.id)).length, 1, "one notification");
});

test("[moderation] a hidden product leaves the catalog and its search; its vendor cannot bring it back", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { title: "Counterfeit moderation watch" });
  const draft = await product(t, vendor, { status: "draft" });
  const reporter = await signInAs(t, "MEMBER");
  await expectError(await report(reporter, "product", draft.id), 404);
  const created = await expectJson(await report(reporter, "product", item.id, "fraud"), 201);
  await expectError(
    await resolve(admin, created.id, { status: "actioned", action: "delete_message", note: "x" }),
    422,
  );
  const resolved = await expectJson(
    await resolve(admin, created.id, { status: "actioned", action: "hide_product", note: "fake" }),
    200,
  );
  assert.equal(resolved.snapshot.title, "Counterfeit moderation watch");
  await expectError(await t.request("GET", `/api/store/products/${item.id}`), 404);
  const search = await expectJson(
    await t.request("GET", `/api/store/products?q=${encodeURIComponent("counterfeit moderation")}`),
    200,
  );
  assert.equal(search.items.length, 0);
  const own = await expectJson(
    await t.request("GET", `/api/store/products/${item.id}`, { token: vendor.owner.accessToken }),
    200,
  );
  assert.equal(own.status, "hidden");
  await expectError(
    await t.request("PUT", `/api/store/products/${item.id}`, {
      token: vendor.owner.accessToken,
      body: { status: "active" },
    }),
    403,
  );
});

test("[moderation] reporting: a suspended user is 404, oneself 422, and 10 reports an hour per user (429 beyond)", async () => {
  const limited = testApp({ AGORA_RATE_REPORTS_USER: "10/3600" });
  const reporter = await signInAs(limited, "MEMBER");
  const suspended = await createUser(t.deps, "MEMBER");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${suspended.id}`;
  const send = (type: string, id: string) =>
    limited.request("POST", "/api/reports", {
      token: reporter.accessToken,
      body: { subject: { type, id }, reason: "other" },
    });
  await expectError(await send("user", suspended.id), 404);
  await expectError(await send("user", reporter.user.id), 422);
  for (let i = 0; i < 8; i++) {
    const someone = await createUser(t.deps, "MEMBER");
    await expectJson(await send("user", someone.id), 201);
  }
  const last = await createUser(t.deps, "MEMBER");
  const refused = await send("user", last.id);
  await expectError(refused, 429, "rate_limited");
  assert.ok(refused.headers.get("retry-after"));
  const [{ n }] = await t.deps.sql`
    select count(*)::int as n from app.reports where reporter_id = ${reporter.user.id}`;
  assert.equal(n, 8);
  await limited.deps.sql.end();
});

test("[moderation] visitors and VISITORs cannot report", async () => {
  await expectError(
    await t.request("POST", "/api/reports", {
      body: { subject: { type: "user", id: admin.user.id }, reason: "spam" },
    }),
    401,
  );
  const visitor = await signInAs(t, "VISITOR");
  await expectError(await report(visitor, "user", admin.user.id), 403);
});

test("[moderation] cleanup", async () => {
  await blocker.end();
});
