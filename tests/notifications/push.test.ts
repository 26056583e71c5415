/**
 * Push and e-mail deliveries through the job queue, against the FCM stand-in at its network
 * boundary (tests/support/fcm-stand-in.ts): firebase-admin gets its access token from the
 * service account's token_uri and sends to AGORA_FCM_API_URL. Preferences obeyed at creation
 * and again at delivery, quiet hours holding push and e-mail back, critical bypassing both,
 * pruning of unregistered and invalid tokens, retries after 429 and 503 honouring Retry-After
 * (and no retries inside firebase-admin), nothing sent twice after a crash or a rerun, racing
 * drains, push turned off without a service account, e-mail through the mailer, bulk pushes.
 */
import assert from "node:assert/strict";
import { expectJson, type SignedIn, signInAs, test, testApp } from "../support/helpers.ts";
import { startFcmStandIn } from "../support/fcm-stand-in.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain } from "../../functions/api/core/job-queue.ts";
import { notificationsDeliver } from "../../functions/api/notifications/jobs.ts";
import type { PushSender } from "../../functions/_shared/push.ts";

const fcm = await startFcmStandIn("agora-push-test");
const t = testApp({
  AGORA_FCM_SERVICE_ACCOUNT: fcm.serviceAccountJson,
  AGORA_FCM_API_URL: fcm.url,
});
const admin = await signInAs(t, "ADMIN");
const registry = appJobs();
const runJobs = () => drain(t.deps, { registry, maxJobs: 10_000, batch: 50 });

let tokens = 0;
/** A fresh registration token, shaped like FCM's. */
const newToken = () => `dev${++tokens}-${crypto.randomUUID()}:APA91b${"x".repeat(40)}`;

async function device(who: SignedIn, platform = "android", token = newToken()) {
  await expectJson(
    await t.request("POST", "/api/notifications/fcm/register", {
      token: who.accessToken,
      body: { token, platform },
    }),
    201,
  );
  return token;
}

async function notifyAsAdmin(who: SignedIn, body: Record<string, unknown> = {}) {
  return await expectJson(
    await t.request("POST", "/api/notifications", {
      token: admin.accessToken,
      body: {
        userId: who.user.id,
        type: "ENTITY",
        title: "Order shipped",
        body: "On its way",
        ...body,
      },
    }),
    201,
  );
}

interface DeliveryRow {
  channel: string;
  status: string;
  attempts: number;
  error_code: string | null;
  provider_message_id: string | null;
  not_before: Date;
}

async function deliveries(notificationId: string): Promise<DeliveryRow[]> {
  return [
    ...await t.deps.sql<DeliveryRow[]>`
    select channel::text, status::text, attempts, error_code, provider_message_id, not_before
    from app_private.notification_deliveries where notification_id = ${notificationId}
    order by id`,
  ];
}

async function deliverJob(notificationId: string) {
  const [job] = await t.deps.sql<{ id: string; state: string; run_at: Date; attempts: number }[]>`
    select id::text, state::text, run_at, attempts from app_private.jobs
    where kind = 'notifications.deliver' and payload -> 'notificationIds' ? ${notificationId}
    order by id desc limit 1`;
  return job;
}

/** Makes the notification's queued job and rows due now (time passing, in a test). */
async function makeDue(notificationId: string) {
  await t.deps.sql`
    update app_private.notification_deliveries set not_before = now()
    where notification_id = ${notificationId} and status = 'queued'`;
  await t.deps.sql`
    update app_private.jobs set run_at = now()
    where kind = 'notifications.deliver' and payload -> 'notificationIds' ? ${notificationId}
      and state = 'queued'`;
}

test("[push] a notification is pushed to each device through firebase-admin: token from token_uri, FCM's message name recorded", async () => {
  const me = await signInAs(t, "MEMBER");
  const phone = await device(me, "android");
  const browser = await device(me, "web");
  const issuedBefore = fcm.tokensIssued;
  const n = await notifyAsAdmin(me, { priority: "high", data: { orderId: 7 } });
  await runJobs();

  const rows = await deliveries(n.id);
  assert.deepEqual(rows.map((r) => [r.channel, r.status, r.attempts]), [
    ["push", "sent", 1],
    ["push", "sent", 1],
  ]);
  const [onPhone] = fcm.acceptedFor(phone);
  const [onBrowser] = fcm.acceptedFor(browser);
  assert.ok(onPhone && onBrowser, "each device got the push");
  assert.deepEqual(
    rows.map((r) => r.provider_message_id).sort(),
    [onPhone.name, onBrowser.name].sort(),
    "the rows hold FCM's message names",
  );
  assert.match(onPhone.name, /^projects\/agora-push-test\/messages\/\d+$/);
  assert.deepEqual(onPhone.message.notification, { title: "Order shipped", body: "On its way" });
  const data = onPhone.message.data as Record<string, string>;
  assert.equal(data.notificationId, n.id);
  assert.equal(data.type, "ENTITY");
  assert.deepEqual(JSON.parse(data.data), { orderId: 7 });
  assert.equal((onPhone.message.android as Record<string, string>).priority, "high");
  assert.equal(
    (onBrowser.message.webpush as { headers: Record<string, string> }).headers.Urgency,
    "high",
  );
  assert.ok(fcm.tokensIssued >= issuedBefore, "an access token came from the token endpoint");
  assert.ok(fcm.tokensIssued >= 1);
});

test("[push] a type turned off gets no push; turned off after queueing, it is not sent either", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  await expectJson(
    await t.request("PUT", "/api/notifications/preferences", {
      token: me.accessToken,
      body: { types: { WALLET: { push: false } } },
    }),
    200,
  );
  const off = await notifyAsAdmin(me, { type: "WALLET", title: "Received" });
  assert.deepEqual(await deliveries(off.id), [], "no delivery row for a type whose push is off");

  const queued = await notifyAsAdmin(me, { type: "ENTITY" });
  assert.equal((await deliveries(queued.id)).length, 1);
  await expectJson(
    await t.request("PUT", "/api/notifications/preferences", {
      token: me.accessToken,
      body: { types: { ENTITY: { push: false } } },
    }),
    200,
  );
  await runJobs();
  const [row] = await deliveries(queued.id);
  assert.deepEqual([row.status, row.error_code], ["failed", "preference_off"]);
  assert.equal(fcm.acceptedFor(token).length, 0, "nothing reached FCM for this device");
});

test("[push] quiet hours hold push and e-mail until the period ends; critical goes at once", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me, "ios");
  const now = new Date();
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  const start = hhmm(new Date(now.getTime() - 60 * 60_000));
  const end = hhmm(new Date(now.getTime() + 2 * 60 * 60_000));
  await expectJson(
    await t.request("PUT", "/api/notifications/preferences", {
      token: me.accessToken,
      body: { quietHours: { start, end, timeZone: "UTC" } },
    }),
    200,
  );
  const held = await notifyAsAdmin(me, { type: "SYSTEM", title: "Nightly report" });
  const expectedEnd = new Date(now.getTime() + 2 * 60 * 60_000);
  expectedEnd.setUTCSeconds(0, 0);
  const rows = await deliveries(held.id);
  assert.deepEqual(rows.map((r) => r.channel).sort(), ["email", "push"], "SYSTEM: push and e-mail");
  for (const r of rows) {
    assert.equal(r.not_before.getTime(), expectedEnd.getTime(), `${r.channel} waits until ${end}`);
  }
  assert.equal((await deliverJob(held.id)).run_at.getTime(), expectedEnd.getTime());
  const inboxNow = await expectJson(
    await t.request("GET", "/api/notifications", { token: me.accessToken }),
    200,
  );
  assert.ok(inboxNow.items.some((n: { id: string }) => n.id === held.id), "in-app: stored at once");

  await runJobs();
  assert.equal(fcm.acceptedFor(token).length, 0, "nothing pushed during quiet hours");

  const critical = await notifyAsAdmin(me, {
    type: "SYSTEM",
    title: "Breach",
    priority: "critical",
  });
  await runJobs();
  assert.deepEqual((await deliveries(critical.id)).map((r) => r.status), ["sent", "sent"]);
  assert.equal(fcm.acceptedFor(token).length, 1, "critical ignored quiet hours");
  const [mail] = await t.deps.sql`
    select subject from dev.mail where to_address = ${me.user.email} order by id desc limit 1`;
  assert.equal(mail.subject, "Breach", "and its e-mail went out through the mailer");

  // The period ends: the held job comes due. (The clock is moved by clearing the quiet hours and
  // making the job due; the rows were checked above to wait exactly until the end.)
  await expectJson(
    await t.request("PUT", "/api/notifications/preferences", {
      token: me.accessToken,
      body: { quietHours: null },
    }),
    200,
  );
  await makeDue(held.id);
  await runJobs();
  assert.deepEqual((await deliveries(held.id)).map((r) => r.status), ["sent", "sent"]);
  assert.equal(fcm.acceptedFor(token).length, 2);
});

test("[push] quiet hours that begin after queueing hold a due delivery back again, with a job for their end", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  const n = await notifyAsAdmin(me);
  const now = new Date();
  const hhmm = (d: Date) => d.toISOString().slice(11, 16);
  await t.deps.sql`
    insert into app.notification_preferences (user_id, quiet_start, quiet_end, quiet_time_zone)
    values (${me.user.id}, ${hhmm(new Date(now.getTime() - 30 * 60_000))}::time,
            ${hhmm(new Date(now.getTime() + 90 * 60_000))}::time, 'UTC')`;
  await runJobs();
  const [row] = await deliveries(n.id);
  assert.equal(row.status, "queued");
  assert.ok(row.not_before.getTime() > Date.now() + 60 * 60_000, "held until the period ends");
  const follow = await deliverJob(n.id);
  assert.equal(follow.state, "queued");
  assert.equal(follow.run_at.getTime(), row.not_before.getTime());
  assert.equal(fcm.acceptedFor(token).length, 0);
});

test("[push] FCM's UNREGISTERED and INVALID_ARGUMENT prune the token; the other devices still get it", async () => {
  const me = await signInAs(t, "MEMBER");
  const gone = await device(me, "android");
  const invalid = await device(me, "web", "not a token!");
  assert.equal(invalid, "not a token!");
  const fine = await device(me, "ios");
  fcm.unregister(gone);
  const n = await notifyAsAdmin(me);
  await runJobs();
  const rows = await t.deps.sql<{ status: string; error_code: string | null }[]>`
    select status::text, error_code from app_private.notification_deliveries
    where notification_id = ${n.id} order by status, error_code`;
  assert.deepEqual(rows.map((r) => [r.status, r.error_code]), [
    ["pruned", "INVALID_ARGUMENT"],
    ["pruned", "UNREGISTERED"],
    ["sent", null],
  ]);
  const left = await t.deps.sql`select token from app.push_devices where user_id = ${me.user.id}`;
  assert.deepEqual(left.map((r) => r.token), [fine], "the refused tokens were deleted");
  assert.equal(fcm.acceptedFor(fine).length, 1);
  assert.equal(fcm.attempts.get(invalid), 1, "the invalid token was tried once");
  // A pruned device gets nothing more.
  const again = await notifyAsAdmin(me);
  assert.equal((await deliveries(again.id)).length, 1);
});

test("[push] 429 QUOTA_EXCEEDED is retried after its Retry-After, and the message goes once", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  fcm.failNext(token, 1, { status: 429, retryAfter: 2 });
  const n = await notifyAsAdmin(me);
  const before = Date.now();
  await runJobs();
  const [row] = await deliveries(n.id);
  assert.deepEqual([row.status, row.attempts, row.error_code], ["queued", 1, "QUOTA_EXCEEDED"]);
  const job = await deliverJob(n.id);
  assert.equal(job.state, "queued");
  const delay = (job.run_at.getTime() - before) / 1000;
  assert.ok(
    delay >= 1.5 && delay <= 4,
    `the job comes back after Retry-After (2 s), got ${delay} s`,
  );
  assert.equal(fcm.attempts.get(token), 1, "one request: firebase-admin did not retry by itself");

  await runJobs();
  assert.equal(fcm.attempts.get(token), 1, "not before Retry-After");
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, job.run_at.getTime() - Date.now() + 50))
  );
  await runJobs();
  const [sent] = await deliveries(n.id);
  assert.deepEqual([sent.status, sent.attempts], ["sent", 2]);
  assert.equal(fcm.acceptedFor(token).length, 1, "delivered once");
});

test("[push] 503 UNAVAILABLE: one request per attempt (no retry inside firebase-admin), retried with the queue's backoff", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  fcm.failNext(token, 1, { status: 503 });
  const n = await notifyAsAdmin(me);
  const before = Date.now();
  await runJobs();
  assert.equal(fcm.attempts.get(token), 1);
  const [row] = await deliveries(n.id);
  assert.deepEqual([row.status, row.error_code], ["queued", "UNAVAILABLE"]);
  const job = await deliverJob(n.id);
  assert.ok(job.run_at.getTime() - before >= 4_000, "backoff without Retry-After (at least 5 s)");
  await makeDue(n.id);
  await runJobs();
  assert.deepEqual((await deliveries(n.id)).map((r) => r.status), ["sent"]);
  assert.equal(fcm.acceptedFor(token).length, 1);

  const other = await device(me);
  fcm.failNext(other, 1, { status: 503, retryAfter: 7 });
  const m = await notifyAsAdmin(me);
  const at = Date.now();
  await runJobs();
  const retry = (await deliverJob(m.id)).run_at.getTime() - at;
  assert.ok(retry >= 6_000 && retry <= 9_000, `503 with Retry-After: 7 s honoured (${retry} ms)`);
});

test("[push] nothing is sent twice: a crash after FCM accepted, before the outcome was recorded, is not resent; a rerun sends nothing", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  const real = t.deps.push!;
  // The process "dies" right after FCM accepted the message: the outcome is never recorded.
  const crashing: PushSender = {
    async send(message) {
      await real.send(message);
      throw new Error("simulated crash after FCM accepted the message");
    },
    close: () => real.close(),
  };
  const n = await notifyAsAdmin(me);
  t.deps.push = crashing;
  try {
    const crashed = await runJobs();
    assert.equal(crashed.retried, 1, "the attempt failed");
  } finally {
    t.deps.push = real;
  }
  assert.equal(fcm.acceptedFor(token).length, 1, "FCM has it once");
  const [inFlight] = await t.deps.sql`
    select status::text, in_flight_since is not null as in_flight
    from app_private.notification_deliveries where notification_id = ${n.id}`;
  assert.deepEqual([inFlight.status, inFlight.in_flight], ["queued", true]);

  await makeDue(n.id);
  await runJobs();
  const [row] = await deliveries(n.id);
  assert.deepEqual([row.status, row.error_code], ["failed", "outcome_unknown"]);
  assert.equal(fcm.acceptedFor(token).length, 1, "the retried job did not send it again");

  // A job that ran to the end and runs again (its lease was lost before `complete`): nothing new.
  const m = await notifyAsAdmin(me);
  const abort = new AbortController();
  const ctx = {
    deps: t.deps,
    job: {
      id: "0",
      kind: "notifications.deliver",
      attempt: 1,
      maxAttempts: 12,
      createdAt: new Date(),
    },
    signal: abort.signal,
  };
  await notificationsDeliver.run({ notificationIds: [m.id] }, ctx);
  await notificationsDeliver.run({ notificationIds: [m.id] }, ctx);
  await runJobs();
  assert.equal(fcm.acceptedFor(token).length, 2, "the second notification went once");
  assert.deepEqual((await deliveries(m.id)).map((r) => [r.status, r.attempts]), [["sent", 1]]);
});

test("[push] drains racing over the same jobs send each delivery once", async () => {
  const users = await Promise.all(Array.from({ length: 5 }, () => signInAs(t, "MEMBER")));
  const devices = await Promise.all(users.map((u) => device(u)));
  for (let i = 0; i < 8; i++) {
    for (const u of users) await notifyAsAdmin(u, { title: `race ${i}` });
  }
  await Promise.all([runJobs(), runJobs(), runJobs()]);
  for (const token of devices) assert.equal(fcm.acceptedFor(token).length, 8);
  const [counts] = await t.deps.sql<{ sent: number; other: number }[]>`
    select count(*) filter (where d.status = 'sent')::int as sent,
           count(*) filter (where d.status <> 'sent')::int as other
    from app_private.notification_deliveries d join app.notifications n on n.id = d.notification_id
    where n.user_id = any(${users.map((u) => u.user.id)}::uuid[])`;
  assert.deepEqual(counts, { sent: 40, other: 0 });
});

test("[push] a bulk send pushes in chunks and its progress counts what was sent", async () => {
  const users = await Promise.all(Array.from({ length: 4 }, () => signInAs(t, "MEMBER")));
  const devices = await Promise.all(users.map((u) => device(u)));
  fcm.unregister(devices[3]);
  const accepted = await expectJson(
    await t.request("POST", "/api/notifications/bulk", {
      token: admin.accessToken,
      body: {
        audience: { userIds: users.map((u) => u.user.id) },
        notification: { type: "SYSTEM", title: "New grant", body: "Apply now" },
        channels: ["inApp", "push", "email"],
      },
    }),
    202,
  );
  await runJobs();
  const progress = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${accepted.id}`, { token: admin.accessToken }),
    200,
  );
  assert.deepEqual(
    [progress.status, progress.created, progress.pushSent, progress.pushFailed, progress.emailSent],
    ["done", 4, 3, 1, 4],
  );
  for (const token of devices.slice(0, 3)) assert.equal(fcm.acceptedFor(token).length, 1);
});

test("[push] without AGORA_FCM_SERVICE_ACCOUNT push is off and the delivery rows say push_not_configured", async () => {
  const off = testApp();
  assert.equal(off.deps.push, null);
  const me = await signInAs(off, "MEMBER");
  await expectJson(
    await off.request("POST", "/api/notifications/fcm/register", {
      token: me.accessToken,
      body: { token: newToken(), platform: "android" },
    }),
    201,
  );
  const n = await expectJson(
    await off.request("POST", "/api/notifications", {
      token: me.accessToken,
      body: { type: "ENTITY", title: "No push here", body: "" },
    }),
    201,
  );
  await drain(off.deps, { registry, maxJobs: 1000 });
  const rows = await deliveries(n.id);
  assert.deepEqual(rows.map((r) => [r.status, r.error_code]), [["failed", "push_not_configured"]]);
});
