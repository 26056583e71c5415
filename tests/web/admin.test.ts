/**
 * The admin area in Chromium against a real stack server: a role change with a reason that the
 * user's page reflects on their next action, analytics charts drawn from the real figures, the
 * white-label edited with a live preview and applied to the page on saving, and the security
 * events and access log with filters; a suspension (with a reason) that signs the user's page out
 * on its next action, ending a user's sessions, a vendor approved (and the owner's page updated
 * live), and the settlement run from the page.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  bearer,
  createPerson,
  liveOver,
  openContext,
  screenshot,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";
import { deliveredOrder, openShop } from "./scenes.ts";

const stack = await startWebStack();

test("[web] an admin changes a role with a reason; the user's page reflects it on their next action", async () => {
  const admin = await createPerson(stack, "Ada Admin", "ADMIN");
  const member = await createPerson(stack, "Mia Member", "MEMBER");
  const adminSession = await openContext(stack);
  const memberSession = await openContext(stack);
  try {
    await signInThroughPages(stack, memberSession, member);
    const memberPage = memberSession.page;
    await memberPage.getByTestId("role").getByText("MEMBER", { exact: true }).waitFor();
    assert.equal(await memberPage.getByRole("link", { name: "Admin", exact: true }).count(), 0);

    await signInThroughPages(stack, adminSession, admin, "/admin/users");
    const page = adminSession.page;
    await page.getByLabel("Search name or e-mail").fill("Mia Member");
    const row = page.locator(`tr[data-user-id="${member.id}"]`);
    await row.waitFor();
    await row.getByRole("button", { name: "Change role of Mia Member" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("New role").selectOption("ADMIN");
    // Without a reason the page refuses before the API does.
    await dialog.getByRole("button", { name: "Change role" }).click();
    await dialog.getByText("Give a reason").waitFor();
    await dialog.getByLabel("Reason (recorded)").fill("Runs the spring moderation rota");
    await dialog.getByRole("button", { name: "Change role" }).click();
    await page.getByText("Mia Member is now ADMIN (was MEMBER)").waitFor();
    await row.getByText("ADMIN", { exact: true }).waitFor();
    const [change] = await stack.deps.sql<{ reason: string; new_role: string }[]>`
      select reason, new_role::text from app.role_changes where user_id = ${member.id}`;
    assert.deepEqual(change, { reason: "Runs the spring moderation rota", new_role: "ADMIN" });

    // The member's next action (opening the chat again) shows the new role and the admin link.
    await memberPage.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Chat" })
      .click();
    await memberPage.getByTestId("role").getByText("ADMIN", { exact: true }).waitFor();
    await memberPage.getByRole("link", { name: "Admin", exact: true }).click();
    await memberPage.getByRole("heading", { name: "Users" }).waitFor();
    assert.deepEqual([...adminSession.errors, ...memberSession.errors], []);
  } finally {
    await adminSession.context.close();
    await memberSession.context.close();
  }
});

test("[web] the analytics page draws its charts from the real figures", async () => {
  const admin = await createPerson(stack, "Ana Lytics", "ADMIN");
  const alice = await createPerson(stack, "Alice Chart");
  const bob = await createPerson(stack, "Bob Chart");
  const token = await bearer(stack, alice);
  const conv = await apiCall<{ id: string }>(stack, token, "POST", "/api/conversations", {
    type: "direct",
    participantIds: [bob.id],
  });
  for (let i = 0; i < 7; i++) {
    await apiCall(stack, token, "POST", `/api/conversations/${conv.id}/messages`, {
      content: `Figure ${i}`,
    });
  }
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/analytics");
    const page = session.page;
    const chart = page.getByTestId("chart-messages");
    await chart.waitFor();
    // What the page drew, bar by bar, against what the database holds for the same 30 days.
    const drawn = await chart.locator("rect.bar").evaluateAll((bars) =>
      bars.map((b) => Number(b.getAttribute("data-value")))
    );
    const [{ count }] = await stack.deps.sql<{ count: number }[]>`
      select count(*)::int as count from app.messages
      where created_at >= date_trunc('day', now() - interval '30 days', 'UTC')`;
    assert.ok(count >= 7);
    assert.equal(drawn.reduce((a, b) => a + b, 0), count, "the bars add up to the messages");
    assert.equal(Number(await chart.getAttribute("data-total")), count);
    assert.ok(drawn.length >= 30 && drawn.length <= 32, `one bar a day (${drawn.length})`);
    assert.equal(drawn[drawn.length - 1] >= 7, true, "today's bar holds today's messages");
    const heights = await chart.locator("rect.bar").evaluateAll((bars) =>
      bars.map((b) => Number(b.getAttribute("height")))
    );
    const tallest = drawn.indexOf(Math.max(...drawn));
    assert.equal(heights[tallest], Math.max(...heights), "the tallest bar is the busiest day");

    // The other charts are the API's series too.
    const api = await apiCall<{ users: { total: number; byRole: Record<string, number> } }>(
      stack,
      await bearer(stack, admin),
      "GET",
      "/api/admin/analytics",
    );
    assert.equal(Number(await page.getByTestId("tile-users").textContent()), api.users.total);
    const byRole = await page.getByTestId("chart-users-by-role").locator("rect.bar")
      .evaluateAll((bars) => bars.map((b) => Number(b.getAttribute("data-value"))));
    assert.deepEqual(byRole, Object.values(api.users.byRole));

    // A new message shows after a refresh, without reloading the page.
    await apiCall(stack, token, "POST", `/api/conversations/${conv.id}/messages`, {
      content: "One more",
    });
    await page.getByRole("button", { name: "Refresh" }).click();
    await page.waitForFunction(
      (n) =>
        Number(
          document.querySelector('[data-testid="chart-messages"]')?.getAttribute(
            "data-total",
          ),
        ) === n,
      count + 1,
    );
    await screenshot(page, "admin-analytics");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] white-label: a live preview while editing, the whole page re-branded on saving", async () => {
  const admin = await createPerson(stack, "Wanda White", "ADMIN");
  const session = await openContext(stack);
  const before = await stack.deps.sql<{ doc: { whiteLabel: { brandName: string } } }[]>`
    select app.public_config() as doc`;
  try {
    await signInThroughPages(stack, session, admin, "/admin/config");
    const page = session.page;
    const preview = page.getByTestId("wl-preview");
    await preview.waitFor();
    await page.getByLabel("Brand name", { exact: true }).fill("Harbour Commons");
    await page.getByLabel("Primary colour", { exact: true }).fill("#0b7a55");
    await preview.getByTestId("wl-preview-name").getByText("Harbour Commons").waitFor();
    const previewColour = await preview.locator(".wl-bar").evaluate((el) =>
      getComputedStyle(el).backgroundColor
    );
    assert.equal(previewColour, "rgb(11, 122, 85)", "the preview uses the new colour");
    // Not saved yet: the header still shows the old brand.
    assert.equal(
      await page.getByTestId("brand-name").textContent(),
      before[0].doc.whiteLabel.brandName,
    );
    await page.locator("main").evaluate((el) => el.scrollTop = 0);
    await screenshot(page, "admin-config");

    await page.getByLabel("Reason for the change (recorded)").fill("Spring rebrand");
    await page.getByRole("button", { name: "Save configuration" }).click();
    await page.getByText(/Saved as version \d+/).waitFor();
    await page.getByTestId("brand-name").getByText("Harbour Commons").waitFor();
    const header = await page.locator(".app-header").evaluate((el) =>
      getComputedStyle(el).backgroundColor
    );
    assert.equal(header, "rgb(11, 122, 85)", "the header takes the new colour");
    assert.match(await page.title(), /Harbour Commons$/);
    const [saved] = await stack.deps.sql<{ reason: string }[]>`
      select reason from app.config_versions order by version desc limit 1`;
    assert.equal(saved.reason, "Spring rebrand");
    // The labels are words, not split keys.
    await page.getByText("ERC-721 contracts", { exact: true }).first().waitFor();
    assert.equal(await page.getByText("Erc 721").count(), 0);
    // The history: the new version on top, who, why, and what changed in words.
    const newest = page.getByTestId("config-versions").locator("li.card").first();
    await newest.getByTestId("config-version-reason").getByText("Spring rebrand").waitFor();
    assert.match(await newest.textContent() ?? "", /by Wanda White/);
    assert.equal(
      (await newest.locator('[data-path="whiteLabel.brandName"]').textContent())?.replace(
        /\s+/g,
        " ",
      ),
      `White label › Brand name: ${before[0].doc.whiteLabel.brandName} → Harbour Commons`,
    );
    assert.match(
      await newest.locator('[data-path="whiteLabel.primaryColor"]').textContent() ?? "",
      /^White label › Primary colour: #[0-9a-f]{6}\s*→\s*#0b7a55$/i,
    );
    await screenshot(page, "admin-config-history");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
    // Back to the brand the other tests expect.
    const token = await bearer(stack, admin);
    await apiCall(stack, token, "PUT", "/api/admin/config", {
      config: {
        whiteLabel: { brandName: before[0].doc.whiteLabel.brandName, primaryColor: "#1f6feb" },
      },
      reason: "test cleanup",
    });
  }
});

test("[web] security events and the access log filter by type, route and user (the access log also by the class of the status)", async () => {
  const admin = await createPerson(stack, "Sam Secure", "ADMIN");
  const target = await createPerson(stack, "Tom Target", "MEMBER");
  const token = await bearer(stack, admin);
  await apiCall(stack, token, "PUT", `/api/admin/users/${target.id}/role`, {
    role: "CONFIDENTIAL",
    reason: "Needs the confidential channels",
  });
  // A refused one (400) on the same route, for the access log's type filter; the log is written
  // off the request path, so wait for its line.
  await apiCall(stack, token, "PUT", `/api/admin/users/${target.id}/role`, {
    role: "EMPEROR",
    reason: "Not a role",
  }, 400);
  for (const deadline = Date.now() + 10_000;;) {
    const [{ n }] = await stack.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.access_logs
      where route = '/api/admin/users/:id/role' and status = 400 and user_id = ${admin.id}`;
    if (n > 0) break;
    assert.ok(Date.now() < deadline, "the refused request reached the access log");
    await new Promise((r) => setTimeout(r, 50));
  }
  // A type no fixed list offered: the filter offers what the log holds.
  await stack.deps.sql`
    insert into app.security_events (type, severity, user_id, details)
    values ('wallet.key_exported', 'warning', ${target.id}, '{"walletAddress": "0xabc"}')`;
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/security");
    const page = session.page;
    const table = page.getByTestId("security-table");
    await table.waitFor();
    // Exactly the types the log holds, from the API: the one no fixed list offered among them.
    const [{ stored }] = await stack.deps.sql<{ stored: string[] }[]>`
      select array_agg(distinct type order by type) as stored from app.security_events`;
    await page.waitForFunction(
      (want) => {
        const select = [...document.querySelectorAll("label")]
          .find((l) => l.textContent?.trim() === "Type")?.control as HTMLSelectElement | undefined;
        const offered = [...(select?.options ?? [])].map((o) => o.value).filter(Boolean);
        return JSON.stringify(offered) === JSON.stringify(want);
      },
      stored,
      { timeout: 10_000 },
    );
    await page.getByLabel("Type").selectOption("admin.role_changed");
    await page.getByLabel("User id").fill(target.id);
    await page.getByRole("button", { name: "Apply filters" }).click();
    // The unfiltered page already shows this event, so wait for the filtered answer itself: one
    // row, of this type, with this reason (the table is replaced while the filter loads).
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('[data-testid="security-table"] tbody tr')];
      return rows.length === 1 &&
        rows[0].querySelector("td:nth-child(2)")?.textContent === "admin.role_changed" &&
        rows[0].textContent?.includes("Needs the confidential channels");
    });
    // The user by name (a link to them in the users list) and the details as words, not JSON.
    const row = table.locator("tbody tr").first();
    assert.equal(await row.getByTestId("event-user").textContent(), "Tom Target");
    const details = row.getByTestId("event-details");
    const terms = await details.locator("dt").allTextContents();
    const values = await details.locator("dd").allTextContents();
    const shown = Object.fromEntries(terms.map((t, i) => [t, values[i]]));
    assert.deepEqual(
      { from: shown.From, to: shown.To, reason: shown.Reason, by: shown.By },
      {
        from: "MEMBER",
        to: "CONFIDENTIAL",
        reason: "Needs the confidential channels",
        by: admin.id,
      },
    );
    assert.ok(!(await row.textContent() ?? "").includes("{"), "no raw JSON");
    assert.equal(
      await row.getByTestId("event-user").getAttribute("href"),
      "/admin/users?search=Tom%20Target",
    );
    await screenshot(page, "admin-security");

    await page.getByRole("navigation", { name: "Administration" }).getByRole("link", {
      name: "Access log",
    }).click();
    const log = page.getByTestId("access-table");
    await log.waitFor();
    await page.getByLabel("Route (e.g. /api/conversations)").fill("/api/admin/users/:id/role");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => {
      const routes = [...document.querySelectorAll('[data-testid="access-table"] tbody code')]
        .map((c) => c.textContent);
      return routes.length > 0 && routes.every((r) => r === "/api/admin/users/:id/role");
    });
    // The type (the class of the status): the refused role change (400) and the accepted one.
    const statuses = () =>
      page.locator('[data-testid="access-table"] tbody td:nth-child(4)').allTextContents();
    await page.getByLabel("Type").selectOption("client_error");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('[data-testid="access-table"] tbody tr')];
      return cells.length > 0 &&
        cells.every((r) => /^4\d\d$/.test(r.querySelector("td:nth-child(4)")?.textContent ?? ""));
    });
    assert.ok((await statuses()).includes("400"));
    await page.getByLabel("Type").selectOption("success");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('[data-testid="access-table"] tbody tr')];
      return cells.length > 0 &&
        cells.every((r) => /^2\d\d$/.test(r.querySelector("td:nth-child(4)")?.textContent ?? ""));
    });
    await screenshot(page, "admin-access-log");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test('[web] "Send to many" is in the admin navigation and picks its recipients by name', async () => {
  const admin = await createPerson(stack, "Bea Broadcast", "ADMIN");
  const tag = crypto.randomUUID().slice(0, 6);
  const first = await createPerson(stack, `Rita Recipient ${tag}`, "MEMBER");
  const second = await createPerson(stack, `Ray Recipient ${tag}`, "SUBSCRIBER");
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/users");
    const page = session.page;
    await page.getByRole("navigation", { name: "Administration" }).getByRole("link", {
      name: "Send to many",
    }).click();
    await page.waitForURL((url) => url.pathname === "/notifications/send");
    await page.getByLabel("Particular people").check();
    const find = page.getByLabel("Find a person by name or e-mail");
    await find.fill(`Recipient ${tag}`);
    await page.getByRole("button", { name: `Add Rita Recipient ${tag}` }).click();
    await page.getByRole("button", { name: `Add Ray Recipient ${tag}` }).click();
    await page.getByTestId("chosen-count").getByText("2 people chosen:").waitFor();
    await page.getByRole("button", { name: `Remove Ray Recipient ${tag}` }).click();
    await page.getByTestId("chosen-count").getByText("1 person chosen:").waitFor();
    const title = `For Rita only ${tag}`;
    await page.getByLabel("Title").fill(title);
    await screenshot(page, "admin-send-to-many-people");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator('[data-batch-id][data-status="done"]').waitFor({ timeout: 30_000 });
    const rows = await stack.deps.sql<{ user_id: string }[]>`
      select user_id from app.notifications where title = ${title}`;
    assert.deepEqual(rows.map((r) => r.user_id), [first.id]);
    assert.notEqual(first.id, second.id);
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] on a 390 px phone the admin users list does not scroll sideways", async () => {
  const admin = await createPerson(stack, "Pia Phone", "ADMIN");
  await createPerson(stack, "Maximilian Longname-Wolfeschlegelsteinhausen", "MEMBER");
  const session = await openContext(stack, {
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  try {
    await signInThroughPages(stack, session, admin, "/admin/users");
    const page = session.page;
    const table = page.getByTestId("users-table");
    await table.locator("tbody tr").first().waitFor();
    const widths = await page.evaluate(() => {
      const wrap = document.querySelector('[aria-label="Users table"]') as HTMLElement;
      return {
        wrap: wrap.clientWidth,
        content: wrap.scrollWidth,
        page: document.documentElement.scrollWidth,
      };
    });
    assert.ok(widths.content <= widths.wrap, `the table fits: ${JSON.stringify(widths)}`);
    assert.ok(widths.page <= 390, `the page fits: ${JSON.stringify(widths)}`);
    // Each cell names its column.
    const role = table.locator("tbody tr").first().locator('td[data-label="Role"]');
    assert.match(
      await role.evaluate((el) => getComputedStyle(el, "::before").content),
      /Role: /,
    );
    await screenshot(page, "admin-users-phone");
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] an admin suspends a user with a reason; the user's page is signed out on its next action", async () => {
  const admin = await createPerson(stack, "Sue Spender", "ADMIN");
  const member = await createPerson(stack, "Tom Troublesome", "MEMBER");
  const adminSession = await openContext(stack);
  const memberSession = await openContext(stack);
  try {
    await signInThroughPages(stack, memberSession, member, "/store");
    await signInThroughPages(stack, adminSession, admin, "/admin/users");
    const page = adminSession.page;
    await page.getByLabel("Search name or e-mail").fill("Tom Troublesome");
    const row = page.locator(`tr[data-user-id="${member.id}"]`);
    await row.getByRole("button", { name: "Suspend Tom Troublesome" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Suspend" }).click();
    await dialog.getByText("Give a reason").waitFor();
    await dialog.getByLabel("Reason (recorded)").fill("Spam in three conversations");
    await screenshot(page, "flow-admin-suspend-dialog");
    await dialog.getByRole("button", { name: "Suspend" }).click();
    await page.getByText(/Tom Troublesome is now suspended \(1 sessions ended\)/).waitFor();
    await row.getByTestId("user-status").getByText("suspended").waitFor();
    const [change] = await stack.deps.sql<{ reason: string; new_status: string }[]>`
      select reason, new_status::text from app.status_changes where user_id = ${member.id}`;
    assert.deepEqual(change, { reason: "Spam in three conversations", new_status: "suspended" });

    // The member's next action: signed out, and told why.
    await memberSession.page.getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Wallet" }).click();
    await memberSession.page.waitForURL((url) => url.pathname === "/signin");
    await memberSession.page.getByTestId("session-ended").waitFor();
    // And signing in again is refused while suspended: no session is made.
    await memberSession.page.getByLabel("E-mail address").fill(member.email);
    await memberSession.page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await memberSession.page.getByRole("status").getByText("We sent a sign-in link").waitFor();
    const [{ n }] = await stack.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.sessions where user_id = ${member.id} and revoked_at is null`;
    assert.equal(n, 0);

    // Reactivated: the row says so.
    await row.getByRole("button", { name: "Reactivate Tom Troublesome" }).click();
    await dialog.getByLabel("Reason (recorded)").fill("Appeal accepted");
    await dialog.getByRole("button", { name: "Reactivate" }).click();
    await row.getByTestId("user-status").getByText("active").waitFor();
    assert.deepEqual(adminSession.errors, []);
    assert.deepEqual(memberSession.errors.filter((e) => !/status of 401/.test(e)), []);
  } finally {
    await adminSession.context.close();
    await memberSession.context.close();
  }
});

test("[web] an admin ends every session of a user", async () => {
  const admin = await createPerson(stack, "Eve Ender", "ADMIN");
  const member = await createPerson(stack, "Max Multi", "MEMBER");
  await bearer(stack, member);
  await bearer(stack, member);
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/users");
    const page = session.page;
    await page.getByLabel("Search name or e-mail").fill("Max Multi");
    await page.locator(`tr[data-user-id="${member.id}"]`)
      .getByRole("button", { name: "End sessions of Max Multi" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "End all sessions" }).click();
    await page.getByText("Max Multi: 2 sessions ended.").waitFor();
    const [{ n }] = await stack.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.sessions where user_id = ${member.id} and revoked_at is null`;
    assert.equal(n, 0);
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] an admin approves a vendor with a reason; the owner's page shows it live", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const admin = await createPerson(stack, "Val Vetter", "ADMIN");
  const owner = await createPerson(stack, "Pam Potter", "SUBSCRIBER");
  const ownerToken = await bearer(stack, owner);
  const vendor = await apiCall<{ id: string }>(
    stack,
    ownerToken,
    "POST",
    "/api/store/vendors/apply",
    {
      name: `Pam's Pots ${tag}`,
      description: "Thrown and glazed by hand.",
      contactEmail: owner.email,
      country: "PT",
    },
  );
  const adminSession = await openContext(stack);
  const ownerSession = await openContext(stack);
  try {
    await signInThroughPages(stack, ownerSession, owner, "/vendor");
    await ownerSession.page.getByTestId("vendor-status").getByText("pending").waitFor();
    await liveOver(ownerSession.page, "websocket");

    await signInThroughPages(stack, adminSession, admin, "/admin/vendors");
    const page = adminSession.page;
    const card = page.locator(`[data-vendor-id="${vendor.id}"]`);
    await card.getByTestId("vendor-status").getByText("pending").waitFor();
    await screenshot(page, "flow-admin-vendors");
    await card.getByRole("button", { name: `Approve Pam's Pots ${tag}` }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Reason (the owner sees it)").fill("Lovely work, welcome");
    await dialog.getByLabel("Commission % (empty: the store's default)").fill("7.5");
    await dialog.getByRole("button", { name: "Approve" }).click();
    await page.getByText(`Pam's Pots ${tag} is now approved.`).waitFor();
    // Gone from the pending list.
    await card.waitFor({ state: "detached" });
    const [row] = await stack.deps.sql<{ status: string; commission_bps: number }[]>`
      select status::text, commission_bps from app.vendors where id = ${vendor.id}`;
    assert.deepEqual(row, { status: "approved", commission_bps: 750 });
    // The owner's page, without a reload.
    await ownerSession.page.getByTestId("vendor-status").getByText("approved").waitFor();
    await ownerSession.page.getByText("commission 7.50%").waitFor();
    assert.deepEqual([...adminSession.errors, ...ownerSession.errors], []);
  } finally {
    await adminSession.context.close();
    await ownerSession.context.close();
  }
});

test("[web] an admin runs the settlement from the page; the shop's settlement shows for the admin and the vendor", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const shop = await openShop(stack, `Settle Co ${tag}`, [
    { title: `Ledger ${tag}`, category: "stationery", price: 2000, stock: 3 },
  ]);
  const buyer = await createPerson(stack, "Bo Buyer", "SUBSCRIBER");
  await deliveredOrder(stack, shop, buyer, shop.products[0].id);
  const admin = await createPerson(stack, "Stu Settler", "ADMIN");
  const session = await openContext(stack);
  const vendorSession = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/settlements");
    const page = session.page;
    await page.getByRole("button", { name: "Run the settlement now" }).click();
    await page.getByTestId("run-result").getByText(/^Settled \d+ orders? for \d+ shops?/).waitFor();
    await page.getByLabel("Shop").selectOption({ label: `Settle Co ${tag}` });
    const settled = page.getByTestId("settlements").locator("tbody tr");
    await page.waitForFunction(() =>
      document.querySelectorAll('[data-testid="settlements"] tbody tr').length === 1
    );
    const text = await settled.first().textContent() ?? "";
    assert.match(text, /\$20\.00/, "gross");
    await screenshot(page, "flow-admin-settlements");
    const [row] = await stack.deps.sql<{ gross: number; orders: number }[]>`
      select gross::int as gross, order_count as orders from app.settlements
      where vendor_id = ${shop.vendorId}`;
    assert.deepEqual(row, { gross: 2000, orders: 1 });

    await signInThroughPages(stack, vendorSession, shop.owner, "/vendor/settlements");
    await vendorSession.page.getByTestId("settlements").locator("tbody tr").first().waitFor();
    assert.match(
      await vendorSession.page.getByTestId("settlements").textContent() ?? "",
      /\$20\.00/,
    );
    assert.deepEqual([...session.errors, ...vendorSession.errors], []);
  } finally {
    await session.context.close();
    await vendorSession.context.close();
  }
});

// Last in the file (tests run in order): this file's browser and server stop here, so no Chromium
// outlives the run.
test("[web] teardown: this file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
