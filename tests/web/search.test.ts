/**
 * Message search in Chromium: the search box above the conversation list finds a message of
 * another conversation, shows its highlight with the match marked and the rest as text (a
 * message holding markup shows that markup as text, and no element of it reaches the page), and
 * opens the conversation from the result.
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

test("[web] the chat's search box finds a message, marks the match, shows markup as text and opens the conversation", async () => {
  const alice = await createPerson(stack, "Alice Search");
  const bob = await createPerson(stack, "Bob Search");
  const aliceToken = await bearer(stack, alice);
  const bobToken = await bearer(stack, bob);
  const found = await apiCall<{ id: string }>(stack, aliceToken, "POST", "/api/conversations", {
    type: "group",
    participantIds: [bob.id],
    title: "Harbour plans",
  });
  const other = await apiCall<{ id: string }>(stack, aliceToken, "POST", "/api/conversations", {
    type: "group",
    participantIds: [bob.id],
    title: "Lunch",
  });
  const content = `<img src=x onerror="globalThis.__pwned=1"> The lighthouse & pier budget`;
  await apiCall(stack, aliceToken, "POST", `/api/conversations/${found.id}/messages`, {
    content,
  });
  await apiCall(stack, bobToken, "POST", `/api/conversations/${other.id}/messages`, {
    content: "Pizza at noon?",
  });

  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, b, bob);
    await b.page.locator(".conversation", { hasText: "Lunch" }).waitFor();
    const box = b.page.getByRole("searchbox", { name: "Search messages" });
    await box.fill("li");
    await b.page.getByText("Type at least 3 characters").waitFor();
    await box.fill("LIGHTHOUSE");
    const results = b.page.getByTestId("search-results");
    const result = results.locator(".search-result").first();
    await result.waitFor();
    assert.equal(await results.locator(".search-result").count(), 1);
    assert.equal(await result.locator(".conversation-name").textContent(), "Harbour plans");
    assert.equal(await result.locator("mark").textContent(), "lighthouse");
    assert.equal(await result.locator(".search-highlight").textContent(), content);
    // The markup in the message is text: no element of it is in the page, nothing ran.
    assert.equal(await results.locator("img").count(), 0);
    assert.equal(
      await b.page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned),
      undefined,
    );
    await screenshot(b.page, "chat-search");
    await result.click();
    await b.page.waitForURL((url) => url.pathname === `/chat/${found.id}`);
    await b.page.locator(`.conversation-view[data-conversation-id="${found.id}"]`).waitFor();
    await b.page.locator(".msg .content", { hasText: "The lighthouse & pier budget" }).waitFor();
    // Clearing the box brings the conversation list back.
    await box.fill("");
    await b.page.locator(".conversation", { hasText: "Lunch" }).waitFor();
    assert.deepEqual(b.errors, []);
  } finally {
    await b.context.close();
  }
});

// Last in the file (tests run in order): this file's browser and server stop here.
test("[web] teardown: the search file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
