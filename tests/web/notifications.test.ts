/**
 * Notifications in Chromium against a real stack server: the header's bell rising live (within a
 * second, measured in the page) and falling as notifications are read or deleted, in a second
 * browser of the same user too; the inbox's filters, live arrivals under a filter and "Load more";
 * where notifications lead (a conversation, an order for the buyer and for the shop's owner);
 * preferences and quiet hours saved and shown again, the server's 400 shown with nothing saved;
 * an admin's bulk send to a role with its progress until done (one batch for a double click) and
 * the recipient's bell rising live; the analytics page's notification charts against the
 * database; no bell while the feature is off.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  bearer,
  createPerson,
  liveOver,
  openContext,
  type Person,
  screenshot,
  signInThroughPages,
  slowLink,
  startWebStack,
} from "./browser.ts";
import { deliveredOrder, openShop } from "./scenes.ts";

const stack = await startWebStack();

const bell = (page: Page) => page.getByTestId("bell");

/** Waits until the bell shows `n` unread (its count read at least once). */
async function bellAt(page: Page, n: number): Promise<void> {
  await page.locator(`[data-testid="bell"][data-count="${n}"]`).waitFor();
}

async function bellCount(page: Page): Promise<number> {
  await page.locator('[data-testid="bell"]:not([data-count=""])').waitFor();
  return Number(await bell(page).getAttribute("data-count"));
}

/** Starts recording, in the page, the moment the bell first shows `n`. */
async function watchBell(page: Page, n: number): Promise<void> {
  await page.evaluate((wanted) => {
    const w = globalThis as unknown as { __bellAt?: Record<number, number> };
    const seen = w.__bellAt ??= {};
    const check = () => {
      const el = document.querySelector('[data-testid="bell"]');
      if (el?.getAttribute("data-count") === String(wanted) && !seen[wanted]) {
        seen[wanted] = Date.now();
      }
    };
    new MutationObserver(check).observe(document.body, {
      attributes: true,
      childList: true,
      subtree: true,
    });
    check();
  }, n);
}

async function bellReachedAt(page: Page, n: number): Promise<number> {
  await bellAt(page, n);
  return await page.evaluate(
    (wanted) => (globalThis as unknown as { __bellAt: Record<number, number> }).__bellAt[wanted],
    n,
  );
}

/** A notification made by an ADMIN through the API. */
async function notify(
  adminToken: string,
  to: Person,
  body: {
    type: string;
    title: string;
    body?: string;
    priority?: string;
    data?: Record<string, unknown>;
  },
): Promise<{ id: string }> {
  return await apiCall(stack, adminToken, "POST", "/api/notifications", {
    userId: to.id,
    body: "",
    ...body,
  });
}

const item = (page: Page, title: string) => page.locator("li.notification", { hasText: title });

test("[web] the bell rises live within 1 s; the inbox shows it; read, read-all and delete lower it, in a second browser too", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const reader = await createPerson(stack, `Rita Reader ${tag}`, "MEMBER");
  const friend = await createPerson(stack, `Felix Friend ${tag}`, "MEMBER");
  const admin = await createPerson(stack, `Nora Notifier ${tag}`, "ADMIN");
  const friendToken = await bearer(stack, friend);
  const adminToken = await bearer(stack, admin);
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, a, reader, "/chat");
    await liveOver(a.page, "websocket");
    await bellAt(a.page, 0);
    assert.equal(await bell(a.page).getAttribute("aria-label"), "Notifications, none unread");
    // The tab's title carries no count while there is none.
    assert.doesNotMatch(await a.page.title(), /^\(/);
    // The same user in a second browser, with the inbox open.
    await signInThroughPages(stack, b, reader, "/notifications");
    await liveOver(b.page, "websocket");
    await b.page.getByTestId("inbox-empty").waitFor();

    // Another user starts a direct conversation: its MESSAGE notification raises the bell.
    await watchBell(a.page, 1);
    const startedAt = Date.now();
    const conversation = await apiCall<{ id: string }>(
      stack,
      friendToken,
      "POST",
      "/api/conversations",
      { type: "direct", participantIds: [reader.id] },
    );
    const rang = await bellReachedAt(a.page, 1);
    assert.ok(rang - startedAt < 1_000, `the bell rose ${rang - startedAt} ms after the request`);
    assert.equal(await bell(a.page).getAttribute("aria-label"), "Notifications, 1 unread");
    // It shows at the top of the open inbox in the other browser, live, with a link to the chat.
    const started = item(b.page, `${friend.name} started a conversation with you`);
    await started.waitFor();
    assert.equal(
      await started.getByRole("link").getAttribute("href"),
      `/chat/${conversation.id}`,
    );
    await bellAt(b.page, 1);

    // Two more from an admin.
    await notify(adminToken, reader, {
      type: "SYSTEM",
      title: `Maintenance tonight ${tag}`,
      body: "The platform pauses for ten minutes at 23:00.",
      priority: "high",
    });
    await notify(adminToken, reader, {
      type: "OPPORTUNITY",
      title: `A new opening ${tag}`,
      body: "Someone is looking for a partner.",
    });
    await bellAt(a.page, 3);
    await bellAt(b.page, 3);
    // The tab's title leads with the count.
    await a.page.waitForFunction(() => /^\(3\) Chat · /.test(document.title));
    await b.page.waitForFunction(() => /^\(3\) Notifications · /.test(document.title));

    // The bell opens a short feed: newest first, unread marked, each a link to its object;
    // Escape closes it and gives the focus back to the bell.
    assert.equal(await bell(a.page).getAttribute("aria-expanded"), "false");
    await bell(a.page).click();
    assert.equal(await bell(a.page).getAttribute("aria-expanded"), "true");
    const feed = a.page.getByRole("region", { name: "Newest notifications" });
    await feed.locator("li.bell-item").nth(2).waitFor();
    assert.deepEqual(
      (await feed.locator(".bell-item-title").allTextContents()).map((t) =>
        t.replace(/\s*\(unread\)$/, "")
      ),
      [`A new opening ${tag}`, `Maintenance tonight ${tag}`, friend.name],
    );
    assert.equal(await feed.locator('li.bell-item[data-read="false"]').count(), 3);
    assert.equal(
      await feed.getByRole("link", { name: friend.name }).getAttribute("href"),
      `/chat/${conversation.id}`,
    );
    await screenshot(a.page, "notifications-bell-feed");
    await a.page.keyboard.press("Escape");
    await feed.waitFor({ state: "detached" });
    assert.equal(await bell(a.page).getAttribute("aria-expanded"), "false");
    assert.equal(await bell(a.page).evaluate((el) => el === document.activeElement), true);
    // "See all" leads to the inbox: newest first.
    await bell(a.page).click();
    await feed.getByRole("link", { name: "See all" }).click();
    await a.page.waitForURL((url) => url.pathname === "/notifications");
    await feed.waitFor({ state: "detached" });
    await item(a.page, `A new opening ${tag}`).waitFor();
    const titles = await a.page.locator("li.notification .notification-title").allTextContents();
    assert.deepEqual(titles, [
      `A new opening ${tag}`,
      `Maintenance tonight ${tag}`,
      friend.name,
    ]);
    assert.equal(await a.page.getByTestId("inbox-unread").textContent(), "3 unread");
    await screenshot(a.page, "notifications-inbox");

    // Marking one read lowers the count here and in the other browser, live.
    const maintenance = item(a.page, `Maintenance tonight ${tag}`);
    await maintenance.getByRole("button", { name: `Mark read: Maintenance tonight ${tag}` })
      .click();
    await a.page.locator(`li.notification[data-read="true"]`, {
      hasText: `Maintenance tonight ${tag}`,
    }).waitFor();
    await bellAt(a.page, 2);
    await bellAt(b.page, 2);
    await b.page.locator(`li.notification[data-read="true"]`, {
      hasText: `Maintenance tonight ${tag}`,
    }).waitFor();

    // Deleting an unread one: gone in both, one fewer unread.
    await item(a.page, `A new opening ${tag}`)
      .getByRole("button", { name: `Delete: A new opening ${tag}` }).click();
    await item(a.page, `A new opening ${tag}`).waitFor({ state: "detached" });
    await bellAt(a.page, 1);
    await bellAt(b.page, 1);
    await item(b.page, `A new opening ${tag}`).waitFor({ state: "detached" });

    // One more, so that read-all reads two: one notification.read_all event, not one per row.
    await notify(adminToken, reader, {
      type: "SYSTEM",
      title: `Second notice ${tag}`,
      body: "Read with the rest.",
    });
    await bellAt(a.page, 2);
    await bellAt(b.page, 2);
    await item(b.page, `Second notice ${tag}`).waitFor();

    // Mark all read: the other browser marks both read and lowers its bell from that one event.
    await a.page.getByRole("button", { name: "Mark all read" }).click();
    await bellAt(a.page, 0);
    await bellAt(b.page, 0);
    await a.page.waitForFunction(() => !document.title.startsWith("("));
    await b.page.locator(`li.notification[data-read="true"]`, { hasText: friend.name }).waitFor();
    await b.page.locator(`li.notification[data-read="true"]`, {
      hasText: `Second notice ${tag}`,
    }).waitFor();
    assert.equal(await a.page.getByRole("button", { name: "Mark all read" }).isDisabled(), true);
    const [readEvents] = await stack.deps.sql<{ many: number; one: number }[]>`
      select count(*) filter (where event = 'notification.read_all')::int as many,
             count(*) filter (where event = 'notification.read')::int as one
      from app.events where topic = ${"user:" + reader.id}`;
    assert.deepEqual(readEvents, { many: 1, one: 1 }, "read-all of two is one event");

    const rows = await stack.deps.sql<{ title: string; read: boolean }[]>`
      select title, read_at is not null as read from app.notifications
      where user_id = ${reader.id} and inbox order by created_at`;
    assert.deepEqual([...rows], [
      { title: friend.name, read: true },
      { title: `Maintenance tonight ${tag}`, read: true },
      { title: `Second notice ${tag}`, read: true },
    ]);
    // Nothing drifted: after the settling read, the bells still say none.
    await a.page.waitForTimeout(2_500);
    assert.equal(await bellCount(a.page), 0);
    assert.equal(await bellCount(b.page), 0);
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test("[web] the inbox's filters really filter (type, unread, search, since), live arrivals respect them, and Load more reaches older pages", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const person = await createPerson(stack, `Fran Filter ${tag}`, "MEMBER");
  // 26 notifications, an hour apart (the newest now): 23 SYSTEM, 3 WALLET; 4 of them read.
  for (let i = 0; i < 26; i++) {
    const wallet = i % 9 === 4;
    await stack.deps.sql`
      select app_private.notify(
        ${person.id}, ${wallet ? "WALLET" : "SYSTEM"}::app.notification_type,
        ${wallet ? `Ledger entry ${i} ${tag}` : `Harbour notice ${i} ${tag}`}, 'Text')`;
  }
  await stack.deps.sql`
    update app.notifications n set created_at = now() - make_interval(hours => x.age)
    from (
      select id, (row_number() over (order by created_at desc, id desc) - 1)::int as age
      from app.notifications where user_id = ${person.id}
    ) x
    where n.id = x.id`;
  await stack.deps.sql`
    update app.notifications set read_at = now()
    where user_id = ${person.id} and title in (
      ${`Harbour notice 0 ${tag}`}, ${`Harbour notice 1 ${tag}`}, ${`Harbour notice 2 ${tag}`},
      ${`Ledger entry 13 ${tag}`})`;
  const all = await stack.deps.sql<{ id: string; type: string; read: boolean; age: number }[]>`
    select id, type::text, read_at is not null as read,
           round(extract(epoch from now() - created_at) / 3600)::int as age
    from app.notifications where user_id = ${person.id}
    order by created_at desc, id desc`;
  assert.equal(all.length, 26);

  const session = await openContext(stack);
  try {
    // A slow link (150 ms each way): the page's feed comes up after the first page is shown,
    // and its read of what came meanwhile must not cancel the Load more clicked before it.
    await slowLink(session.page, 150);
    await signInThroughPages(stack, session, person, "/notifications");
    const page = session.page;
    const ids = () =>
      page.locator("li.notification").evaluateAll((els) =>
        els.map((el) => el.getAttribute("data-notification-id"))
      );
    const list = page.getByTestId("notifications");
    await list.waitFor();
    await bellAt(page, 22);
    // The first page, then Load more to the end: everything, newest first.
    assert.equal((await ids()).length, 20);
    await page.getByRole("button", { name: "Load more" }).click();
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 26);
    assert.deepEqual(await ids(), all.map((n) => n.id));
    assert.equal(await page.getByRole("button", { name: "Load more" }).count(), 0);

    // Type.
    await page.getByLabel("Type").selectOption("WALLET");
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 3);
    assert.deepEqual(await ids(), all.filter((n) => n.type === "WALLET").map((n) => n.id));
    // A live arrival under the filter: a SYSTEM one stays out, a WALLET one comes to the top.
    await liveOver(page, "websocket");
    await stack.deps.sql`
      select app_private.notify(${person.id}, 'SYSTEM', ${`Not a wallet thing ${tag}`}, 'x')`;
    await stack.deps.sql`
      select app_private.notify(${person.id}, 'WALLET', ${`Fresh ledger ${tag}`}, 'y')`;
    await page.locator("li.notification").first().getByText(`Fresh ledger ${tag}`).waitFor();
    await bellAt(page, 24);
    assert.equal(await item(page, `Not a wallet thing ${tag}`).count(), 0);
    assert.equal(await page.locator("li.notification").count(), 4);

    // Unread only (any type): the unread ones, the new ones among them.
    await page.getByLabel("Type").selectOption("");
    await page.getByLabel("Unread only").check();
    await page.waitForFunction(() =>
      document.querySelectorAll('li.notification[data-read="true"]').length === 0 &&
      document.querySelectorAll("li.notification").length === 20
    );
    await page.getByRole("button", { name: "Load more" }).click();
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 24);
    // Marking one read under "unread only" takes it off the list.
    await item(page, `Fresh ledger ${tag}`)
      .getByRole("button", { name: `Mark read: Fresh ledger ${tag}` }).click();
    await item(page, `Fresh ledger ${tag}`).waitFor({ state: "detached" });
    await bellAt(page, 23);

    // Search, with unread only still on: the title's words, in any case.
    await page.getByLabel("Search title and text").fill(`LEDGER ENTRY`);
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 2);
    for (const title of await page.locator(".notification-title").allTextContents()) {
      assert.match(title, /^Ledger entry \d+ /);
    }

    // Since: 5 hours and a half ago (in the browser's time), unread only off, search cleared.
    await page.getByLabel("Unread only").uncheck();
    await page.getByLabel("Search title and text").fill("");
    const since = await page.evaluate(() => {
      const d = new Date(Date.now() - 5.5 * 3_600_000);
      const p = (n: number) => String(n).padStart(2, "0");
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${
        p(d.getMinutes())
      }`;
    });
    await page.getByLabel("Since").fill(since);
    await page.getByRole("button", { name: "Apply filters" }).click();
    // The six of the last five hours, and the two that arrived live.
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 8);
    const recent = all.filter((n) => n.age <= 5).map((n) => n.id);
    assert.deepEqual((await ids()).slice(2), recent);
    await screenshot(page, "notifications-inbox-filtered");

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.waitForFunction(() => document.querySelectorAll("li.notification").length === 20);
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] notifications lead where their data points: the buyer to the order, the shop's owner to the shop's orders", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const shop = await openShop(stack, `Lantern Works ${tag}`, [
    { title: `Brass lantern ${tag}`, category: "lighting", price: 4200, stock: 5 },
  ]);
  const buyer = await createPerson(stack, `Bo Buyer ${tag}`, "MEMBER");
  const orderId = await deliveredOrder(stack, shop, buyer, shop.products[0].id, "shipped");
  const buyerSession = await openContext(stack);
  const ownerSession = await openContext(stack);
  try {
    await signInThroughPages(stack, buyerSession, buyer, "/notifications");
    const shipped = item(buyerSession.page, "Your order has shipped");
    await shipped.waitFor();
    assert.equal(await shipped.getByRole("link").getAttribute("href"), `/store/orders/${orderId}`);
    // Following it opens the order and marks the notification read.
    await shipped.getByRole("link").click();
    await buyerSession.page.getByRole("heading", { name: /^Order from/ }).waitFor();
    await buyerSession.page.getByTestId("tracking").getByText("TRACK1").waitFor();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [row] = await stack.deps.sql<{ read: boolean }[]>`
        select read_at is not null as read from app.notifications
        where user_id = ${buyer.id} and title = 'Your order has shipped'`;
      if (row.read) break;
      assert.ok(Date.now() < deadline, "following the link marks the notification read");
      await new Promise((r) => setTimeout(r, 50));
    }

    await signInThroughPages(stack, ownerSession, shop.owner, "/notifications");
    const toFulfil = item(ownerSession.page, "New order to fulfil");
    await toFulfil.waitFor();
    await ownerSession.page.waitForFunction(
      (href) =>
        [...document.querySelectorAll("li.notification a")].some((a) =>
          a.getAttribute("href") === href
        ),
      `/vendor/orders/${orderId}`,
    );
    await toFulfil.getByRole("link").click();
    await ownerSession.page.getByTestId("vendor-orders").waitFor();
    assert.deepEqual([...buyerSession.errors, ...ownerSession.errors], []);
  } finally {
    await buyerSession.context.close();
    await ownerSession.context.close();
  }
});

test("[web] preferences: a channel turned off and quiet hours are saved and shown after a reload; the server's 400 is shown and nothing changes; quiet hours cleared", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const person = await createPerson(stack, `Quinn Quiet ${tag}`, "MEMBER");
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, person, "/notifications/preferences");
    const page = session.page;
    const pushMessages = page.getByRole("checkbox", { name: "Push: Messages and conversations" });
    await pushMessages.waitFor();
    // The effective values: the configured defaults (in-app and push on, e-mail for SYSTEM).
    assert.equal(await pushMessages.isChecked(), true);
    assert.equal(
      await page.getByRole("checkbox", { name: "E-mail: Platform: account, orders, shop" })
        .isChecked(),
      true,
    );
    assert.equal(
      await page.getByRole("checkbox", { name: "E-mail: Messages and conversations" }).isChecked(),
      false,
    );
    assert.equal(await page.getByRole("button", { name: "Save preferences" }).isDisabled(), true);

    await pushMessages.uncheck();
    await page.getByLabel("Hold push and e-mail during quiet hours").check();
    // The browser's own zone is offered first.
    const browserZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.equal(await page.getByLabel("Time zone").inputValue(), browserZone);
    await page.getByLabel("From").fill("22:30");
    await page.getByLabel("Until").fill("06:45");
    await page.getByLabel("Time zone").selectOption("Europe/Berlin");
    await page.getByRole("button", { name: "Save preferences" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const read = () =>
      stack.deps.sql<
        {
          types: Record<string, Record<string, boolean>>;
          start: string | null;
          end: string | null;
          zone: string | null;
          updated: string;
        }[]
      >`
        select types, quiet_start::text as start, quiet_end::text as end,
               quiet_time_zone as zone, updated_at::text as updated
        from app.notification_preferences where user_id = ${person.id}`;
    const [saved] = await read();
    // Only what changed was sent: the other channels still follow the defaults.
    assert.deepEqual(saved.types, { MESSAGE: { push: false } });
    assert.deepEqual([saved.start, saved.end, saved.zone], [
      "22:30:00",
      "06:45:00",
      "Europe/Berlin",
    ]);

    await page.reload();
    await pushMessages.waitFor();
    assert.equal(await pushMessages.isChecked(), false);
    assert.equal(await page.getByLabel("From").inputValue(), "22:30");
    assert.equal(await page.getByLabel("Until").inputValue(), "06:45");
    assert.equal(await page.getByLabel("Time zone").inputValue(), "Europe/Berlin");
    await screenshot(page, "notifications-preferences");

    // An empty period: the server refuses it (400); the page shows its words, nothing is saved.
    const token = await bearer(stack, person);
    const refused = await fetch(`${stack.base}/api/notifications/preferences`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        quietHours: { start: "08:00", end: "08:00", timeZone: "Europe/Berlin" },
      }),
    });
    assert.equal(refused.status, 400);
    const { error } = await refused.json();
    await page.getByLabel("From").fill("08:00");
    await page.getByLabel("Until").fill("08:00");
    await page.getByRole("button", { name: "Save preferences" }).click();
    await page.getByTestId("preferences-error").getByText(error.message).waitFor();
    const [after] = await read();
    assert.deepEqual(after, saved, "nothing saved");
    await page.reload();
    await page.getByLabel("From").waitFor();
    assert.equal(await page.getByLabel("From").inputValue(), "22:30");

    // Clearing quiet hours sends `quietHours: null`.
    await page.getByLabel("Hold push and e-mail during quiet hours").uncheck();
    await page.getByRole("button", { name: "Save preferences" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const [cleared] = await read();
    assert.deepEqual([cleared.start, cleared.end, cleared.zone], [null, null, null]);
    assert.deepEqual(cleared.types, { MESSAGE: { push: false } });
    // The 400 the page made is the browser's console error; nothing else went wrong.
    assert.deepEqual(session.errors.filter((e) => !/status of 400/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

test("[web] an admin's bulk send to a role shows its progress until done (one batch for a double click); a recipient's bell rises live", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const admin = await createPerson(stack, `Bea Broadcaster ${tag}`, "ADMIN");
  const recipient = await createPerson(stack, `Carl Confidential ${tag}`, "CONFIDENTIAL");
  const adminSession = await openContext(stack);
  const recipientSession = await openContext(stack);
  try {
    await signInThroughPages(stack, recipientSession, recipient, "/chat");
    await liveOver(recipientSession.page, "websocket");
    const before = await bellCount(recipientSession.page);

    await signInThroughPages(stack, adminSession, admin, "/notifications/send");
    const page = adminSession.page;
    const keys: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === "/api/notifications/bulk") {
        keys.push(r.headers()["idempotency-key"] ?? "");
      }
    });
    await page.getByLabel("People with a role").check();
    await page.getByLabel("CONFIDENTIAL").check();
    await page.getByLabel("Type").selectOption("SYSTEM");
    const title = `Planned maintenance ${tag}`;
    await page.getByLabel("Title").fill(title);
    await page.getByLabel("Text").fill("Saturday 02:00 to 02:30 UTC; nothing is lost.");
    await screenshot(page, "notifications-bulk-form");
    await page.getByRole("button", { name: "Send" }).dblclick();

    const batch = page.locator("[data-batch-id]");
    await batch.waitFor();
    await page.locator('[data-batch-id][data-status="done"]').waitFor({ timeout: 30_000 });
    const batchId = await batch.getAttribute("data-batch-id");
    const [row] = await stack.deps.sql<{ recipients: number; count: number }[]>`
      select b.recipients,
             (select count(*)::int from app.notification_batches x where x.title = ${title}) as count
      from app.notification_batches b where b.id = ${batchId}`;
    assert.equal(row.count, 1, "one batch for the double click");
    assert.ok(keys.length >= 1 && keys.every((k) => k && k === keys[0]), `keys: ${keys}`);
    const [{ active, inboxes }] = await stack.deps.sql<{ active: number; inboxes: number }[]>`
      select (select count(*)::int from app.users where role = 'CONFIDENTIAL' and status = 'active')
               as active,
             (select count(*)::int from app.notifications where batch_id = ${batchId} and inbox)
               as inboxes`;
    assert.equal(row.recipients, active);
    assert.ok(inboxes >= 1);
    await batch.getByText(`${inboxes} of ${active} in their inboxes`).waitFor();
    await screenshot(page, "notifications-bulk-done");

    // The recipient's bell rose without a reload, and the inbox has it.
    await bellAt(recipientSession.page, before + 1);
    // Its feed shows it, unread; "Mark all read" there lowers the bell to none.
    await bell(recipientSession.page).click();
    const feed = recipientSession.page.getByTestId("bell-feed");
    await feed.locator('li.bell-item[data-read="false"]', { hasText: title }).waitFor();
    await feed.getByRole("button", { name: "Mark all read" }).click();
    await feed.locator('li.bell-item[data-read="true"]', { hasText: title }).waitFor();
    await bellAt(recipientSession.page, 0);
    assert.deepEqual([...adminSession.errors, ...recipientSession.errors], []);
  } finally {
    await adminSession.context.close();
    await recipientSession.context.close();
  }
});

test("[web] the analytics page draws notifications created and read from the real figures", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const admin = await createPerson(stack, `Ana Notes ${tag}`, "ADMIN");
  const person = await createPerson(stack, `Rae Reads ${tag}`, "MEMBER");
  const adminToken = await bearer(stack, admin);
  const made = [];
  for (let i = 0; i < 4; i++) {
    made.push(await notify(adminToken, person, { type: "ENTITY", title: `Update ${i} ${tag}` }));
  }
  const personToken = await bearer(stack, person);
  await apiCall(stack, personToken, "PUT", `/api/notifications/${made[0].id}/read`, undefined, 200);
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/analytics");
    const page = session.page;
    const created = page.getByTestId("chart-notifications-created");
    const readChart = page.getByTestId("chart-notifications-read");
    await created.waitFor();
    const bars = (chart: typeof created) =>
      chart.locator("rect.bar").evaluateAll((els) =>
        els.map((b) => Number(b.getAttribute("data-value")))
      );
    const drawnCreated = await bars(created);
    const drawnRead = await bars(readChart);
    const [db] = await stack.deps.sql<{ created: number; read: number; today: number }[]>`
      select count(*)::int as created,
             (count(*) filter (where read_at is not null))::int as read,
             (count(*) filter (where created_at >= date_trunc('day', now(), 'UTC')))::int as today
      from app.notifications
      where inbox and created_at >= date_trunc('day', now() - interval '30 days', 'UTC')`;
    assert.ok(db.created >= 4 && db.read >= 1);
    assert.equal(drawnCreated.reduce((x, y) => x + y, 0), db.created, "created bars add up");
    assert.equal(drawnRead.reduce((x, y) => x + y, 0), db.read, "read bars add up");
    assert.equal(drawnCreated[drawnCreated.length - 1], db.today, "today's bar");
    assert.ok(drawnCreated.length >= 30 && drawnCreated.length <= 32);
    assert.equal(
      Number(await page.getByTestId("tile-notifications-created").textContent()),
      db.created,
    );
    // Some were read (this test's one seconds after it was sent; other tests' notifications
    // with past times hours after): the median shows, marked as the estimate it is.
    assert.match(
      (await page.getByTestId("tile-notifications-median").textContent()) ?? "",
      /^≈ \d+ (s|min|h|days)$/,
    );
    const byType = await page.getByTestId("chart-notifications-by-type").locator("rect.bar")
      .evaluateAll((els) => els.map((b) => Number(b.getAttribute("data-value"))));
    assert.equal(byType.reduce((x, y) => x + y, 0), db.created);
    await page.getByRole("heading", { name: "Notifications", exact: true })
      .scrollIntoViewIfNeeded();
    await screenshot(page, "notifications-analytics");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] with notifications turned off the bell is gone and the inbox says so", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const admin = await createPerson(stack, `Otto Off ${tag}`, "ADMIN");
  const token = await bearer(stack, admin);
  const session = await openContext(stack);
  try {
    await apiCall(stack, token, "PUT", "/api/admin/config", {
      config: { features: { notifications: false } },
      reason: "notifications paused (test)",
    });
    await signInThroughPages(stack, session, admin, "/chat");
    const page = session.page;
    await liveOver(page, "websocket");
    assert.equal(await bell(page).count(), 0);
    await page.goto(`${stack.base}/notifications`);
    await page.getByRole("heading", { name: "Turned off" }).waitFor();
    assert.equal(await bell(page).count(), 0);
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
    await apiCall(stack, token, "PUT", "/api/admin/config", {
      config: { features: { notifications: true } },
      reason: "test cleanup",
    });
  }
});

// Last in the file (tests run in order): this file's browser and server stop here, so no Chromium
// outlives the run.
test("[web] teardown: this file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
