/**
 * The wallet in Chromium against a real stack server and the run's throwaway chain (the
 * platform's contracts deployed and funded as `npm start` does): a transfer to another person is
 * prepared, confirmed on a separate step and shows as confirmed in both people's histories, live
 * (the sender's from the broadcast job, the receiver's from the chain follower); the NFTs with
 * their `data:` images; adding a token; the key export decrypted in the page, and its fresh
 * sign-in.
 */
import assert from "node:assert/strict";
import { privateKeyToAccount } from "viem/accounts";
import { test } from "../support/helpers.ts";
import { fund, platform, testRpcUrl } from "../support/wallet.ts";
import { compileContracts } from "../../stack/chain/compile.ts";
import { chainClients, deployContract } from "../../stack/chain/deploy.ts";
import {
  createPerson,
  dropFirstAnswer,
  liveOver,
  openContext,
  type Person,
  screenshot,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";
import { encode } from "uqr";
import { nftsIndexed } from "./scenes.ts";

const stack = await startWebStack();
const contracts = await platform(stack.deps);

/** The person's wallet address (made at their first sign-in), funded on the chain. */
async function funded(person: Person): Promise<string> {
  const [row] = await stack.deps.sql<{ address: string }[]>`
    select address from app.wallets where user_id = ${person.id}`;
  assert.ok(row, `${person.name} got a wallet at sign-in`);
  await fund(contracts, row.address);
  return row.address;
}

test("[web] wallet: a transfer is prepared, confirmed on its own step, and shows confirmed in both histories, live", async () => {
  const tag = crypto.randomUUID().slice(0, 6);
  const senderPerson = await createPerson(stack, `Wendy Sender ${tag}`, "MEMBER");
  const receiverPerson = await createPerson(stack, `Rory Receiver ${tag}`, "MEMBER");
  const sender = await openContext(stack);
  const receiver = await openContext(stack);
  try {
    await signInThroughPages(stack, receiver, receiverPerson, "/wallet");
    await signInThroughPages(stack, sender, senderPerson, "/wallet");
    await funded(senderPerson);
    const receiverAddress = await funded(receiverPerson);

    // The receiver watches their history.
    await receiver.page.reload();
    await receiver.page.getByTestId("balance-AGU").getByText("1,000").waitFor();
    await liveOver(receiver.page, "websocket");

    const page = sender.page;
    await page.reload();
    await page.getByTestId("balance-AGU").getByText("1,000").waitFor();
    await liveOver(page, "websocket");
    // The network by its name, not its id.
    assert.equal(
      await page.getByTestId("network-name").textContent(),
      "Local test network (Anvil)",
    );
    await page.getByRole("link", { name: "Send", exact: true }).first().click();
    await page.getByLabel("Find a person by name").fill(`Rory Receiver ${tag}`);
    await page.getByRole("button", { name: `Rory Receiver ${tag}` }).click();
    await page.getByTestId("recipient").getByText(`Rory Receiver ${tag}`).waitFor();
    await page.getByLabel("Token").selectOption({ label: "AGU (1,000 available)" });
    await page.getByLabel("Amount (AGU)").fill("12.5");
    // The first answer is lost on the way (the server made the transfer, the connection dropped):
    // Review again shows that transfer, not a second one holding the funds too.
    await dropFirstAnswer(page, /\/api\/wallet\/transfer$/);
    await page.getByRole("button", { name: "Review" }).click();
    await page.getByText("The server cannot be reached. Check your connection.").waitFor();
    await page.getByRole("button", { name: "Review" }).click();

    // The separate confirm step: nothing signed yet.
    await page.getByRole("heading", { name: "Confirm the transfer" }).waitFor();
    await page.getByTestId("transfer-status").getByText("pending").waitFor();
    // The network fee, at most what the transfer's gas can cost, in the native currency.
    const fee = await page.getByTestId("network-fee").textContent() ?? "";
    assert.match(fee, /Network fee: at most [\d.,]+ ETH/);
    assert.match(fee, /on Local test network \(Anvil\)/);
    const outgoing = await stack.deps.sql<{ id: string; status: string; hash: string | null }[]>`
      select t.id, t.status::text, t.hash from app.wallet_transactions t
      join app.wallets w on w.id = t.wallet_id
      where w.user_id = ${senderPerson.id} and t.direction = 'out'`;
    assert.equal(outgoing.length, 1, "one transfer, though Review was clicked twice");
    const [pending] = outgoing;
    assert.deepEqual({ status: pending.status, hash: pending.hash }, {
      status: "pending",
      hash: null,
    });
    await screenshot(page, "flow-wallet-confirm");
    await page.getByRole("button", { name: "Confirm and send" }).click();
    await page.getByTestId("transfer-status").getByText("confirmed").waitFor();
    await page.getByText(/Confirmed in block \d+/).waitFor();

    // Both histories, live: the sender's out, the receiver's in.
    await page.getByRole("link", { name: "Back to the wallet" }).click();
    const sent = page.locator(`[data-transaction-id="${pending.id}"]`);
    await sent.getByTestId("tx-status").getByText("confirmed").waitFor();
    // The other side by name, both ways.
    assert.match(
      await sent.textContent() ?? "",
      new RegExp(`Sent 12\\.5 AGU to Rory Receiver ${tag}`),
    );
    await page.getByTestId("balance-AGU").getByText("987.5").waitFor();
    const received = receiver.page.locator(".tx", { hasText: "Received 12.5 AGU" });
    await received.getByTestId("tx-status").getByText("confirmed").waitFor();
    await receiver.page.getByTestId("balance-AGU").getByText("1,012.5").waitFor();
    assert.equal(
      await received.getByTestId("tx-counterparty").textContent(),
      `Wendy Sender ${tag}`,
    );
    await screenshot(receiver.page, "flow-wallet-received");
    const [incoming] = await stack.deps.sql<{ status: string; to_address: string }[]>`
      select t.status::text, t.to_address from app.wallet_transactions t
      join app.wallets w on w.id = t.wallet_id
      where w.user_id = ${receiverPerson.id} and t.direction = 'in'`;
    assert.equal(incoming.status, "confirmed");
    assert.equal(incoming.to_address.toLowerCase(), receiverAddress.toLowerCase());
    // The dropped answer is the only thing that went wrong.
    assert.deepEqual(
      [...sender.errors, ...receiver.errors].filter((e) => !/ERR_CONNECTION_RESET/.test(e)),
      [],
    );
  } finally {
    await sender.context.close();
    await receiver.context.close();
  }
});

test('[web] wallet: "Don\'t send" cancels the transfer, and its funds can be sent at once', async () => {
  const person = await createPerson(
    stack,
    `Dana Decline ${crypto.randomUUID().slice(0, 6)}`,
    "MEMBER",
  );
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, person, "/wallet");
    await funded(person);
    const page = session.page;
    await page.reload();
    await page.getByTestId("balance-AGU").getByText("1,000").waitFor();
    const sendAll = async () => {
      await page.getByRole("link", { name: "Send", exact: true }).first().click();
      await page.getByLabel("An address").check();
      await page.getByLabel("Recipient address").fill("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
      await page.getByLabel("Token").selectOption({ label: "AGU (1,000 available)" });
      await page.getByLabel("Amount (AGU)").fill("1000");
      await page.getByRole("button", { name: "Review" }).click();
      await page.getByRole("heading", { name: "Confirm the transfer" }).waitFor();
    };
    await sendAll();
    await page.getByRole("button", { name: "Don't send" }).click();
    await page.getByTestId("send-notice").getByText("the transfer is cancelled").waitFor();
    const [first] = await stack.deps.sql<{ id: string; status: string; hash: string | null }[]>`
      select id, status::text, hash from app.wallet_transactions
      where user_id = ${person.id} and direction = 'out'`;
    assert.deepEqual({ status: first.status, hash: first.hash }, {
      status: "cancelled",
      hash: null,
    });

    // The whole balance again: nothing holds it any more.
    await sendAll();
    await page.getByTestId("transfer-status").getByText("pending").waitFor();
    await screenshot(page, "flow-wallet-dont-send");
    const rows = await stack.deps.sql<{ status: string }[]>`
      select status::text from app.wallet_transactions
      where user_id = ${person.id} and direction = 'out' order by created_at`;
    assert.deepEqual(rows.map((r) => r.status), ["cancelled", "pending"]);
    // The history says so.
    await page.getByRole("button", { name: "Don't send" }).click();
    await page.getByTestId("send-notice").waitFor();
    await page.goto(`${stack.base}/wallet/overview`);
    await page.locator(`[data-transaction-id="${first.id}"]`).getByTestId("tx-status")
      .getByText("cancelled").waitFor();
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }
});

test("[web] wallet: NFTs show with their data: images; adding a token is checked (a listed one 409, a non-ERC-20 refused)", async () => {
  const person = await createPerson(stack, "Nora Nft", "MEMBER");
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, person, "/wallet/nfts");
    await funded(person);
    await nftsIndexed(stack, person.id);
    const page = session.page;
    await page.getByRole("button", { name: "Refresh" }).click();
    const images = page.getByTestId("nfts").locator("img");
    await page.waitForFunction(() =>
      document.querySelectorAll('[data-testid="nfts"] img').length >= 3
    );
    // Every picture decoded (an SVG data: URI each), so the policy let them in.
    await page.waitForFunction(() =>
      [...document.querySelectorAll<HTMLImageElement>('[data-testid="nfts"] img')].every((img) =>
        img.complete && img.naturalWidth > 0
      )
    );
    assert.match(await images.first().getAttribute("src") ?? "", /^data:image\//);
    await screenshot(page, "flow-wallet-nfts");

    await page.getByRole("navigation", { name: "Wallet" }).getByRole("link", { name: "Tokens" })
      .click();
    await page.getByTestId("tokens").getByText("AGU", { exact: true }).waitFor();
    await page.getByLabel("Token contract address").fill(contracts.utility);
    await page.getByRole("button", { name: "Add token" }).click();
    await page.getByText("That token is already in your list.").waitFor();
    await page.getByLabel("Token contract address").fill(contracts.erc721[0]);
    await page.getByRole("button", { name: "Add token" }).click();
    await page.getByText("That contract does not behave as an ERC-20 token.").waitFor();

    // A custom token named and symbolled like the platform's AGU is marked as not the platform's.
    const { artifacts } = await compileContracts();
    const clients = await chainClients(testRpcUrl());
    const owner = typeof clients.account === "string" ? clients.account : clients.account.address;
    const lookAlike = await deployContract(clients, artifacts, "AgoraUtilityToken", [owner]);
    await page.getByLabel("Token contract address").fill(lookAlike);
    await page.getByRole("button", { name: "Add token" }).click();
    const row = page.getByTestId("tokens").locator("tr", { hasText: lookAlike });
    await row.getByTestId("custom-token-badge").getByText("Custom token — not issued by").waitFor();
    await row.getByTestId("custom-token-warning").getByText("it only shares its symbol").waitFor();
    // The platform's own AGU is not marked.
    const platformRow = page.getByTestId("tokens").locator("tr", {
      hasText: "Platform utility token",
    });
    assert.equal(await platformRow.getByTestId("custom-token-badge").count(), 0);
    await screenshot(page, "flow-wallet-look-alike-token");

    // Receive: the address as a QR code whose dark modules are the address's, and as text.
    await page.getByRole("navigation", { name: "Wallet" }).getByRole("link", { name: "Receive" })
      .click();
    const [mine] = await stack.deps.sql<{ address: string }[]>`
      select address from app.wallets where user_id = ${person.id}`;
    assert.equal(await page.getByTestId("receive-address").textContent(), mine.address);
    const dark = encode(mine.address).data.flat().filter(Boolean).length;
    assert.equal(await page.getByTestId("qr-code").locator("g rect").count(), dark);
    assert.equal(await page.getByRole("img", { name: /QR code of your address/ }).count(), 1);
    assert.deepEqual(session.errors.filter((e) => !/status of (409|422)/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

test("[web] wallet: the key export is decrypted in the page and shown once; a stale sign-in is asked to sign in again", async () => {
  const person = await createPerson(stack, "Kai Keys", "MEMBER");
  const session = await openContext(stack, { permissions: ["clipboard-read", "clipboard-write"] });
  try {
    await signInThroughPages(stack, session, person, "/wallet/export");
    const [wallet] = await stack.deps.sql<{ address: string }[]>`
      select address from app.wallets where user_id = ${person.id}`;
    const page = session.page;
    await page.getByLabel("I understand that anyone who sees this key").check();
    await page.getByRole("button", { name: "Show my private key" }).click();
    const key = await page.getByLabel("Private key").inputValue();
    assert.match(key, /^0x[0-9a-f]{64}$/i);
    assert.equal(privateKeyToAccount(key as `0x${string}`).address, wallet.address);
    await page.getByRole("button", { name: "Copy the key" }).click();
    await page.getByText("Copied.").waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key);
    await page.getByRole("button", { name: "I have saved it: hide it" }).click();
    assert.equal(await page.getByLabel("Private key").count(), 0);
    // Never kept by the page.
    const stored = await page.evaluate(() =>
      JSON.stringify({ ...localStorage, ...sessionStorage })
    );
    assert.ok(!stored.includes(key.slice(2)), "the key is not in script storage");

    // A sign-in older than security.freshSignInSeconds: explained, and the way back offered.
    await stack.deps.sql`
      update app.sessions set authenticated_at = now() - interval '11 minutes'
      where user_id = ${person.id}`;
    await page.getByRole("button", { name: "Show my private key" }).click();
    await page.getByTestId("reauth-needed").getByText("Please sign in again first.").waitFor();
    await screenshot(page, "flow-wallet-export-reauth");
    assert.equal(await page.getByRole("button", { name: "Show my private key" }).count(), 0);
    await page.getByRole("button", { name: "Sign in again" }).click();
    await page.waitForURL((url) => url.pathname === "/signin" && url.searchParams.has("reauth"));
    await page.getByRole("heading", { name: "Confirm it’s you" }).waitFor();
    assert.equal(await page.getByLabel("E-mail address").inputValue(), person.email);
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await page.getByTestId("dev-magic-link").click();
    await page.waitForURL((url) => url.pathname === "/wallet/export");
    await page.getByLabel("I understand that anyone who sees this key").check();
    await page.getByRole("button", { name: "Show my private key" }).click();
    await page.getByTestId("exported-key").waitFor();
    const [{ n }] = await stack.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.security_events
      where type = 'wallet.key_exported' and user_id = ${person.id}`;
    assert.equal(n, 2);
    assert.deepEqual(session.errors.filter((e) => !/status of 403/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

// Last in the file (tests run in order): this file's browser and server stop here.
test("[web] teardown: the wallet file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
