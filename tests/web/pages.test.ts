/**
 * Every page of the web client, on a desktop and a phone-sized screen: an axe-core scan with no
 * serious or critical violation, and a screenshot (test-results/screenshots/, git-ignored).
 * Also: the pages work from the keyboard alone, and the white-label shows on every page.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import { fund, platform } from "../support/wallet.ts";
import { deliveredOrder, nftsIndexed, openShop } from "./scenes.ts";
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
const contracts = await platform(stack.deps);

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
      const toggle = page.getByTestId("menu-toggle");
      if (device === "phone") {
        // One row: brand, the menu, the bell, the avatar; the person's name is in the menu.
        const header = await page.locator(".app-header").boundingBox();
        assert.ok(header && header.height < 70, `the header is one row (${header?.height} px)`);
        assert.equal(await toggle.getAttribute("aria-expanded"), "false");
        await toggle.click();
        assert.equal(await toggle.getAttribute("aria-expanded"), "true");
        await page.getByTestId("menu-who").getByText(member.name).waitFor();
        await page.getByTestId("menu-panel").getByRole("link", { name: "Chat" }).waitFor();
        await check(memberSession, `${device}-header-menu`);
        await page.keyboard.press("Escape");
        await page.getByTestId("menu-panel").waitFor({ state: "detached" });
        assert.equal(await toggle.evaluate((el) => el === document.activeElement), true);
      } else {
        assert.equal(await toggle.isVisible(), false, "no menu button on a desktop");
      }
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

/**
 * The pages of the store, the vendor area, the wallet, the account and the admin's store and user
 * actions, with data in them: a shop with products (one sold out), an order being prepared, a
 * settled one, a pending application, a funded wallet with NFTs.
 */
async function domainScene() {
  const tag = crypto.randomUUID().slice(0, 6);
  const shop = await openShop(stack, `Harbour Pottery ${tag}`, [
    { title: `Sea-glaze bowl ${tag}`, category: "kitchen", price: 3400, stock: 40 },
    { title: `Tide mug ${tag}`, category: "kitchen", price: 1900, stock: 40 },
    { title: `Driftwood vase ${tag}`, category: "decor", price: 5200, stock: 0 },
  ]);
  const buyer = await createPerson(stack, "Bea Buyer", "MEMBER");
  const friend = await createPerson(stack, "Finn Friend", "MEMBER");
  // Their first sign-ins make their wallets.
  await bearer(stack, buyer);
  await bearer(stack, friend);
  for (const person of [buyer, friend]) {
    const [w] = await stack.deps.sql<{ address: string }[]>`
      select address from app.wallets where user_id = ${person.id}`;
    await fund(contracts, w.address);
  }
  await nftsIndexed(stack, buyer.id);
  // An order being prepared (paid, then processing) and one delivered and settled.
  const preparing = await deliveredOrder(stack, shop, buyer, shop.products[0].id, "processing");
  await deliveredOrder(stack, shop, buyer, shop.products[1].id);
  const admin = await createPerson(stack, "Ida Inspector", "ADMIN");
  const adminToken = await bearer(stack, admin);
  await apiCall(stack, adminToken, "POST", "/api/admin/settlements/run", {}, 200);
  // An application waiting for review.
  const applicant = await createPerson(stack, "Olga Applicant", "SUBSCRIBER");
  await apiCall(stack, await bearer(stack, applicant), "POST", "/api/store/vendors/apply", {
    name: `Olga's Oils ${tag}`,
    description: "Cold-pressed oils from a family grove.",
    contactEmail: applicant.email,
    country: "GR",
  });
  return { tag, shop, buyer, friend, admin, preparing };
}

test("[web] the store, vendor, wallet, account and admin pages pass axe on desktop and phone, with screenshots", async () => {
  const { tag, shop, buyer, admin, preparing } = await domainScene();
  for (const [device, options] of [["desktop", {}], ["phone", PHONE]] as const) {
    const buyerSession = await openContext(stack, options);
    const vendorSession = await openContext(stack, options);
    const adminSession = await openContext(stack, options);
    const visitor = await openContext(stack, options);
    try {
      // Signed out: the catalog is public, the header offers sign-in.
      await visitor.page.goto(`${stack.base}/store?q=${tag}`);
      await visitor.page.getByTestId("products").waitFor();
      await visitor.page.getByRole("link", { name: "Sign in" }).waitFor();
      await check(visitor, `${device}-store-visitor`);

      // The buyer: account, store, checkout, orders.
      await signInThroughPages(stack, buyerSession, buyer, "/account");
      const page = buyerSession.page;
      await page.getByTestId("sessions").waitFor();
      await check(buyerSession, `${device}-account`);
      await page.goto(`${stack.base}/store?q=${tag}`);
      await page.getByTestId("products").waitFor();
      await check(buyerSession, `${device}-store-catalog`);
      await page.goto(`${stack.base}/store/products/${shop.products[0].id}`);
      await page.getByRole("button", { name: "Add to cart" }).click();
      await page.getByRole("link", { name: "Go to the cart" }).waitFor();
      await check(buyerSession, `${device}-store-product`);
      await page.getByRole("link", { name: "Go to the cart" }).click();
      await page.getByTestId("cart-total").waitFor();
      await check(buyerSession, `${device}-store-cart`);
      await page.getByLabel("Full name").fill("Bea Buyer");
      await page.getByLabel("Address", { exact: true }).fill("4 Quay Street");
      await page.getByLabel("City").fill("Bristol");
      await page.getByLabel("Postal code").fill("BS1 4DJ");
      await page.getByLabel("Country", { exact: true }).selectOption("GB");
      await page.getByRole("button", { name: "Check out" }).click();
      await page.getByRole("heading", { name: "Payment" }).waitFor();
      await check(buyerSession, `${device}-store-checkout`);
      await page.goto(`${stack.base}/store/orders`);
      await page.getByTestId("orders").waitFor();
      await check(buyerSession, `${device}-store-orders`);
      await page.goto(`${stack.base}/store/orders/${preparing}`);
      await page.getByRole("heading", { name: /^Order from/ }).waitFor();
      await check(buyerSession, `${device}-store-order`);

      // The wallet.
      await page.goto(`${stack.base}/wallet`);
      await page.getByTestId("balance-AGU").waitFor();
      await page.getByTestId("transactions").waitFor();
      await check(buyerSession, `${device}-wallet`);
      await page.goto(`${stack.base}/wallet/send`);
      await page.getByLabel("Token").waitFor();
      await check(buyerSession, `${device}-wallet-send`);
      await page.getByLabel("Find a person by name").fill("Finn Friend");
      await page.getByRole("button", { name: "Finn Friend" }).first().click();
      await page.getByLabel("Amount (ETH)").fill("0.25");
      await page.getByRole("button", { name: "Review" }).click();
      await page.getByRole("heading", { name: "Confirm the transfer" }).waitFor();
      await check(buyerSession, `${device}-wallet-confirm`);
      await page.goto(`${stack.base}/wallet/nfts`);
      await page.getByTestId("nfts").waitFor();
      await check(buyerSession, `${device}-wallet-nfts`);
      await page.goto(`${stack.base}/wallet/tokens`);
      await page.getByTestId("tokens").waitFor();
      await check(buyerSession, `${device}-wallet-tokens`);
      await page.goto(`${stack.base}/wallet/export`);
      await page.getByRole("heading", { name: "Export your key" }).waitFor();
      await check(buyerSession, `${device}-wallet-export`);
      await page.goto(`${stack.base}/vendor`);
      await page.getByRole("heading", { name: "Sell on this platform" }).waitFor();
      await check(buyerSession, `${device}-vendor-apply`);

      // The shop's owner.
      await signInThroughPages(stack, vendorSession, shop.owner, "/vendor");
      const vendorPage = vendorSession.page;
      await vendorPage.getByTestId("vendor-status").waitFor();
      await check(vendorSession, `${device}-vendor-overview`);
      await vendorPage.goto(`${stack.base}/vendor/products`);
      await vendorPage.getByTestId("vendor-products").waitFor();
      await check(vendorSession, `${device}-vendor-products`);
      await vendorPage.getByRole("button", { name: "Add a product" }).click();
      await vendorPage.getByRole("dialog").waitFor();
      await check(vendorSession, `${device}-vendor-product-dialog`);
      await vendorPage.keyboard.press("Escape");
      await vendorPage.getByRole("dialog").waitFor({ state: "hidden" });
      await vendorPage.goto(`${stack.base}/vendor/orders`);
      await vendorPage.getByTestId("vendor-orders").waitFor();
      await check(vendorSession, `${device}-vendor-orders`);
      await vendorPage.locator(`[data-order-id="${preparing}"]`)
        .getByRole("button", { name: "Mark shipped…" }).click();
      await vendorPage.getByRole("dialog").waitFor();
      await check(vendorSession, `${device}-vendor-ship-dialog`);
      await vendorPage.keyboard.press("Escape");
      await vendorPage.getByRole("dialog").waitFor({ state: "hidden" });
      await vendorPage.goto(`${stack.base}/vendor/settlements`);
      await vendorPage.getByTestId("settlements").waitFor();
      await check(vendorSession, `${device}-vendor-settlements`);

      // The admin's store and user actions.
      await signInThroughPages(stack, adminSession, admin, "/admin/vendors");
      const adminPage = adminSession.page;
      await adminPage.getByTestId("admin-vendors").waitFor();
      await check(adminSession, `${device}-admin-vendors`);
      await adminPage.getByRole("button", { name: `Approve Olga's Oils ${tag}` }).click();
      await adminPage.getByRole("dialog").waitFor();
      await check(adminSession, `${device}-admin-vendor-dialog`);
      await adminPage.keyboard.press("Escape");
      await adminPage.getByRole("dialog").waitFor({ state: "hidden" });
      await adminPage.goto(`${stack.base}/admin/settlements`);
      await adminPage.getByTestId("settlements").waitFor();
      await check(adminSession, `${device}-admin-settlements`);
      await adminPage.goto(`${stack.base}/admin/users`);
      await adminPage.getByLabel("Search name or e-mail").fill(buyer.email);
      await adminPage.locator(`tr[data-user-id="${buyer.id}"]`)
        .getByRole("button", { name: "Suspend Bea Buyer" }).click();
      await adminPage.getByRole("dialog").waitFor();
      await check(adminSession, `${device}-admin-suspend-dialog`);
      await adminPage.keyboard.press("Escape");
      assert.deepEqual(
        [
          ...visitor.errors,
          ...buyerSession.errors,
          ...vendorSession.errors,
          ...adminSession.errors,
        ],
        [],
      );
    } finally {
      await visitor.context.close();
      await buyerSession.context.close();
      await vendorSession.context.close();
      await adminSession.context.close();
    }
  }
});

test("[web] the notification pages (inbox, preferences, bulk send) pass axe on desktop and phone, with screenshots", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const admin = await createPerson(stack, `Nell Notifier ${tag}`, "ADMIN");
  const member = await createPerson(stack, `Moss Member ${tag}`, "MEMBER");
  const friend = await createPerson(stack, `Fay Friend ${tag}`, "MEMBER");
  const adminToken = await bearer(stack, admin);
  // A conversation (a MESSAGE notification with a link), an important one, a read one.
  await apiCall(stack, await bearer(stack, friend), "POST", "/api/conversations", {
    type: "direct",
    participantIds: [member.id],
  });
  const notices = [
    { type: "SYSTEM", title: "Planned maintenance on Saturday", priority: "high" },
    { type: "OPPORTUNITY", title: "A partner is looking for a designer" },
    { type: "ENTITY", title: "You were invited to the spring fair" },
  ];
  const made = [];
  for (const n of notices) {
    made.push(
      await apiCall<{ id: string }>(stack, adminToken, "POST", "/api/notifications", {
        userId: member.id,
        body: `${n.title}: the details are in the announcement.`,
        ...n,
      }),
    );
  }
  await apiCall(stack, await bearer(stack, member), "PUT", `/api/notifications/${made[2].id}/read`);
  for (const [device, options] of [["desktop", {}], ["phone", PHONE]] as const) {
    const memberSession = await openContext(stack, options);
    const adminSession = await openContext(stack, options);
    try {
      await signInThroughPages(stack, memberSession, member, "/notifications");
      const page = memberSession.page;
      await page.locator("li.notification").nth(3).waitFor();
      await check(memberSession, `${device}-notifications-inbox`);
      await page.goto(`${stack.base}/notifications/preferences`);
      await page.getByRole("checkbox", { name: "Push: Messages and conversations" }).waitFor();
      await page.getByLabel("Hold push and e-mail during quiet hours").check();
      await page.getByLabel("Time zone").waitFor();
      await check(memberSession, `${device}-notifications-preferences`);

      await signInThroughPages(stack, adminSession, admin, "/notifications/send");
      const adminPage = adminSession.page;
      await adminPage.getByLabel("Title").waitFor();
      await check(adminSession, `${device}-notifications-send`);
      await adminPage.getByLabel("Particular people").check();
      await adminPage.getByLabel("Find a person by name or e-mail").fill(member.email);
      await adminPage.getByRole("button", { name: `Add ${member.name}` }).click();
      await adminPage.getByTestId("chosen-people").getByText(member.name).waitFor();
      await adminPage.getByLabel("Title").fill(`Your badge is ready (${device})`);
      await adminPage.getByRole("button", { name: "Send" }).click();
      await adminPage.locator('[data-batch-id][data-status="done"]').waitFor();
      await check(adminSession, `${device}-notifications-send-done`);
      assert.deepEqual([...memberSession.errors, ...adminSession.errors], []);
    } finally {
      await memberSession.context.close();
      await adminSession.context.close();
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
    // (led by the unread count when there is one: "(1) Chat · <brand>")
    assert.match(
      await page.title(),
      new RegExp(`^(\\(\\d+\\) )?Chat · ${doc.whiteLabel.brandName}$`),
    );
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
