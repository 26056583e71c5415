/**
 * Postgres restarted while two people chat in the browser, as an operator (or a hosted failover)
 * does it. The stack server and its database cluster are this file's own, so the restart touches
 * no other test. What the people see:
 * - a message sent while the database is down is refused with the API's words ("temporarily
 *   unavailable; try again in a moment"), and what was typed stays in the box;
 * - sent again once the database is back, it reaches the other browser once (the retry keeps its
 *   Idempotency-Key: one row in the database);
 * - both live feeds come back by themselves: messages sent after the restart arrive live in the
 *   other browser, without a reload.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { expectJson, test, testApp } from "../support/helpers.ts";
import { throwawayCluster } from "../../stack/database.ts";
import { PG_BIN, run } from "../../stack/postgres.ts";
import {
  apiCall,
  bearer,
  createPerson,
  liveOver,
  openContext,
  type Person,
  screenshot,
  type Session,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";

const { cluster, dispose } = await throwawayCluster();
const stack = await startWebStack({ AGORA_DB_URL: cluster.url() });

async function pgCtl(action: "stop" | "start"): Promise<void> {
  await run(join(PG_BIN, "pg_ctl"), [
    "-D",
    cluster.dataDir,
    ...(action === "stop" ? ["-m", "fast"] : []),
    "-w",
    "-t",
    "60",
    "-l",
    join(cluster.dir, "postgres.log"),
    action,
  ], { asPostgres: true });
}

/** Waits until the API answers an authenticated read again (Postgres accepting connections). */
async function apiBack(token: string): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const response = await fetch(`${stack.base}/api/conversations?limit=1`, {
      headers: { authorization: `Bearer ${token}` },
    }).catch(() => null);
    await response?.body?.cancel();
    if (response?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the API did not answer 200 within 30 s of Postgres starting");
}

function messageIn(session: Session, text: string) {
  return session.page.locator(".messages .msg", { hasText: text });
}

async function openConversation(session: Session, id: string): Promise<void> {
  await session.page.goto(`${stack.base}/chat/${id}`);
  await session.page.locator(`.conversation-view[data-conversation-id="${id}"]`).waitFor();
  await session.page.getByRole("textbox", { name: "Message" }).waitFor();
}

async function send(session: Session, text: string): Promise<void> {
  const box = session.page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  await box.press("Enter");
}

/**
 * A 503 while the database is down, or a refused connection while no server is up, is what these
 * tests cause; anything else is not.
 */
function unexpected(errors: string[]): string[] {
  return errors.filter((e) => !/status of 503|net::ERR_CONNECTION_REFUSED/.test(e));
}

/**
 * Alice and Bob in a group of their own, each in a browser on it, both live over the WebSocket,
 * and a first message from Alice seen by Bob.
 */
async function twoPeopleChatting(names: [string, string], title: string) {
  const alice: Person = await createPerson(stack, names[0]);
  const bob: Person = await createPerson(stack, names[1]);
  const aliceToken = await bearer(stack, alice);
  const conv = await apiCall<{ id: string }>(stack, aliceToken, "POST", "/api/conversations", {
    type: "group",
    participantIds: [bob.id],
    title,
  });
  const a = await openContext(stack);
  const b = await openContext(stack);
  await signInThroughPages(stack, a, alice);
  await signInThroughPages(stack, b, bob);
  for (const session of [a, b]) {
    await openConversation(session, conv.id);
    await liveOver(session.page, "websocket");
  }
  await send(a, `${title}: the first message`);
  await messageIn(b, `${title}: the first message`).waitFor();
  return { aliceToken, conv, a, b };
}

test("[web] Postgres restarted mid-conversation: a send while it is down says to try again and keeps the text; sent again it arrives once; both live feeds come back without a reload", async () => {
  const { aliceToken, conv, a, b } = await twoPeopleChatting(
    ["Alice Restart", "Bob Restart"],
    "Night shift",
  );
  try {
    await pgCtl("stop");
    const down = "Sent while the database was down";
    await send(a, down);
    await a.page.getByRole("region", { name: "Conversation" })
      .getByText("The service is temporarily unavailable; try again in a moment.").waitFor();
    const box = a.page.getByRole("textbox", { name: "Message" });
    assert.equal(await box.inputValue(), down, "the refused message stays in the box");
    await screenshot(a.page, "chat-database-down");

    await pgCtl("start");
    await apiBack(aliceToken);
    await box.press("Enter");
    await messageIn(b, down).waitFor();
    await messageIn(a, down).waitFor();
    assert.equal(await box.inputValue(), "", "sent: the box is empty");

    // The live feeds came back: each side's next message arrives in the other browser.
    await send(b, "Bob, after the restart");
    await messageIn(a, "Bob, after the restart").waitFor();
    await send(a, "Alice, after the restart");
    await messageIn(b, "Alice, after the restart").waitFor();

    // Nothing still says the service is unavailable: the lists read again by themselves.
    for (const session of [a, b]) {
      await session.page.getByText("The service is temporarily unavailable").first()
        .waitFor({ state: "detached", timeout: 10_000 });
    }
    assert.equal(await messageIn(b, down).count(), 1, "shown once");
    const rows = await stack.deps.sql`
      select 1 from app.messages where conversation_id = ${conv.id} and content = ${down}`;
    assert.equal(rows.length, 1, "stored once");
    assert.deepEqual(unexpected(a.errors), []);
    assert.deepEqual(unexpected(b.errors), []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test("[web] the server stopped and a new one started in its place while two people chat: what another process sent meanwhile arrives once in both browsers, and live delivery resumes without a reload", async () => {
  const { aliceToken, conv, a, b } = await twoPeopleChatting(
    ["Alice Redeploy", "Bob Redeploy"],
    "Release day",
  );
  try {
    // The server goes (a deploy, a crash); another API process on the same database takes a
    // message from Alice's phone meanwhile.
    await stack.stopServer();
    const meanwhile = "Sent through another process meanwhile";
    const other = testApp({ AGORA_DB_URL: cluster.url(), AGORA_SITE_URL: stack.base });
    await expectJson(
      await other.request("POST", `/api/conversations/${conv.id}/messages`, {
        token: aliceToken,
        headers: { "idempotency-key": crypto.randomUUID() },
        body: { content: meanwhile },
      }),
      201,
    );
    await stack.startServer();

    await messageIn(b, meanwhile).waitFor();
    await messageIn(a, meanwhile).waitFor();
    await send(b, "Bob, on the new server");
    await messageIn(a, "Bob, on the new server").waitFor();
    await send(a, "Alice, on the new server");
    await messageIn(b, "Alice, on the new server").waitFor();
    assert.equal(await messageIn(b, meanwhile).count(), 1, "shown once");
    assert.equal(await messageIn(a, meanwhile).count(), 1, "shown once");
    for (const session of [a, b]) {
      await session.page.getByText("The server cannot be reached").first()
        .waitFor({ state: "detached", timeout: 10_000 });
    }
    assert.deepEqual(unexpected(a.errors), []);
    assert.deepEqual(unexpected(b.errors), []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

// Last in the file: this file's browser, server and database cluster stop here.
test("[web] teardown: the restart file's Chromium, stack server and database cluster stop", async () => {
  await stack.close();
  await dispose();
  assert.equal(stack.browser.isConnected(), false);
});
