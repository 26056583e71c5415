/**
 * Mentions, mute, block, report and leave in Chromium, two people in one group: Alice mentions
 * Bob through the composer's picker (typing `@`; her browser paints late, and what she types
 * right after the pick follows the name), Bob sees the mention highlighted; Bob mutes
 * the conversation from its menu (for 8 hours, then until he unmutes) and the page remembers it;
 * Bob blocks Alice from her message, her next message arrives marked for him while Alice's
 * pages look as before, and starting a direct conversation with Bob is refused to her; Bob
 * reports Alice from her profile, finds her in his blocked list and unblocks her there; Bob
 * leaves the group from the menu.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  assertAccessible,
  bearer,
  createPerson,
  lateFrames,
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

test("[web] two browsers: a mention from the picker, mute from the menu, block and report from a message and a profile, unblock from the list, leave", async () => {
  const alice = await createPerson(stack, "Alice Reed");
  const bob = await createPerson(stack, "Bob Stone");
  const carol = await createPerson(stack, "Carol Hart");
  const conv = await group(carol, [alice, bob], "Community journey");
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    // Alice's browser paints late, as a busy phone does: each frame comes 600 ms after it was
    // asked for. What she types right after picking a name must still follow the name.
    await a.context.addInitScript(lateFrames, 600);
    // Bob's too: the report dialog's reason, picked as soon as it opens, is the one sent.
    await b.context.addInitScript(lateFrames, 600);
    await signInThroughPages(stack, a, alice);
    await signInThroughPages(stack, b, bob);
    await openConversation(a, conv);
    await openConversation(b, conv);
    await liveOver(a.page, "websocket");
    await liveOver(b.page, "websocket");

    // Alice mentions Bob through the picker.
    const box = a.page.getByRole("textbox", { name: "Message" });
    await box.pressSequentially("Hello @Bo");
    const picker = a.page.getByRole("listbox", { name: "Mention someone" });
    await picker.getByRole("option", { name: "Bob Stone" }).waitFor();
    assert.equal(await picker.getByRole("option", { name: "Alice Reed" }).count(), 0);
    await box.press("Enter");
    assert.equal(await box.inputValue(), "Hello @Bob Stone ");
    // At a person's pace (100 ms a key): the late frame comes while she types.
    await box.pressSequentially("look at this", { delay: 100 });
    await box.press("Enter");
    const mentioned = messageIn(b, "look at this");
    try {
      await mentioned.locator("mark.mention.me", { hasText: "@Bob Stone" }).waitFor();
    } catch (err) {
      // Say what each page showed (the text, the marks, who the participants are).
      const shown = (s: Session) =>
        s.page.locator(".conversation-view").evaluate((e) => e.outerHTML.slice(0, 4000));
      throw new Error(
        `${(err as Error).message}\nBob's page: ${await shown(b)}\nAlice's page: ${await shown(a)}`,
      );
    }
    await messageIn(a, "look at this").locator("mark.mention", { hasText: "@Bob Stone" })
      .waitFor();

    // Bob mutes from the conversation's menu: 8 hours, then until he unmutes; it is remembered.
    await b.page.getByRole("button", { name: "Conversation menu" }).click();
    await assertAccessible(b.page, "the conversation with its menu open");
    await b.page.getByRole("menuitem", { name: "Mute for 8 hours" }).click();
    await b.page.getByTestId("muted").filter({ hasText: "Muted until" }).waitFor();
    await b.page.getByRole("button", { name: "Conversation menu" }).click();
    await b.page.getByRole("menuitem", { name: "Unmute" }).click();
    await b.page.getByRole("button", { name: "Conversation menu" }).click();
    await b.page.getByRole("menuitem", { name: "Mute until I unmute" }).click();
    await openConversation(b, conv);
    assert.equal((await b.page.getByTestId("muted").textContent())?.trim(), "Muted");

    // Bob blocks Alice from her message; her next message arrives marked for him only.
    await mentioned.hover();
    await mentioned.getByRole("button", { name: "Block Alice Reed" }).click();
    await b.page.getByRole("dialog", { name: "Block Alice Reed?" })
      .getByRole("button", { name: "Block" }).click();
    await mentioned.getByTestId("sender-blocked").waitFor();
    await box.fill("still here");
    await box.press("Enter");
    await messageIn(b, "still here").getByTestId("sender-blocked").waitFor();
    assert.equal(await a.page.getByTestId("sender-blocked").count(), 0);
    assert.equal(await a.page.locator(".msg.from-blocked").count(), 0);

    // Alice's view of Bob is unchanged; a direct conversation with him is refused.
    await a.page.goto(`${stack.base}/people/${bob.id}`);
    await a.page.getByRole("heading", { name: "Bob Stone" }).waitFor();
    assert.equal(await a.page.getByTestId("blocked-note").count(), 0);
    await a.page.getByRole("button", { name: "Message" }).click();
    await a.page.getByRole("status").filter({ hasText: "cannot message" }).waitFor();

    // Bob reports Alice from her profile, where the block shows with Unblock.
    await b.page.goto(`${stack.base}/people/${alice.id}`);
    await b.page.getByTestId("blocked-note").waitFor();
    await b.page.getByRole("button", { name: "Report" }).click();
    const report = b.page.getByRole("dialog", { name: "Report Alice Reed" });
    await report.getByLabel("Reason").selectOption("abuse");
    await report.getByRole("button", { name: "Send report" }).click();
    await b.page.getByRole("status").filter({ hasText: "reported to the moderators" }).waitFor();
    const reports = await stack.deps.sql<{ reason: string }[]>`
      select reason::text from app.reports where reporter_id = ${bob.id} and subject_id = ${alice.id}`;
    assert.deepEqual([...reports], [{ reason: "abuse" }], "the reason picked is the one sent");
    await assertAccessible(b.page, "a person's profile, blocked");
    await screenshot(b.page, "person-blocked");

    // The blocked list on his profile page, and Unblock there.
    await b.page.goto(`${stack.base}/profile`);
    const list = b.page.getByRole("region", { name: "Blocked people" });
    await list.getByRole("link", { name: "Alice Reed" }).waitFor();
    await list.getByRole("button", { name: "Unblock Alice Reed" }).click();
    await list.getByText("You block nobody.").waitFor();
    await assertAccessible(b.page, "the profile page with the blocked list");

    // Unblocked: Alice may write to him directly again.
    await a.page.getByRole("button", { name: "Message" }).click();
    await a.page.waitForURL(/\/chat\/[0-9a-f-]{36}$/);

    // Bob leaves the group from the menu.
    await openConversation(b, conv);
    await b.page.getByRole("button", { name: "Conversation menu" }).click();
    await b.page.getByRole("menuitem", { name: "Leave conversation" }).click();
    await b.page.getByRole("dialog", { name: "Leave this conversation?" })
      .getByRole("button", { name: "Leave" }).click();
    await b.page.waitForURL(`${stack.base}/chat`);
    const token = await bearer(stack, bob);
    const mine = await apiCall<{ items: { id: string }[] }>(
      stack,
      token,
      "GET",
      "/api/conversations",
    );
    assert.ok(!mine.items.some((c) => c.id === conv), "Bob is no longer in the group");

    assert.deepEqual(a.errors.filter((e) => !/403/.test(e)), []);
    assert.deepEqual(b.errors, []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});
