/**
 * Every page of the web client, on a desktop and a phone-sized screen: an axe-core scan with no
 * serious or critical violation, and a screenshot (test-results/screenshots/, git-ignored).
 * Also: the pages work from the keyboard alone, and the white-label shows on every page.
 */
import assert from "node:assert/strict";
import { test } from "../helpers.ts";
import {
  apiCall,
  assertAccessible,
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

const stack = await startWebStack();

const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

/** A conversation with some history, so the chat pages have something to show. */
async function scene(): Promise<{ admin: Person; member: Person; conversation: string }> {
  const admin = await createPerson(stack, "Grace Hopper", "ADMIN");
  const member = await createPerson(stack, "Alan Turing", "MEMBER");
  const other = await createPerson(stack, "Katherine Johnson", "CONFIDENTIAL");
  const adminToken = await bearer(stack, admin);
  const memberToken = await bearer(stack, member);
  const group = await apiCall<{ id: string }>(stack, adminToken, "POST", "/api/conversations", {
    type: "group",
    participantIds: [member.id, other.id],
    title: "Orbit calculations",
  });
  const lines: [string, string][] = [
    [adminToken, "Morning! The trajectory numbers are in the shared folder."],
    [memberToken, "Thanks. I ran them through the new machine overnight."],
    [adminToken, "Any surprises?"],
    [memberToken, "One: the re-entry window is 40 seconds shorter than we assumed."],
  ];
  let last = "";
  for (const [token, content] of lines) {
    last = (await apiCall<{ id: string }>(
      stack,
      token,
      "POST",
      `/api/conversations/${group.id}/messages`,
      { content, ...(content.startsWith("One:") ? {} : {}) },
    )).id;
  }
  await apiCall(stack, adminToken, "POST", `/api/conversations/${group.id}/messages`, {
    content: "Let's check it by hand before the review.",
    replyToId: last,
  });
  await apiCall(stack, adminToken, "POST", "/api/conversations", {
    type: "direct",
    participantIds: [other.id],
  });
  return { admin, member, conversation: group.id };
}

async function check(session: Session, name: string): Promise<void> {
  // Wait for the page to settle: nothing says "Loading" any more.
  await session.page.waitForFunction(() =>
    ![...document.querySelectorAll('[role="status"]')].some((el) =>
      /Loading/.test(el.textContent ?? "")
    )
  );
  await assertAccessible(session.page, name);
  await screenshot(session.page, name);
}

test("[web] every page passes axe (no serious or critical violation) on desktop and phone, with screenshots", async () => {
  const { admin, member, conversation } = await scene();
  for (const [device, options] of [["desktop", {}], ["phone", PHONE]] as const) {
    const visitor = await openContext(stack, options);
    const adminSession = await openContext(stack, options);
    const memberSession = await openContext(stack, options);
    try {
      // Signed out.
      await visitor.page.goto(`${stack.base}/signin`);
      await visitor.page.getByLabel("E-mail address").waitFor();
      await check(visitor, `${device}-signin`);
      await visitor.page.getByLabel("E-mail address").fill(member.email);
      await visitor.page.getByRole("button", { name: "Send me a sign-in link" }).click();
      await visitor.page.getByTestId("dev-magic-link").waitFor();
      await check(visitor, `${device}-signin-sent`);

      // The chat, as the member.
      await signInThroughPages(stack, memberSession, member);
      const page = memberSession.page;
      await page.getByTestId("conversations").waitFor();
      await check(memberSession, `${device}-chat-list`);
      await page.goto(`${stack.base}/chat/${conversation}`);
      await page.locator(".msg", { hasText: "Let's check it by hand" }).waitFor();
      await liveOver(page, "websocket");
      await check(memberSession, `${device}-chat-conversation`);
      await page.goto(`${stack.base}/chat`);
      await page.getByRole("button", { name: "New conversation" }).click();
      await page.getByRole("dialog").waitFor();
      await check(memberSession, `${device}-chat-new-conversation`);
      await page.keyboard.press("Escape");
      await page.getByRole("dialog").waitFor({ state: "hidden" });
      // A page the member may not open, and one that does not exist.
      await page.goto(`${stack.base}/admin/users`);
      await page.getByRole("heading", { name: "Not allowed" }).waitFor();
      await check(memberSession, `${device}-not-allowed`);
      await page.goto(`${stack.base}/nowhere`);
      await page.getByRole("heading", { name: "Page not found" }).waitFor();
      await check(memberSession, `${device}-not-found`);

      // The admin area.
      await signInThroughPages(stack, adminSession, admin, "/admin/users");
      const adminPage = adminSession.page;
      await adminPage.getByTestId("users-table").waitFor();
      await check(adminSession, `${device}-admin-users`);
      await adminPage.getByLabel("Search name or e-mail").fill(member.email);
      await adminPage.locator(`tr[data-user-id="${member.id}"]`)
        .getByRole("button", { name: "Change role of Alan Turing" }).click();
      await adminPage.getByRole("dialog").waitFor();
      await check(adminSession, `${device}-admin-role-dialog`);
      await adminPage.keyboard.press("Escape");
      for (const section of ["config", "analytics", "security", "access-log"]) {
        await adminPage.goto(`${stack.base}/admin/${section}`);
        await adminPage.locator(".admin-body h1").waitFor();
        await check(adminSession, `${device}-admin-${section}`);
      }
      assert.deepEqual([...visitor.errors, ...memberSession.errors, ...adminSession.errors], []);
    } finally {
      await visitor.context.close();
      await adminSession.context.close();
      await memberSession.context.close();
    }
  }
});

test("[web] from the keyboard alone: sign in, open a conversation, send a message", async () => {
  const { member, conversation } = await scene();
  const session = await openContext(stack);
  try {
    const { page } = session;
    await page.goto(`${stack.base}/signin`);
    await page.getByLabel("E-mail address").waitFor();
    // The skip link comes first, then the form; Enter submits it.
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
    await page.getByLabel("E-mail address").focus();
    await page.keyboard.type(member.email);
    await page.keyboard.press("Enter");
    const link = page.getByTestId("dev-magic-link");
    await link.waitFor();
    await link.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL((url) => url.pathname === "/chat");
    // Tab through the list to the conversation and open it.
    const target = page.locator(`a[data-conversation-id="${conversation}"]`);
    await target.waitFor();
    for (
      let i = 0;
      i < 30 && !(await target.evaluate((el) => el === document.activeElement));
      i++
    ) {
      await page.keyboard.press("Tab");
    }
    assert.ok(await target.evaluate((el) => el === document.activeElement), "reached by Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("textbox", { name: "Message" }).waitFor();
    await page.getByRole("textbox", { name: "Message" }).focus();
    await page.keyboard.type("Typed without a mouse");
    await page.keyboard.press("Enter");
    await page.locator(".msg.mine", { hasText: "Typed without a mouse" }).waitFor();
    // The focused element is always visibly outlined.
    const outline = await page.evaluate(() =>
      getComputedStyle(document.activeElement!).outlineStyle
    );
    assert.notEqual(outline, "none");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] the white-label (brand name) shows on every page, signed in or not", async () => {
  const [{ doc }] = await stack.deps.sql<{ doc: { whiteLabel: { brandName: string } } }[]>`
    select app.public_config() as doc`;
  const { member } = await scene();
  const session = await openContext(stack);
  try {
    const { page } = session;
    await page.goto(`${stack.base}/signin`);
    await page.getByTestId("brand-name").first().getByText(doc.whiteLabel.brandName).waitFor();
    assert.match(await page.title(), new RegExp(`${doc.whiteLabel.brandName}$`));
    await signInThroughPages(stack, session, member);
    await page.getByTestId("brand-name").getByText(doc.whiteLabel.brandName).waitFor();
    assert.equal(await page.title(), `Chat · ${doc.whiteLabel.brandName}`);
  } finally {
    await session.context.close();
  }
});

test("[web] sign-out ends the session: back to sign-in, pages need a new sign-in, live updates stop", async () => {
  const { member } = await scene();
  const session = await openContext(stack);
  try {
    const { page } = session;
    await signInThroughPages(stack, session, member);
    await liveOver(page, "websocket");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.getByLabel("E-mail address").waitFor();
    assert.equal(await page.getByTestId("live-status").count(), 0, "no live indicator");
    const cookies = (await session.context.cookies()).map((c) => c.name);
    assert.deepEqual(cookies.filter((n) => n !== "agora-csrf"), [], "session cookies cleared");
    // The chat sends a signed-out visitor to sign in, and keeps where they wanted to go.
    await page.goto(`${stack.base}/chat`);
    await page.waitForURL((url) => url.pathname === "/signin" && url.search === "?next=%2Fchat");
    const token = await page.evaluate(async () =>
      (await fetch("/api/auth/token", { method: "POST" })).status
    );
    assert.equal(token, 401, "no token for a signed-out page");
    assert.deepEqual(session.errors.filter((e) => !/status of 401/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

// Last in the file (tests run in order): this file's browser and server stop here, so no Chromium
// outlives the run.
test("[web] teardown: this file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
