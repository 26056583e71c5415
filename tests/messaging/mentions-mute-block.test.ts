/**
 * Mentions (`mentions` on a send), mute (PUT /api/conversations/:id/settings), block
 * (PUT/DELETE /api/users/:id/block, GET /api/users/blocked) and leaving a group, over the real
 * app and database, with push through the FCM stand-in and e-mail through a real SMTP server:
 * - a mention notifies each mentioned participant once (data.kind "mention"), never a
 *   non-participant (422, nothing written), never the sender;
 * - while muted: no push, no e-mail and no mention notification for that conversation, but its
 *   MESSAGE notification and unread count still move; a mute that ends, ends; a mute set after a
 *   notification was made stops its delivery;
 * - the denials of a block (403 `blocked`: a direct conversation, a send into one, adding to a
 *   group; mentions notify nothing) and that the blocked person sees nothing else different.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { SMTPServer } from "smtp-server";
import {
  expectError,
  expectJson,
  type SignedIn,
  signInAs,
  test,
  testApp,
} from "../support/helpers.ts";
import { startFcmStandIn } from "../support/fcm-stand-in.ts";
import { freePort } from "../../stack/postgres.ts";
import { appJobs } from "../../functions/api/jobs/registry.ts";
import { drain } from "../../functions/api/core/job-queue.ts";

// --- a real SMTP server and the FCM stand-in ---------------------------------------------------

const mailed: string[] = [];
const smtpServer = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS", "AUTH"],
  logger: false,
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      mailed.push(session.envelope.rcptTo[0].address);
      callback();
    });
  },
});
const smtpPort = freePort();
await new Promise<void>((resolve) => smtpServer.listen(smtpPort, "127.0.0.1", resolve));
const fcm = await startFcmStandIn("agora-mentions-test");
/** Whether a message went to this address since `mailed` was last emptied. */
const wasMailed = (address: string) => mailed.includes(address);

const t = testApp({
  AGORA_FCM_SERVICE_ACCOUNT: fcm.serviceAccountJson,
  AGORA_FCM_API_URL: fcm.url,
  AGORA_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
});
const runJobs = () => drain(t.deps, { registry: appJobs(), maxJobs: 10_000, batch: 50 });

/** Makes the queued digests and deliveries due now and runs every job. */
async function settle() {
  for (let i = 0; i < 3; i++) {
    await t.deps.sql`
      update app_private.jobs set run_at = now()
      where kind in ('notifications.digest', 'notifications.deliver') and state = 'queued'`;
    await runJobs();
  }
}

// --- helpers -----------------------------------------------------------------------------------

const req = (method: string, path: string, who: SignedIn, body?: unknown) =>
  t.request(method, path, { token: who.accessToken, body });

async function named(name: string, role: "SUBSCRIBER" | "MEMBER" = "MEMBER") {
  const who = await signInAs(t, role);
  await expectJson(await req("PUT", "/api/profile", who, { name }), 200);
  return who;
}

async function group(creator: SignedIn, others: SignedIn[], title = "Community") {
  return await expectJson(
    await req("POST", "/api/conversations", creator, {
      type: "group",
      participantIds: others.map((o) => o.user.id),
      title,
    }),
    201,
  );
}

function startDirect(from: SignedIn, to: SignedIn) {
  return req("POST", "/api/conversations", from, { type: "direct", participantIds: [to.user.id] });
}

function sendRaw(who: SignedIn, conversationId: string, body: Record<string, unknown>) {
  return req("POST", `/api/conversations/${conversationId}/messages`, who, body);
}

async function send(who: SignedIn, conversationId: string, content: string, mentions?: string[]) {
  return await expectJson(
    await sendRaw(who, conversationId, mentions ? { content, mentions } : { content }),
    201,
  );
}

interface Notification {
  id: string;
  type: string;
  title: string;
  body: string;
  readAt: string | null;
  data: Record<string, unknown>;
}

async function inbox(who: SignedIn) {
  return await expectJson<{ items: Notification[]; unreadCount: number }>(
    await req("GET", "/api/notifications?limit=200", who),
    200,
  );
}

async function mentionsOf(who: SignedIn, conversationId: string) {
  return (await inbox(who)).items.filter((n) =>
    n.data.kind === "mention" && n.data.conversationId === conversationId
  );
}

async function messages(who: SignedIn, conversationId: string) {
  return (await expectJson(
    await req("GET", `/api/conversations/${conversationId}/messages?limit=200`, who),
    200,
  )).items as {
    id: string;
    senderId: string;
    mentions: string[];
    senderBlocked?: boolean;
    content: string;
  }[];
}

async function unreadOf(who: SignedIn, conversationId: string): Promise<number> {
  const page = await expectJson(await req("GET", "/api/conversations?limit=200", who), 200);
  return page.items.find((c: { id: string }) => c.id === conversationId).unreadCount;
}

let devices = 0;
async function device(who: SignedIn) {
  const token = `mention${++devices}-${crypto.randomUUID()}:APA91b${"x".repeat(40)}`;
  await expectJson(
    await req("POST", "/api/notifications/fcm/register", who, { token, platform: "android" }),
    201,
  );
  return token;
}

/** Push and e-mail for MESSAGE notifications, so both channels can be seen (or not). */
async function wantsEverything(who: SignedIn) {
  await expectJson(
    await req("PUT", "/api/notifications/preferences", who, {
      types: { MESSAGE: { inApp: true, push: true, email: true } },
    }),
    200,
  );
}

const mute = (who: SignedIn, conversationId: string, body: Record<string, unknown>) =>
  req("PUT", `/api/conversations/${conversationId}/settings`, who, body);

// --- mentions ----------------------------------------------------------------------------------

test("[community] mentions: each mentioned participant once, in order, notified with kind mention; never the sender; a non-participant is 422 and nothing is written", async () => {
  const ann = await named("Ann Mention");
  const ben = await named("Ben Mention");
  const cat = await named("Cat Mention");
  const dan = await named("Dan Outsider");
  const g = await group(ann, [ben, cat], "Mentions");

  const sent = await send(ann, g.id, "hi @Ben and @Cat", [
    cat.user.id,
    ben.user.id,
    cat.user.id,
    ann.user.id,
  ]);
  assert.deepEqual(sent.mentions, [cat.user.id, ben.user.id, ann.user.id]);
  const listed = (await messages(ben, g.id)).find((m) => m.id === sent.id)!;
  assert.deepEqual(listed.mentions, [cat.user.id, ben.user.id, ann.user.id]);
  assert.equal(listed.senderBlocked, false);

  for (const who of [ben, cat]) {
    const found = await mentionsOf(who, g.id);
    assert.equal(found.length, 1, "one mention notification each");
    assert.equal(found[0].type, "MESSAGE");
    assert.equal(found[0].data.messageId, sent.id);
    assert.equal(found[0].data.senderId, ann.user.id);
    assert.match(found[0].body, /^Ann Mention mentioned you: hi @Ben/);
  }
  assert.deepEqual(await mentionsOf(ann, g.id), [], "the sender is never notified of their own");

  // A non-participant: 422, and no message was written.
  const [{ before }] = await t.deps.sql<{ before: number }[]>`
    select count(*)::int as before from app.messages where conversation_id = ${g.id}`;
  await expectError(
    await sendRaw(ann, g.id, { content: "hey @Dan", mentions: [dan.user.id] }),
    422,
    "unprocessable",
  );
  await expectError(
    await sendRaw(ann, g.id, { content: "nobody", mentions: [crypto.randomUUID()] }),
    422,
  );
  const [{ after }] = await t.deps.sql<{ after: number }[]>`
    select count(*)::int as after from app.messages where conversation_id = ${g.id}`;
  assert.equal(after, before);
  assert.deepEqual(await mentionsOf(dan, g.id), []);
  await expectError(await sendRaw(ann, g.id, { content: "x", mentions: ["not-a-uuid"] }), 400);

  // In a thread too; a tombstone shows no mentions.
  const reply = await expectJson(
    await sendRaw(cat, g.id, {
      content: "in thread @Ben",
      threadId: sent.id,
      mentions: [ben.user.id],
    }),
    201,
  );
  assert.deepEqual(reply.mentions, [ben.user.id]);
  assert.equal((await mentionsOf(ben, g.id)).length, 2);
  await expectJson(await req("DELETE", `/api/messages/${sent.id}`, ann), 200);
  const tomb = (await messages(ben, g.id)).find((m) => m.id === sent.id)!;
  assert.deepEqual(tomb.mentions, []);

  // The idempotency key covers the mentions: another list with the same key is 409.
  const key = crypto.randomUUID();
  const first = await expectJson(
    await t.request("POST", `/api/conversations/${g.id}/messages`, {
      token: ann.accessToken,
      headers: { "Idempotency-Key": key },
      body: { content: "keyed", mentions: [ben.user.id] },
    }),
    201,
  );
  const again = await expectJson(
    await t.request("POST", `/api/conversations/${g.id}/messages`, {
      token: ann.accessToken,
      headers: { "Idempotency-Key": key },
      body: { content: "keyed", mentions: [ben.user.id] },
    }),
    201,
  );
  assert.equal(again.id, first.id);
  await expectError(
    await t.request("POST", `/api/conversations/${g.id}/messages`, {
      token: ann.accessToken,
      headers: { "Idempotency-Key": key },
      body: { content: "keyed", mentions: [cat.user.id] },
    }),
    409,
  );
  assert.equal((await mentionsOf(ben, g.id)).length, 3, "a replay notifies nobody again");
});

// --- mute --------------------------------------------------------------------------------------

test("[community] PUT /api/conversations/:id/settings: until unmuted, until a time, cleared; its rules; participants only", async () => {
  const ann = await named("Ann Settings");
  const ben = await named("Ben Settings");
  const stranger = await named("Stranger Settings");
  const g = await group(ann, [ben], "Settings");
  const path = `/api/conversations/${g.id}/settings`;

  assert.deepEqual(await expectJson(await req("GET", path, ben), 200), {
    conversationId: g.id,
    muted: false,
    mutedUntil: null,
  });
  assert.deepEqual(await expectJson(await mute(ben, g.id, { muted: true }), 200), {
    conversationId: g.id,
    muted: true,
    mutedUntil: null,
  });
  const until = new Date(Date.now() + 3_600_000).toISOString();
  const timed = await expectJson(await mute(ben, g.id, { muted: true, mutedUntil: until }), 200);
  assert.equal(timed.muted, true);
  assert.equal(new Date(timed.mutedUntil).getTime(), new Date(until).getTime());
  assert.deepEqual(await expectJson(await mute(ben, g.id, {}), 200), timed, "{} changes nothing");
  assert.deepEqual(await expectJson(await req("GET", path, ann), 200), {
    conversationId: g.id,
    muted: false,
    mutedUntil: null,
  }, "a mute is the caller's own");

  await expectError(
    await mute(ben, g.id, { muted: true, mutedUntil: new Date(Date.now() - 1000).toISOString() }),
    422,
  );
  await expectError(await mute(ben, g.id, { muted: false, mutedUntil: until }), 400);
  await expectError(await mute(ben, g.id, { muted: "yes" }), 400);
  await expectError(await mute(ben, g.id, { mutedUntil: "tomorrow" }), 400);
  await expectError(await mute(stranger, g.id, { muted: true }), 404);
  await expectError(await req("GET", path, stranger), 404);
  await expectError(await mute(ben, crypto.randomUUID(), { muted: true }), 404);

  // After its time a mute is over.
  await t.deps.sql`
    update app.conversation_settings set muted_until = now() - interval '1 second'
    where conversation_id = ${g.id} and user_id = ${ben.user.id}`;
  assert.equal((await expectJson(await req("GET", path, ben), 200)).muted, false);

  await expectJson(await mute(ben, g.id, { muted: true }), 200);
  assert.deepEqual(await expectJson(await mute(ben, g.id, { muted: false }), 200), {
    conversationId: g.id,
    muted: false,
    mutedUntil: null,
  });
});

test("[community] while muted: no push, no e-mail, no mention notification; the MESSAGE notification and unread count still move; unmuted, both channels come back", async () => {
  const ann = await named("Ann Loud");
  const ben = await named("Ben Quiet");
  await wantsEverything(ben);
  const token = await device(ben);
  const g = await group(ann, [ben], "Noisy group");
  await settle();
  await expectJson(await req("PUT", "/api/notifications/read-all", ben), 200);

  // Unmuted first: a mention is pushed and mailed.
  fcm.reset();
  mailed.length = 0;
  await send(ann, g.id, "loud @Ben", [ben.user.id]);
  await settle();
  assert.equal((await mentionsOf(ben, g.id)).length, 1);
  assert.ok(fcm.acceptedFor(token).length >= 1, "pushed while not muted");
  assert.ok(wasMailed(ben.user.email), "mailed while not muted");
  await expectJson(await req("PUT", "/api/notifications/read-all", ben), 200);

  // Muted.
  await expectJson(await mute(ben, g.id, { muted: true }), 200);
  fcm.reset();
  mailed.length = 0;
  const unreadBefore = await unreadOf(ben, g.id);
  const inboxBefore = (await inbox(ben)).unreadCount;
  await send(ann, g.id, "quiet please @Ben", [ben.user.id]);
  await send(ann, g.id, "and again");
  await settle();
  assert.equal((await mentionsOf(ben, g.id)).length, 1, "no mention notification while muted");
  const ordinary = (await inbox(ben)).items.filter((n) =>
    n.data.conversationId === g.id && n.data.kind === undefined && n.readAt === null
  );
  assert.equal(
    ordinary.length,
    1,
    `the MESSAGE notification still comes: ${JSON.stringify((await inbox(ben)).items)}`,
  );
  assert.equal(ordinary[0].data.count, 2);
  assert.equal((await inbox(ben)).unreadCount, inboxBefore + 1);
  assert.equal(await unreadOf(ben, g.id), unreadBefore + 2, "the unread count still moves");
  assert.deepEqual(fcm.acceptedFor(token), [], "nothing pushed while muted");
  assert.deepEqual(mailed, [], "nothing mailed while muted");
  const [{ deliveries }] = await t.deps.sql<{ deliveries: number }[]>`
    select count(*)::int as deliveries from app_private.notification_deliveries d
    where d.notification_id = ${ordinary[0].id}`;
  assert.equal(deliveries, 0, "no delivery was even queued");

  // Muted for a while, and the while is over: both channels again.
  await expectJson(await req("PUT", "/api/notifications/read-all", ben), 200);
  await expectJson(
    await mute(ben, g.id, { mutedUntil: new Date(Date.now() + 3_600_000).toISOString() }),
    200,
  );
  await t.deps.sql`
    update app.conversation_settings set muted_until = now() - interval '1 second'
    where conversation_id = ${g.id} and user_id = ${ben.user.id}`;
  await send(ann, g.id, "back @Ben", [ben.user.id]);
  await settle();
  assert.equal((await mentionsOf(ben, g.id)).length, 2);
  assert.ok(fcm.acceptedFor(token).length >= 1, "pushed after the mute ended");
  assert.ok(wasMailed(ben.user.email), "mailed after the mute ended");

  // A mute set after a notification was made but before its delivery stops the delivery.
  fcm.reset();
  mailed.length = 0;
  await send(ann, g.id, "just before the mute @Ben", [ben.user.id]);
  await expectJson(await mute(ben, g.id, { muted: true }), 200);
  await settle();
  assert.deepEqual(fcm.acceptedFor(token), []);
  assert.deepEqual(mailed, []);
  const refused = await t.deps.sql<{ error_code: string }[]>`
    select d.error_code from app_private.notification_deliveries d
    join app.notifications n on n.id = d.notification_id
    where n.user_id = ${ben.user.id} and n.data ->> 'kind' = 'mention'
      and n.body like '%just before the mute%'`;
  assert.ok(refused.length >= 2);
  assert.ok(refused.every((r) => r.error_code === "conversation_muted"));
});

// --- block -------------------------------------------------------------------------------------

test("[community] block: PUT/DELETE are idempotent; never oneself (422); an inactive or unknown user is 404; GET /api/users/blocked pages the caller's own", async () => {
  const ann = await named("Ann Blocker");
  const others = [await named("Zed One"), await named("Zed Two"), await named("Zed Three")];
  for (const o of others) {
    assert.deepEqual(
      await expectJson(await req("PUT", `/api/users/${o.user.id}/block`, ann), 200),
      { userId: o.user.id, blocked: true },
    );
  }
  await expectJson(await req("PUT", `/api/users/${others[0].user.id}/block`, ann), 200);
  await expectError(await req("PUT", `/api/users/${ann.user.id}/block`, ann), 422);
  await expectError(await req("PUT", `/api/users/${crypto.randomUUID()}/block`, ann), 404);
  const suspended = await named("Sus Pended");
  await t.deps.sql`update app.users set status = 'suspended' where id = ${suspended.user.id}`;
  await expectError(await req("PUT", `/api/users/${suspended.user.id}/block`, ann), 404);

  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: { id: string; name: string }[]; nextCursor: string | null } =
      await expectJson(
        await req("GET", `/api/users/blocked?limit=1${cursor ? `&cursor=${cursor}` : ""}`, ann),
        200,
      );
    seen.push(...page.items.map((i) => i.id));
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(seen, others.map((o) => o.user.id).reverse(), "newest first, each once");
  await expectError(await req("GET", "/api/users/blocked?cursor=nonsense", ann), 400);

  assert.deepEqual(
    await expectJson(await req("DELETE", `/api/users/${others[1].user.id}/block`, ann), 200),
    { userId: others[1].user.id, blocked: false },
  );
  await expectJson(await req("DELETE", `/api/users/${others[1].user.id}/block`, ann), 200);
  const left = await expectJson(await req("GET", "/api/users/blocked", ann), 200);
  assert.deepEqual(left.items.map((i: { id: string }) => i.id), [
    others[2].user.id,
    others[0].user.id,
  ]);
  assert.deepEqual(
    (await expectJson(await req("GET", "/api/users/blocked", others[0]), 200)).items,
    [],
    "the blocked person's own list shows nothing of it",
  );
});

test("[community] block denials: a direct conversation, a send into one, adding to a group are 403 blocked; mentions notify nothing; group messages arrive marked senderBlocked for the blocker only", async () => {
  const ben = await named("Ben Blocks");
  const ann = await named("Ann Blocked");
  const cat = await named("Cat Bystander");
  const existing = await expectJson(await startDirect(ann, ben), 201);
  const anns = await group(ann, [cat], "Ann's group");
  const shared = await group(cat, [ann, ben], "Shared group");

  await expectJson(await req("PUT", `/api/users/${ann.user.id}/block`, ben), 200);

  // Reaching the blocker directly: refused.
  await expectError(await startDirect(ann, ben), 403, "blocked");
  await expectError(await sendRaw(ann, existing.id, { content: "hello?" }), 403, "blocked");
  await expectError(
    await req("POST", "/api/conversations", ann, {
      type: "group",
      participantIds: [ben.user.id, cat.user.id],
      title: "With Ben",
    }),
    403,
    "blocked",
  );
  await expectError(
    await req("POST", `/api/conversations/${anns.id}/participants`, ann, {
      userIds: [ben.user.id],
    }),
    403,
    "blocked",
  );
  // Nothing of them was written.
  const [{ n }] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.conversation_participants
    where user_id = ${ben.user.id} and added_by = ${ann.user.id}`;
  assert.equal(n, 1, "only the direct conversation from before the block");
  assert.deepEqual(await messages(ben, existing.id), []);

  // The blocker may still write to them.
  await send(ben, existing.id, "I can still write");

  // In a shared group: messages arrive, marked for the blocker only; mentions notify nothing.
  const msg = await send(ann, shared.id, "hi @Ben @Cat", [ben.user.id, cat.user.id]);
  assert.deepEqual(msg.mentions, [ben.user.id, cat.user.id], "the mention itself is kept");
  const forBen = (await messages(ben, shared.id)).find((m) => m.id === msg.id)!;
  const forCat = (await messages(cat, shared.id)).find((m) => m.id === msg.id)!;
  const forAnn = (await messages(ann, shared.id)).find((m) => m.id === msg.id)!;
  assert.equal(forBen.senderBlocked, true);
  assert.equal(forCat.senderBlocked, false);
  assert.equal(forAnn.senderBlocked, false);
  assert.deepEqual(
    await mentionsOf(ben, shared.id),
    [],
    "a blocked sender's mention notifies nothing",
  );
  assert.equal((await mentionsOf(cat, shared.id)).length, 1);
  const thread = await expectJson(await req("GET", `/api/messages/${msg.id}/thread`, ben), 200);
  assert.equal(thread.root.senderBlocked, true);

  // Unblocked: everything works again.
  await expectJson(await req("DELETE", `/api/users/${ann.user.id}/block`, ben), 200);
  await send(ann, existing.id, "thanks");
  await expectJson(await startDirect(ann, ben), 200);
  await expectJson(
    await req("POST", `/api/conversations/${anns.id}/participants`, ann, {
      userIds: [ben.user.id],
    }),
    200,
  );
  assert.equal(
    (await messages(ben, shared.id)).find((m) => m.id === msg.id)!.senderBlocked,
    false,
  );
});

test("[community] the blocked person sees nothing different: directory, profile, group membership, messages, their own lists", async () => {
  const ben = await named("Ben Private Blocker");
  const ann = await named("Ann Unaware");
  const cat = await named("Cat Host");
  const shared = await group(cat, [ann, ben], "Unaware group");
  await send(ben, shared.id, "from the blocker");
  await send(ann, shared.id, "from the blocked");

  const view = async () => {
    const directory = await expectJson(
      await req("GET", `/api/users?search=${encodeURIComponent("Ben Private")}`, ann),
      200,
    );
    const profile = await expectJson(await req("GET", `/api/users/${ben.user.id}`, ann), 200);
    const list = await expectJson(await req("GET", "/api/conversations?limit=200", ann), 200);
    const conversation = list.items.find((c: { id: string }) => c.id === shared.id);
    const msgs = await messages(ann, shared.id);
    const blocked = await expectJson(await req("GET", "/api/users/blocked", ann), 200);
    const settings = await expectJson(
      await req("GET", `/api/conversations/${shared.id}/settings`, ann),
      200,
    );
    return { directory, profile, participants: conversation.participants, msgs, blocked, settings };
  };

  const before = await view();
  await expectJson(await req("PUT", `/api/users/${ann.user.id}/block`, ben), 200);
  const after = await view();
  assert.deepEqual(after, before);
  assert.equal(before.directory.items.length, 1);

  // The table itself shows the block to the blocker only.
  const rows = async (who: SignedIn) =>
    await t.deps.sql.begin(async (tx) => {
      await tx`select set_config('request.jwt.claims', ${
        JSON.stringify({ sub: who.user.id, role: "authenticated" })
      }, true)`;
      await tx`set local role authenticated`;
      return (await tx`select blocker_id from app.user_blocks`).length;
    });
  assert.equal(await rows(ann), 0);
  assert.equal(await rows(ben), 1);
});

// --- leave -------------------------------------------------------------------------------------

test("[community] leaving: one's own id leaves a group (its mute goes with it); a direct conversation is 422", async () => {
  const ann = await named("Ann Leaves");
  const ben = await named("Ben Stays");
  const g = await group(ben, [ann], "Leavable");
  await expectJson(await mute(ann, g.id, { muted: true }), 200);
  assert.deepEqual(
    await expectJson(
      await req("DELETE", `/api/conversations/${g.id}/participants/${ann.user.id}`, ann),
      200,
    ),
    { removed: true },
  );
  await expectError(await req("GET", `/api/conversations/${g.id}/messages`, ann), 404);
  await expectError(await req("GET", `/api/conversations/${g.id}/settings`, ann), 404);
  const [{ n }] = await t.deps.sql<{ n: number }[]>`
    select count(*)::int as n from app.conversation_settings where user_id = ${ann.user.id}`;
  assert.equal(n, 0);
  const d = await expectJson(await startDirect(ann, ben), 201);
  await expectError(
    await req("DELETE", `/api/conversations/${d.id}/participants/${ann.user.id}`, ann),
    422,
  );
});

test("[community] teardown", async () => {
  await fcm.close();
  await new Promise<void>((resolve) => smtpServer.close(() => resolve()));
});
