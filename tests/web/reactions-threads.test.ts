/**
 * Reactions and threads in Chromium, two people in one conversation: a reaction picked from the
 * small picker shows under the message in the other browser, toggling one's own moves the
 * count live in both; "Reply in thread" opens the side panel, a reply there stays out of the
 * main list, and the root's reply count and the other person's open panel follow live.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  assertAccessible,
  bearer,
  createPerson,
  lateAnswers,
  liveOver,
  openContext,
  type Person,
  screenshot,
  type Session,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";

const stack = await startWebStack();

async function group(owner: Person, others: Person[], title: string): Promise<string> {
  const token = await bearer(stack, owner);
  const c = await apiCall<{ id: string }>(stack, token, "POST", "/api/conversations", {
    type: "group",
    participantIds: others.map((o) => o.id),
    title,
  });
  return c.id;
}

async function openConversation(session: Session, id: string): Promise<void> {
  await session.page.goto(`${stack.base}/chat/${id}`);
  await session.page.locator(`.conversation-view[data-conversation-id="${id}"]`).waitFor();
  await session.page.getByRole("textbox", { name: "Message" }).waitFor();
}

function messageIn(session: Session, text: string) {
  return session.page.locator(".messages .msg", { hasText: text });
}

test("[web] two browsers: reactions from the picker and toggled live, a thread in the side panel with live reply counts", async () => {
  const alice = await createPerson(stack, "Alice Reed");
  const bob = await createPerson(stack, "Bob Stone");
  const conv = await group(alice, [bob], "Reactions and threads");
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await signInThroughPages(stack, b, bob);
    await openConversation(a, conv);
    await openConversation(b, conv);
    await liveOver(a.page, "websocket");
    await liveOver(b.page, "websocket");

    // Alice's answer to her message comes 1.5 s late (a slow link), after Bob has seen the
    // message live and reacted: the answer (no reactions yet) must not wipe his reaction.
    await lateAnswers(a.page, /\/api\/conversations\/[^/]+\/messages$/, 1_500, "POST");
    const box = a.page.getByRole("textbox", { name: "Message" });
    await box.fill("Who is in for Friday?");
    await box.press("Enter");
    await messageIn(b, "Who is in for Friday?").waitFor();

    // Bob reacts from the picker; Alice sees it live.
    const bobsCopy = messageIn(b, "Who is in for Friday?");
    await bobsCopy.hover();
    await bobsCopy.getByRole("button", { name: "React with an emoji" }).click();
    await bobsCopy.getByRole("button", { name: "React with 👍" }).click();
    await bobsCopy.getByRole("button", { name: "👍 1, yours" }).waitFor();
    const alicesCopy = messageIn(a, "Who is in for Friday?");
    const aliceThumb = alicesCopy.getByRole("button", { name: "👍 1" });
    await aliceThumb.waitFor();
    // Then Alice's answer arrives (it empties her box), older than Bob's reaction: his stays.
    await a.page.waitForFunction(
      (el) => (el as HTMLTextAreaElement).value === "",
      await box.elementHandle(),
    );
    await aliceThumb.waitFor({ timeout: 2_000 });
    assert.equal(await aliceThumb.getAttribute("aria-pressed"), "false");

    // Alice adds hers by toggling the same reaction: 2 in both browsers, `me` only where true.
    await aliceThumb.click();
    await alicesCopy.getByRole("button", { name: "👍 2, yours" }).waitFor();
    await bobsCopy.getByRole("button", { name: "👍 2, yours" }).waitFor();
    // Bob takes his back: 1 in both, still Alice's.
    await bobsCopy.getByRole("button", { name: "👍 2, yours" }).click();
    await bobsCopy.getByRole("button", { name: "👍 1", exact: true }).waitFor();
    await alicesCopy.getByRole("button", { name: "👍 1, yours" }).waitFor();

    // Alice opens the thread and replies there.
    await alicesCopy.hover();
    await alicesCopy.getByRole("button", { name: "Reply in thread" }).click();
    const alicePanel = a.page.getByRole("complementary", { name: "Thread" });
    await alicePanel.waitFor();
    const reply = alicePanel.getByRole("textbox", { name: "Reply" });
    await reply.fill("I am, from six.");
    await reply.press("Enter");
    await alicePanel.locator(".msg", { hasText: "I am, from six." }).waitFor();

    // Bob sees the root's count live, not the reply in the main list; he opens the thread.
    await bobsCopy.getByRole("button", { name: "1 reply" }).waitFor();
    assert.equal(await messageIn(b, "I am, from six.").count(), 0, "replies stay in the thread");
    await bobsCopy.getByRole("button", { name: "1 reply" }).click();
    const bobPanel = b.page.getByRole("complementary", { name: "Thread" });
    await bobPanel.locator(".msg", { hasText: "I am, from six." }).waitFor();
    const bobReply = bobPanel.getByRole("textbox", { name: "Reply" });
    await bobReply.fill("Count me in too.");
    await bobReply.press("Enter");

    // Alice's open panel and her root's count follow live.
    await alicePanel.locator(".msg", { hasText: "Count me in too." }).waitFor();
    await alicesCopy.getByRole("button", { name: "2 replies" }).waitFor();
    await bobsCopy.getByRole("button", { name: "2 replies" }).waitFor();
    assert.equal(await messageIn(a, "Count me in too.").count(), 0);

    await screenshot(a.page, "chat-reactions-thread");
    await assertAccessible(a.page, "the conversation with a thread open");
    assert.deepEqual(a.errors, []);
    assert.deepEqual(b.errors, []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});
