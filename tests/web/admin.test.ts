/**
 * The admin area in Chromium against a real stack server: a role change with a reason that the
 * user's page reflects on their next action, analytics charts drawn from the real figures, the
 * white-label edited with a live preview and applied to the page on saving, and the security
 * events and access log with filters.
 */
import assert from "node:assert/strict";
import { test } from "../helpers.ts";
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

test("[web] an admin changes a role with a reason; the user's page reflects it on their next action", async () => {
  const admin = await createPerson(stack, "Ada Admin", "ADMIN");
  const member = await createPerson(stack, "Mia Member", "MEMBER");
  const adminSession = await openContext(stack);
  const memberSession = await openContext(stack);
  try {
    await signInThroughPages(stack, memberSession, member);
    const memberPage = memberSession.page;
    await memberPage.getByTestId("role").getByText("MEMBER", { exact: true }).waitFor();
    assert.equal(await memberPage.getByRole("link", { name: "Admin" }).count(), 0);

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
    await memberPage.getByRole("link", { name: "Admin" }).click();
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
    await page.getByLabel("Brand Name", { exact: true }).fill("Harbour Commons");
    await page.getByLabel("Primary Color", { exact: true }).fill("#0b7a55");
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

test("[web] security events and the access log filter by type, route and user", async () => {
  const admin = await createPerson(stack, "Sam Secure", "ADMIN");
  const target = await createPerson(stack, "Tom Target", "MEMBER");
  const token = await bearer(stack, admin);
  await apiCall(stack, token, "PUT", `/api/admin/users/${target.id}/role`, {
    role: "CONFIDENTIAL",
    reason: "Needs the confidential channels",
  });
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, admin, "/admin/security");
    const page = session.page;
    const table = page.getByTestId("security-table");
    await table.waitFor();
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
    await screenshot(page, "admin-access-log");
    assert.deepEqual(session.errors, []);
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
