/**
 * Deliveries when the peer fails before, during and after a message is handed over (issue 25,
 * items 4, 5, 7): a real SMTP server (`smtp-server`, on loopback, controlled here) and the FCM
 * stand-in (tests/support/fcm-stand-in.ts) breaking connections where a network would. Each test
 * counts what the peer received: every notification is delivered once or marked
 * `outcome_unknown`, never twice, and its jobs end done or dead (none left running or queued).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { SMTPServer } from "smtp-server";
import { expectJson, type SignedIn, signInAs, test, testApp } from "../support/helpers.ts";
import { startFcmStandIn } from "../support/fcm-stand-in.ts";
import { freePort } from "../../stack/postgres.ts";
import { drain, JobRegistry } from "../../functions/api/core/job-queue.ts";
import {
  notificationsBatch,
  notificationsBatchChunk,
  notificationsDeliver,
} from "../../functions/api/notifications/jobs.ts";
import { createPushSender } from "../../functions/_shared/push.ts";
import { createMailer } from "../../functions/_shared/mailer.ts";

// ---------------------------------------------------------------------------------------------
// The SMTP server, failing as scripted
// ---------------------------------------------------------------------------------------------

/**
 * rcpt451/rcpt550: RCPT TO refused (before the data); cut: the connection breaks as the data
 * begins; data451/data554: the data's end refused; drop: the message taken (counted), then the
 * connection breaks before the answer.
 */
type SmtpFault = "rcpt451" | "rcpt550" | "cut" | "data451" | "data554" | "drop";

/** Scripted faults per recipient address, in order. */
const smtpFaults = new Map<string, SmtpFault[]>();
const smtpFault = (to: string, fault: SmtpFault) =>
  void smtpFaults.set(to, [...smtpFaults.get(to) ?? [], fault]);
/** The recipient's next fault when it is one of `kinds` (taken), else none. */
function takeFault(to: string, kinds: SmtpFault[]): SmtpFault | undefined {
  const list = smtpFaults.get(to);
  return list?.length && kinds.includes(list[0]) ? list.shift() : undefined;
}
/** Messages the server took (read whole, not refused), with their Message-ID. */
const received: { to: string; messageId: string | null }[] = [];
let smtpSessions = 0;

function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

const smtpServer = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  logger: false,
  onConnect(_session, callback) {
    smtpSessions++;
    callback();
  },
  onRcptTo(address, _session, callback) {
    const fault = takeFault(address.address, ["rcpt451", "rcpt550"]);
    if (fault) {
      return callback(
        smtpError(fault === "rcpt451" ? 451 : 550, fault === "rcpt451" ? "Try later" : "No"),
      );
    }
    callback();
  },
  onData(stream, session, callback) {
    const fault = takeFault(session.envelope.rcptTo[0].address, [
      "cut",
      "data451",
      "data554",
      "drop",
    ]);
    const socket = () =>
      [
        ...(smtpServer as unknown as {
          connections: Set<{ id: string; _socket: { destroy(): void } }>;
        })
          .connections,
      ].find((c) => c.id === session.id)!._socket;
    if (fault === "cut") {
      stream.resume();
      socket().destroy();
      return;
    }
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      if (fault === "data451") return callback(smtpError(451, "Busy, try later"));
      if (fault === "data554") return callback(smtpError(554, "Rejected"));
      const raw = Buffer.concat(chunks).toString("utf8");
      received.push({
        to: session.envelope.rcptTo[0].address,
        messageId: /^message-id:\s*(\S+)/im.exec(raw)?.[1] ?? null,
      });
      if (fault === "drop") {
        socket().destroy();
        return;
      }
      callback();
    });
  },
});
const smtpPort = freePort();
await new Promise<void>((resolve) => smtpServer.listen(smtpPort, "127.0.0.1", resolve));

// ---------------------------------------------------------------------------------------------
// The app, FCM, the jobs
// ---------------------------------------------------------------------------------------------

const CONCURRENCY = 3;
const fcm = await startFcmStandIn("agora-fault-test");
const t = testApp({
  AGORA_FCM_SERVICE_ACCOUNT: fcm.serviceAccountJson,
  AGORA_FCM_API_URL: fcm.url,
  AGORA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
  AGORA_PUSH_CONCURRENCY: String(CONCURRENCY),
});
const admin = await signInAs(t, "ADMIN");
const registry = new JobRegistry([
  notificationsDeliver,
  notificationsBatch,
  notificationsBatchChunk,
]);
const runJobs = () => drain(t.deps, { registry, maxJobs: 1000, batch: 20, maxMs: 30_000 });

let tokens = 0;
const newToken = () => `fault${++tokens}-${crypto.randomUUID()}:APA91b${"x".repeat(40)}`;

async function device(who: SignedIn, token = newToken()) {
  await expectJson(
    await t.request("POST", "/api/notifications/fcm/register", {
      token: who.accessToken,
      body: { token, platform: "android" },
    }),
    201,
  );
  return token;
}

/** A notification whose deliveries are the given channels (ENTITY: push; SYSTEM: push, e-mail). */
async function notify(who: SignedIn, type: "ENTITY" | "SYSTEM" = "ENTITY") {
  return await expectJson(
    await t.request("POST", "/api/notifications", {
      token: admin.accessToken,
      body: { userId: who.user.id, type, title: `Fault ${type}`, body: "body" },
    }),
    201,
  );
}

async function deliveries(notificationId: string, channel: "push" | "email") {
  return [
    ...await t.deps.sql<{ id: string; status: string; error_code: string | null }[]>`
      select id::text, status::text, error_code from app_private.notification_deliveries
      where notification_id = ${notificationId} and channel = ${channel}::app_private.delivery_channel
      order by id`,
  ];
}

/**
 * Runs the notification's jobs until none is left to run: queued retries and their rows are made
 * due (time passing), at most `rounds` times. Then every job of it must be done or dead.
 */
async function settle(notificationIds: string[], rounds = 6) {
  for (let i = 0; i < rounds; i++) {
    await runJobs();
    const [{ queued }] = await t.deps.sql<{ queued: number }[]>`
      select count(*)::int as queued from app_private.jobs
      where kind = 'notifications.deliver' and state = 'queued'
        and exists (select 1 from jsonb_array_elements_text(payload -> 'notificationIds') x
                    where x = any(${notificationIds}::text[]))`;
    if (!queued) break;
    await t.deps.sql`
      update app_private.notification_deliveries set not_before = now()
      where notification_id = any(${notificationIds}::uuid[]) and status = 'queued'`;
    await t.deps.sql`
      update app_private.jobs set run_at = now()
      where kind = 'notifications.deliver' and state = 'queued'
        and exists (select 1 from jsonb_array_elements_text(payload -> 'notificationIds') x
                    where x = any(${notificationIds}::text[]))`;
  }
  const jobs = await t.deps.sql<{ state: string }[]>`
    select state::text from app_private.jobs
    where kind = 'notifications.deliver'
      and exists (select 1 from jsonb_array_elements_text(payload -> 'notificationIds') x
                  where x = any(${notificationIds}::text[]))`;
  assert.ok(jobs.length >= 1, "the notification had a delivery job");
  for (const job of jobs) {
    assert.ok(["done", "dead"].includes(job.state), `no job left behind (one is ${job.state})`);
  }
}

/** The notification e-mails the server took for an address (not the sign-in links). */
const receivedBy = (email: string) =>
  received.filter((r) => r.to === email && r.messageId?.startsWith("<notification-delivery-"));
async function devMail(email: string) {
  return [
    ...await t.deps.sql<{ message_id: string | null }[]>`
      select message_id from dev.mail
      where to_address = ${email} and subject not like 'Your sign-in link%'`,
  ];
}

// ---------------------------------------------------------------------------------------------
// E-mail
// ---------------------------------------------------------------------------------------------

test("[faults] e-mail sent once carries a Message-ID from its delivery row, and the dev mailbox keeps it once", async () => {
  const me = await signInAs(t, "MEMBER");
  const n = await notify(me, "SYSTEM");
  await settle([n.id]);
  const [row] = await deliveries(n.id, "email");
  assert.deepEqual([row.status, row.error_code], ["sent", null]);
  const got = receivedBy(me.user.email);
  assert.equal(got.length, 1, "the SMTP server got it once");
  assert.equal(
    got[0].messageId,
    `<notification-delivery-${row.id}@${new URL(t.deps.settings.siteUrl).hostname}>`,
  );
  assert.deepEqual((await devMail(me.user.email)).map((m) => m.message_id), [got[0].messageId]);
});

test("[faults] e-mail, before hand-over: no connection, then RCPT 451, is retried and sent once; RCPT 550 fails for good; the dev mailbox records nothing unsent", async () => {
  const me = await signInAs(t, "MEMBER");
  // No SMTP server at all: nothing was handed over.
  const real = t.deps.mailer;
  t.deps.mailer = createMailer({
    smtpUrl: `smtp://127.0.0.1:${freePort()}`,
    from: t.deps.settings.mailFrom,
    localMode: true,
    sql: t.deps.sql,
  });
  const n = await notify(me, "SYSTEM");
  try {
    await runJobs();
  } finally {
    t.deps.mailer = real;
  }
  let [row] = await deliveries(n.id, "email");
  assert.equal(row.status, "queued", "connection refused: put back for a retry");
  assert.match(row.error_code ?? "", /^mail_/);
  assert.deepEqual(await devMail(me.user.email), [], "nothing in the dev mailbox: nothing sent");

  smtpFault(me.user.email, "rcpt451");
  await settle([n.id]);
  [row] = await deliveries(n.id, "email");
  assert.deepEqual([row.status, row.error_code], ["sent", null], "451 retried, then sent");
  assert.equal(receivedBy(me.user.email).length, 1, "received once");
  assert.equal((await devMail(me.user.email)).length, 1, "kept once");

  const other = await signInAs(t, "MEMBER");
  smtpFault(other.user.email, "rcpt550");
  const m = await notify(other, "SYSTEM");
  await settle([m.id]);
  const [refused] = await deliveries(m.id, "email");
  assert.deepEqual([refused.status, refused.error_code], ["failed", "mail_550"]);
  assert.equal(receivedBy(other.user.email).length, 0);
  assert.deepEqual(await devMail(other.user.email), []);
});

test("[faults] e-mail, during: the connection breaks as the data begins: sent once later, or unknown, never twice", async () => {
  const me = await signInAs(t, "MEMBER");
  smtpFault(me.user.email, "cut");
  const n = await notify(me, "SYSTEM");
  await settle([n.id]);
  const [row] = await deliveries(n.id, "email");
  const got = receivedBy(me.user.email).length;
  assert.ok(
    (row.status === "sent" && got === 1) ||
      (row.status === "failed" && row.error_code === "outcome_unknown" && got === 0),
    `sent once or unknown (status ${row.status} ${row.error_code}, received ${got})`,
  );
});

test("[faults] e-mail, after hand-over: the data's end refused (451 retried, 554 failed); taken but unanswered: outcome_unknown, never sent again", async () => {
  const me = await signInAs(t, "MEMBER");
  smtpFault(me.user.email, "data451");
  const n = await notify(me, "SYSTEM");
  await settle([n.id]);
  assert.deepEqual((await deliveries(n.id, "email")).map((r) => r.status), ["sent"]);
  assert.equal(receivedBy(me.user.email).length, 1, "451 to the data: sent once on the retry");

  const two = await signInAs(t, "MEMBER");
  smtpFault(two.user.email, "data554");
  const m = await notify(two, "SYSTEM");
  await settle([m.id]);
  assert.deepEqual(
    (await deliveries(m.id, "email")).map((r) => [r.status, r.error_code]),
    [["failed", "mail_554"]],
  );

  const three = await signInAs(t, "MEMBER");
  smtpFault(three.user.email, "drop");
  const sessions = smtpSessions;
  const k = await notify(three, "SYSTEM");
  await settle([k.id]);
  assert.deepEqual(
    (await deliveries(k.id, "email")).map((r) => [r.status, r.error_code]),
    [["failed", "outcome_unknown"]],
  );
  assert.equal(receivedBy(three.user.email).length, 1, "the server has it once, not twice");
  assert.equal(smtpSessions - sessions, 1, "one SMTP session: no second attempt");
  assert.deepEqual(await devMail(three.user.email), [], "not recorded as sent in the dev mailbox");
});

test("[faults] e-mail in local mode without SMTP: the dev mailbox is the send, once per Message-ID", async () => {
  const local = createMailer({
    from: t.deps.settings.mailFrom,
    localMode: true,
    sql: t.deps.sql,
  });
  const to = `local-${crypto.randomUUID().slice(0, 8)}@test.example`;
  const mail = { to, subject: "Hi", text: "Hello", links: [], messageId: `<x-${to}>` };
  await local.send(mail);
  await local.send(mail);
  assert.equal((await devMail(to)).length, 1, "the same message twice is kept once");
  await local.send({ ...mail, messageId: undefined });
  assert.equal((await devMail(to)).length, 2, "a mail without a Message-ID is its own");
});

// ---------------------------------------------------------------------------------------------
// Push
// ---------------------------------------------------------------------------------------------

test("[faults] push, before hand-over: FCM unreachable is retried and sent once", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  const real = t.deps.push!;
  const unreachable = createPushSender({
    serviceAccount: JSON.parse(fcm.serviceAccountJson),
    apiUrl: `http://127.0.0.1:${freePort()}`,
  })!;
  const n = await notify(me);
  t.deps.push = unreachable;
  try {
    await runJobs();
  } finally {
    t.deps.push = real;
    await unreachable.close();
  }
  const [row] = await deliveries(n.id, "push");
  assert.deepEqual([row.status, row.error_code], ["queued", "ECONNREFUSED"]);
  assert.equal(fcm.attempts.get(token) ?? 0, 0);
  await settle([n.id]);
  assert.deepEqual((await deliveries(n.id, "push")).map((r) => r.status), ["sent"]);
  assert.equal(fcm.attempts.get(token), 1);
  assert.equal(fcm.acceptedFor(token).length, 1);
});

test("[faults] push, during: the connection breaks before the request arrived whole: outcome_unknown, one request", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  const n = await notify(me);
  const before = fcm.requests;
  fcm.faultNext("cut");
  await settle([n.id]);
  assert.deepEqual(
    (await deliveries(n.id, "push")).map((r) => [r.status, r.error_code]),
    [["failed", "outcome_unknown"]],
  );
  assert.equal(fcm.requests - before, 1, "one request reached FCM, not a second");
  assert.equal(fcm.acceptedFor(token).length, 0);
});

test("[faults] push, after hand-over: FCM took it and the connection broke before the answer: one request (never re-sent by the transport), outcome_unknown", async () => {
  const me = await signInAs(t, "MEMBER");
  const token = await device(me);
  // A push that goes through first: with keep-alive, the next one would reuse its connection.
  const warm = await notify(me);
  await settle([warm.id]);
  assert.equal(fcm.acceptedFor(token).length, 1);

  const n = await notify(me);
  const before = fcm.requests;
  fcm.faultNext("drop");
  await settle([n.id]);
  assert.equal(fcm.requests - before, 1, "exactly one request for the message");
  assert.equal(fcm.acceptedFor(token).length, 2, "FCM has it once (and the first one)");
  assert.deepEqual(
    (await deliveries(n.id, "push")).map((r) => [r.status, r.error_code]),
    [["failed", "outcome_unknown"]],
  );
});

// ---------------------------------------------------------------------------------------------
// A bulk send interrupted mid-round
// ---------------------------------------------------------------------------------------------

test("[faults] a bulk send's worker dying mid-round costs at most its slice in flight; the next attempt sends every other push once", async () => {
  const users = await Promise.all(Array.from({ length: 10 }, () => signInAs(t, "MEMBER")));
  const devices = await Promise.all(users.map((u) => device(u)));
  const batch = await expectJson(
    await t.request("POST", "/api/notifications/bulk", {
      token: admin.accessToken,
      body: {
        audience: { userIds: users.map((u) => u.user.id) },
        notification: { type: "ENTITY", title: "Bulk", body: "to everyone" },
        channels: ["inApp", "push"],
      },
    }),
    202,
  );
  // The batch job: the inbox and the chunk job (not run yet).
  await drain(t.deps, { registry: new JobRegistry([notificationsBatch]), maxJobs: 100 });
  const [chunkJob] = await t.deps.sql<{ id: string; payload: { chunk: number } }[]>`
    select id::text, payload from app_private.jobs
    where kind = 'notifications.batch_chunk' and payload ->> 'batchId' = ${batch.id}`;
  assert.ok(chunkJob, "a chunk job was queued");

  // A worker runs the chunk; FCM hangs on the first slice. The worker then dies (its lease
  // runs out): it is stopped and its work left where it is.
  fcm.faultNext("hang", CONCURRENCY);
  const stop = new AbortController();
  const dead = notificationsBatchChunk.run({ batchId: batch.id, chunk: chunkJob.payload.chunk }, {
    deps: t.deps,
    job: {
      id: chunkJob.id,
      kind: "notifications.batch_chunk",
      attempt: 1,
      maxAttempts: 12,
      createdAt: new Date(),
    },
    signal: stop.signal,
  }).then(() => null, (err) => err);
  for (let i = 0; i < 200 && fcm.hung < CONCURRENCY; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.equal(fcm.hung, CONCURRENCY, "the first slice is in flight");
  stop.abort(new Error("the lease ran out"));

  // The next attempt: the chunk job itself, through the queue.
  await drain(t.deps, { registry: new JobRegistry([notificationsBatchChunk]), maxJobs: 100 });
  fcm.releaseHung();
  assert.ok(await dead, "the dead worker's run ended in an error");

  const rows = await t.deps.sql<{ token: string; status: string; error_code: string | null }[]>`
    select dv.token, d.status::text, d.error_code
    from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    left join app.push_devices dv on dv.id = d.device_id
    where n.batch_id = ${batch.id}`;
  assert.equal(rows.length, 10);
  const unknown = rows.filter((r) => r.error_code === "outcome_unknown");
  const sent = rows.filter((r) => r.status === "sent");
  assert.equal(unknown.length, CONCURRENCY, "only the slice in flight is unknown");
  assert.equal(sent.length, 10 - CONCURRENCY, "every other push was sent by the next attempt");
  for (const token of devices) {
    assert.equal(fcm.attempts.get(token), 1, "one request per push, none twice");
  }
  for (const r of sent) assert.equal(fcm.acceptedFor(r.token).length, 1);
  const [job] = await t.deps.sql<{ state: string }[]>`
    select state::text from app_private.jobs where id = ${chunkJob.id}`;
  assert.equal(job.state, "done", "the chunk job ended");
  const progress = await expectJson(
    await t.request("GET", `/api/notifications/bulk/${batch.id}`, { token: admin.accessToken }),
    200,
  );
  assert.equal(progress.status, "done");
});

test("[faults] close the peers", async () => {
  await fcm.close();
  await new Promise<void>((resolve) => smtpServer.close(() => resolve()));
});
