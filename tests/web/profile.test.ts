/**
 * Profiles in Chromium, two people: Alice sets her display name and uploads a picture on the
 * profile page; her header shows them at once, and her other tab through `profile.updated` on
 * her own topic. Bob sees her new name and picture in their conversation and in the directory
 * from his next read (he navigates; other people's profile changes are not pushed to him).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  assertAccessible,
  bearer,
  createPerson,
  liveOver,
  openContext,
  pngSquare,
  screenshot,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";

const stack = await startWebStack();

/** Run in the page: whether the <img> at `selector` loaded (the browser could fetch it). */
function loadedImage(selector: string): boolean {
  const img = document.querySelector<HTMLImageElement>(selector);
  return Boolean(img?.complete && img.naturalWidth > 0);
}

/**
 * Run in the page: writes the display-name field's value, as it is when the field first enters
 * the page, to `<html data-name-first-shown>`.
 */
function watchNameField() {
  const watch = new MutationObserver(() => {
    const field = document.querySelector<HTMLInputElement>("#profile-name");
    if (!field) return;
    document.documentElement.dataset.nameFirstShown = field.value;
    watch.disconnect();
  });
  watch.observe(document.body, { childList: true, subtree: true });
}

test("[web] profile: a new name and picture show in the header at once, live in another tab, and to another person from their next read", async () => {
  const alice = await createPerson(stack, "Alice Martin", "SUBSCRIBER");
  const bob = await createPerson(stack, "Bob Okafor", "SUBSCRIBER");
  const direct = await apiCall<{ id: string }>(
    stack,
    await bearer(stack, alice),
    "POST",
    "/api/conversations",
    { type: "direct", participantIds: [bob.id] },
  );
  const newName = `Alice Zhou ${crypto.randomUUID().slice(0, 4)}`;
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, b, bob, `/chat/${direct.id}`);
    const head = b.page.locator(".conversation-head h2");
    await head.getByText("Alice Martin").waitFor();

    await signInThroughPages(stack, a, alice, "/chat");
    const otherTab = await a.context.newPage();
    await otherTab.goto(`${stack.base}/chat`);
    await otherTab.getByTestId("who").getByText("Alice Martin").waitFor();
    await liveOver(otherTab, "websocket");

    // The profile page, from the account page. The name field holds her name from the moment
    // it is in the page (seen at the first change of the page that has it), not a frame later.
    await a.page.getByTestId("who").click();
    await a.page.evaluate(watchNameField);
    await a.page.getByTestId("edit-profile").click();
    await a.page.waitForURL((url) => url.pathname === "/profile");
    const nameBox = a.page.getByLabel("Display name");
    await nameBox.waitFor();
    assert.equal(
      await a.page.locator("html").getAttribute("data-name-first-shown"),
      "Alice Martin",
    );
    assert.equal(await nameBox.inputValue(), "Alice Martin");
    await assertAccessible(a.page, "profile page");

    await nameBox.fill(`  ${newName}  `);
    await a.page.getByLabel("About you").fill("Plants and databases.");
    await a.page.getByLabel("Time zone").selectOption("Europe/Berlin");
    await a.page.getByRole("button", { name: "Save" }).click();
    await a.page.getByRole("status").getByText("Saved.").waitFor();
    await a.page.getByTestId("who-name").getByText(newName, { exact: true }).waitFor();
    // The other tab hears profile.updated on user:<id> and shows the name without a reload.
    await otherTab.getByTestId("who-name").getByText(newName, { exact: true }).waitFor();

    await a.page.locator("#profile-image").setInputFiles({
      name: "me.png",
      mimeType: "image/png",
      buffer: Buffer.from(pngSquare(64, [20, 160, 90])),
    });
    await a.page.getByRole("status").getByText("Picture saved.").waitFor();
    const picture = '[data-testid="profile-picture"] img';
    await a.page.waitForFunction(loadedImage, picture);
    const src = await a.page.locator(picture).getAttribute("src");
    assert.match(src ?? "", new RegExp(`/api/users/${alice.id}/image\\?v=`));
    const headerPicture = '[data-testid="who"] img';
    await a.page.waitForFunction(loadedImage, headerPicture);
    await otherTab.waitForFunction(loadedImage, headerPicture);

    // Bob, at his next read: the conversation ...
    await b.page.goto(`${stack.base}/chat/${direct.id}`);
    await head.getByText(newName, { exact: true }).waitFor();
    const avatar = `.participant-avatars li[title^="${newName}"] img`;
    await b.page.waitForFunction(loadedImage, avatar);
    assert.equal(await b.page.locator(avatar).getAttribute("src"), src);
    // ... and the directory.
    await b.page.getByRole("button", { name: "New conversation" }).click();
    await b.page.getByLabel("Find people by name").fill(newName.slice(0, 10));
    const found = b.page.locator(".person", { hasText: newName });
    await found.waitFor();
    const inDirectory = `.person img[src="${src}"]`;
    await b.page.waitForFunction(loadedImage, inDirectory);
    await screenshot(a.page, "profile");

    // Removing the picture: the initials again.
    await a.page.getByRole("button", { name: "Remove picture" }).click();
    await a.page.getByRole("status").getByText("Picture removed.").waitFor();
    await a.page.locator('[data-testid="who"] .avatar-initials').waitFor();

    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});
