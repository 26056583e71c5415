/**
 * Moderation in Chromium against a real stack server: a person reports a message from the
 * conversation view (the report dialog: reason and note), an ADMIN finds it in the moderation
 * queue with its snapshot and deletes the message from there with a note, the message becomes a
 * tombstone and the reporter gets the SYSTEM notification in their inbox.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  bearer,
  createPerson,
  openContext,
  screenshot,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";

const stack = await startWebStack();

test("[web] a person reports a message, an ADMIN deletes it from the moderation queue, the reporter is told", async () => {
  const admin = await createPerson(stack, "Mod Admin", "ADMIN");
  const rita = await createPerson(stack, "Rita Reporter");
  const sam = await createPerson(stack, "Sam Spammer");
  const ritaToken = await bearer(stack, rita);
  const conv = await apiCall<{ id: string }>(stack, ritaToken, "POST", "/api/conversations", {
    type: "group",
    participantIds: [sam.id],
    title: "Market talk",
  });
  const spam = await apiCall<{ id: string }>(
    stack,
    await bearer(stack, sam),
    "POST",
    `/api/conversations/${conv.id}/messages`,
    { content: "Cheap pills, click my link" },
  );

  const reporter = await openContext(stack);
  const moderator = await openContext(stack);
  try {
    await signInThroughPages(stack, reporter, rita, `/chat/${conv.id}`);
    const page = reporter.page;
    const message = page.locator(`[data-message-id="${spam.id}"]`);
    await message.waitFor();
    await message.getByRole("button", { name: "Report Sam Spammer's message" }).click();
    const dialog = page.getByRole("dialog", { name: "Report this message" });
    await dialog.getByLabel("Reason").selectOption("spam");
    await dialog.getByLabel("Note (optional)").fill("Selling pills to everyone");
    await dialog.getByRole("button", { name: "Send report" }).click();
    await page.getByText("the message was reported to the moderators").waitFor();

    await signInThroughPages(stack, moderator, admin, "/admin/moderation");
    const queue = moderator.page;
    await queue.getByRole("heading", { name: "Moderation" }).waitFor();
    const card = queue.locator(`[data-testid="reports"] li`).filter({
      hasText: "Cheap pills, click my link",
    });
    await card.waitFor();
    await card.getByText("Selling pills to everyone").waitFor();
    await card.getByText("Rita Reporter", { exact: false }).waitFor();
    await screenshot(queue, "moderation-queue");
    await card.getByRole("button", { name: "Resolve" }).click();
    const resolve = queue.getByRole("dialog", { name: "Resolve the report" });
    await resolve.getByLabel("Action").selectOption("delete_message");
    await resolve.getByLabel("Note").fill("Pill spam");
    await resolve.getByRole("button", { name: "Resolve" }).click();
    await queue.getByText("Report resolved: actioned (delete_message).").waitFor();
    assert.equal(await card.count(), 0, "the report left the open queue");

    // The message is a tombstone for the reporter, and their inbox has the notification.
    await page.goto(`${stack.base}/chat/${conv.id}`);
    await message.getByText("This message was deleted.").waitFor();
    await page.goto(`${stack.base}/notifications`);
    await page.getByText("Your report was reviewed").waitFor();
    await page.getByText("A moderator reviewed the message you reported and took action.", {
      exact: false,
    }).waitFor();
    assert.deepEqual([...reporter.errors, ...moderator.errors], []);
  } finally {
    await reporter.context.close();
    await moderator.context.close();
  }
});
