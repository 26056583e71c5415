/**
 * Every order e-mail links to the order, not to the home page (issue 27): the buyer's "Payment
 * received" and the shop owner's "New order to fulfil", as the notifications' delivery job sends
 * them (the dev mailbox records what was handed to the mailer), and the link of each of the
 * platform's notification sources (functions/api/notifications/links.ts).
 */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor, checkout, devPay, product } from "../support/store.ts";
import { notificationPath } from "../../functions/api/notifications/links.ts";

const t = testApp();
const admin = await signInAs(t, "ADMIN");
const site = t.deps.settings.siteUrl;

async function mailTo(email: string, subject: string) {
  return await t.deps.sql<{ text_body: string; links: string[] }[]>`
    select text_body, links from dev.mail where to_address = ${email} and subject = ${subject}`;
}

test("[store] the buyer's and the shop owner's order e-mails link to the order's page", async () => {
  const vendor = await approvedVendor(t, admin);
  const item = await product(t, vendor, { price: 2500 });
  const buyer = await signInAs(t, "SUBSCRIBER");
  const { checkout: made } = await checkout(t, buyer, [{ productId: item.id, quantity: 1 }]);
  const orderId = made.orders[0].id;
  await devPay(t, made.payment.paymentIntentId);
  const order = await expectJson(
    await t.request("GET", `/api/store/orders/${orderId}`, { token: buyer.accessToken }),
    200,
  );
  assert.equal(order.status, "paid");
  const link = `${site}/store/orders/${orderId}`;
  for (
    const [email, subject] of [
      [buyer.user.email, "Payment received"],
      [vendor.owner.user.email, "New order to fulfil"],
    ]
  ) {
    const mails = await mailTo(email!, subject);
    assert.equal(mails.length, 1, `${subject}: one e-mail`);
    assert.deepEqual(mails[0].links, [link], `${subject}: the link is the order's page`);
    assert.ok(mails[0].text_body.endsWith(`\n\n${link}`), `${subject}: the text ends with it`);
  }
});

test("[store] every notification source's data leads to its object's page; unknown data to the inbox", () => {
  const uuid = crypto.randomUUID();
  assert.equal(
    notificationPath({ conversationId: uuid, messageId: uuid, count: 2 }),
    `/chat/${uuid}`,
  );
  assert.equal(
    notificationPath({ kind: "order.status_changed", orderId: uuid, vendorId: uuid }),
    `/store/orders/${uuid}`,
  );
  assert.equal(notificationPath({ transactionId: uuid, status: "confirmed" }), "/wallet");
  assert.equal(notificationPath({ kind: "vendor.status_changed", vendorId: uuid }), "/vendor");
  assert.equal(notificationPath({ kind: "wallet.key_exported", address: "0x1" }), "/account");
  assert.equal(notificationPath({ kind: "role.changed", newRole: "MEMBER" }), "/account");
  assert.equal(notificationPath({ kind: "report_resolved", reportId: uuid }), "/notifications");
  assert.equal(notificationPath({}), "/notifications");
  // An ADMIN's data is anything: only ids become part of a path.
  assert.equal(notificationPath({ orderId: "../admin" }), "/notifications");
});
