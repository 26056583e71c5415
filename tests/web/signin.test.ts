/**
 * Sign-in and the account in Chromium against a real stack server:
 * - a browser wallet: a small EIP-1193 provider injected into the page (as a wallet extension
 *   does), signing with a viem local account in the test through `page.exposeFunction`; the page
 *   builds the EIP-4361 message from GET /api/auth/nonce, asks `personal_sign`, and signs in;
 *   a declined request and a wallet on another chain are explained;
 * - Google and Apple against real OpenID Connect servers (oauth2-mock-server, tests/support/oidc-peers.ts):
 *   the browser follows the authorization redirect and comes back through the callback (Apple's
 *   `form_post` is rendered the way Apple's page does it: a form that posts itself);
 * - the account page: sessions listed, "sign out everywhere else" (the other browser is signed
 *   out on its next action), ending one session, the export downloaded, and the deletion with its
 *   fresh sign-in explained.
 */
import assert from "node:assert/strict";
import { type Hex, hexToString } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { test } from "../support/helpers.ts";
import { startPeers } from "../support/oidc-peers.ts";
import {
  apiCall,
  bearer,
  createPerson,
  openContext,
  screenshot,
  type Session,
  signInThroughPages,
  startWebStack,
} from "./browser.ts";

const peers = await startPeers();
const stack = await startWebStack(peers.env);
const chainId = (await stack.deps.config.get()).wallet.chainId;

interface FakeWallet {
  address: string;
  /** What the next request answers instead: an EIP-1193 error, or another chain. */
  next: { decline?: boolean; chainId?: number };
  signed: string[];
}

/**
 * Injects `window.ethereum` into every page of the session: a provider object whose requests the
 * test answers with a viem local account (the key never enters the page).
 */
async function injectWallet(session: Session): Promise<FakeWallet> {
  const account = privateKeyToAccount(generatePrivateKey());
  const wallet: FakeWallet = { address: account.address, next: {}, signed: [] };
  await session.page.exposeFunction(
    "agoraTestWallet",
    async (method: string, params: unknown[]) => {
      if (wallet.next.decline) {
        wallet.next = {};
        return { error: { code: 4001, message: "User rejected the request." } };
      }
      switch (method) {
        case "eth_requestAccounts":
        case "eth_accounts":
          // Wallets hand out lowercase addresses; the page's message must carry the checksum.
          return { result: [account.address.toLowerCase()] };
        case "eth_chainId": {
          const id = wallet.next.chainId ?? chainId;
          wallet.next = {};
          return { result: `0x${id.toString(16)}` };
        }
        case "personal_sign": {
          const [data, from] = params as [Hex, string];
          assert.equal(from.toLowerCase(), account.address.toLowerCase());
          wallet.signed.push(hexToString(data));
          return { result: await account.signMessage({ message: { raw: data } }) };
        }
        default:
          return { error: { code: 4200, message: `Unsupported method ${method}` } };
      }
    },
  );
  await session.page.addInitScript(() => {
    // deno-lint-ignore no-explicit-any
    const call = (globalThis as any).agoraTestWallet;
    // deno-lint-ignore no-explicit-any
    (globalThis as any).ethereum = {
      isAgoraTest: true,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const answer = await call(method, params ?? []);
        if (answer.error) throw Object.assign(new Error(answer.error.message), answer.error);
        return answer.result;
      },
    };
  });
  return wallet;
}

test("[web] sign-in with a browser wallet: SIWE through the injected EIP-1193 provider; a refusal and a wrong chain are explained", async () => {
  const session = await openContext(stack);
  try {
    const wallet = await injectWallet(session);
    const page = session.page;
    await page.goto(`${stack.base}/signin`);
    const button = page.getByRole("button", { name: "Sign in with a wallet" });
    await button.waitFor();
    await screenshot(page, "flow-signin-providers");

    wallet.next = { decline: true };
    await button.click();
    await page.getByText("You declined the request in your wallet.").waitFor();

    wallet.next = { chainId: 1 };
    await button.click();
    await page.getByText(`The message is for chain 1, not ${chainId}.`).waitFor();

    await button.click();
    await page.waitForURL((url) => url.pathname === "/chat");
    await page.getByTestId("who").waitFor();
    const message = wallet.signed[wallet.signed.length - 1];
    const host = new URL(stack.base).host;
    assert.ok(
      message.startsWith(
        `${host} wants you to sign in with your Ethereum account:\n${wallet.address}\n`,
      ),
      message,
    );
    assert.match(message, new RegExp(`\nURI: ${stack.base}\n`));
    assert.match(message, new RegExp(`\nChain ID: ${chainId}\n`));
    const [identity] = await stack.deps.sql<{ user_id: string }[]>`
      select user_id from app.identities where provider = 'wallet' and provider_user_id = ${wallet.address}`;
    assert.ok(identity, "the wallet's identity signs in to an account");
    const [sessionRow] = await stack.deps.sql<{ n: number }[]>`
      select count(*)::int as n from app.sessions
      where user_id = ${identity.user_id} and revoked_at is null`;
    assert.equal(sessionRow.n, 1);
    // The refused attempts left only 401s behind (the wrong chain).
    assert.deepEqual(session.errors.filter((e) => !/status of 401/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

test("[web] sign-in with Google through a real OpenID Connect server, and with Apple's form post", async () => {
  const session = await openContext(stack);
  try {
    const page = session.page;
    const sub = `g-${crypto.randomUUID()}`;
    const email = `gia.${sub.slice(2, 10)}@gmail.test`;
    peers.google.identity = { sub, email, email_verified: true, name: "Gia Google" };
    await page.goto(`${stack.base}/signin?next=%2Fstore`);
    await page.getByRole("button", { name: "Continue with Google" }).click();
    // Out to the provider and back through the callback, which sets the cookies.
    await page.waitForURL((url) => url.pathname === "/store");
    await page.getByTestId("who").getByText("Gia Google").waitFor();
    const [user] = await stack.deps.sql<{ email: string }[]>`
      select u.email from app.identities i join app.users u on u.id = i.user_id
      where i.provider = 'google' and i.provider_user_id = ${sub}`;
    assert.equal(user.email, email);
    assert.deepEqual(session.errors, []);
  } finally {
    await session.context.close();
  }

  // Apple answers with `response_mode=form_post`: its page posts the code back. The OIDC server
  // redirects instead, so the test renders that redirect as Apple's page would: a form that posts
  // itself to our callback.
  const apple = await openContext(stack);
  try {
    const page = apple.page;
    const sub = `a-${crypto.randomUUID()}`;
    peers.apple.identity = {
      sub,
      email: `${sub.slice(2, 10)}@privaterelay.appleid.test`,
      email_verified: "true",
    };
    await page.route(`${peers.apple.issuer}/authorize**`, async (route) => {
      const url = new URL(route.request().url());
      assert.equal(url.searchParams.get("response_mode"), "form_post");
      const answer = await route.fetch({ maxRedirects: 0 });
      const back = new URL(answer.headers()["location"]);
      const field = (name: string) =>
        `<input type="hidden" name="${name}" value="${back.searchParams.get(name)}">`;
      await route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><form method="post" action="${back.origin}${back.pathname}">` +
          `${field("code")}${field("state")}` +
          `<input type="hidden" name="user" value='{"name":{"firstName":"Ari","lastName":"Apple"}}'>` +
          `</form><script>document.forms[0].submit()</script>`,
      });
    });
    await page.goto(`${stack.base}/signin`);
    await page.getByRole("button", { name: "Continue with Apple" }).click();
    await page.waitForURL((url) => url.pathname === "/chat");
    await page.getByTestId("who").getByText("Ari Apple").waitFor();
    assert.deepEqual(apple.errors, []);
  } finally {
    await apple.context.close();
  }
});

/** Asks for a magic link on the sign-in page; returns the link the dev mailbox holds. */
async function requestLink(session: Session, email: string): Promise<string> {
  const { page } = session;
  await page.goto(`${stack.base}/signin`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByRole("button", { name: "Send me a sign-in link" }).click();
  const link = page.getByTestId("dev-magic-link");
  await link.waitFor();
  return (await link.getAttribute("href"))!;
}

test("[web] sign-in: a used link and a suspended person's link land on the sign-in page, which says what happened and what to do", async () => {
  const person = await createPerson(stack, "Uma Used", "MEMBER");
  const admin = await createPerson(stack, "Sue Support", "ADMIN");
  const laptop = await openContext(stack);
  const phone = await openContext(stack);
  const adminToken = await bearer(stack, admin);
  try {
    // The link works once, in the laptop's browser...
    const link = await requestLink(laptop, person.email);
    await laptop.page.goto(link);
    await laptop.page.waitForURL((url) => url.pathname === "/chat");
    await laptop.page.getByTestId("who").getByText(person.name).waitFor();

    // ...opened again (here on the phone): the app's sign-in page, not an API error.
    await phone.page.goto(link);
    await phone.page.waitForURL((url) =>
      url.pathname === "/signin" && url.searchParams.get("error") === "link_invalid"
    );
    const alert = phone.page.getByTestId("signin-error");
    await alert.getByText("This sign-in link was already used or has expired").waitFor();
    assert.doesNotMatch(await phone.page.locator("body").innerText(), /"error"|unauthenticated/);
    await screenshot(phone.page, "flow-signin-link-used");
    // What to do: send a new link, right there; it signs in.
    await phone.page.getByLabel("E-mail address").fill(person.email);
    await phone.page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await phone.page.getByTestId("dev-magic-link").click();
    await phone.page.waitForURL((url) => url.pathname === "/chat");
    await phone.page.getByTestId("who").getByText(person.name).waitFor();
    assert.deepEqual([...laptop.errors, ...phone.errors], []);
    await laptop.page.close();
    await phone.page.close();

    // Suspended: the page says so, with the white label's support address.
    await apiCall(stack, adminToken, "PUT", "/api/admin/config", {
      config: { whiteLabel: { supportEmail: "help@agora.example" } },
      reason: "support address for the sign-in page",
    });
    await apiCall(stack, adminToken, "PUT", `/api/admin/users/${person.id}/status`, {
      status: "suspended",
      reason: "journey test",
    });
    const suspended = await openContext(stack);
    try {
      const fresh = await requestLink(suspended, person.email);
      await suspended.page.goto(fresh);
      await suspended.page.waitForURL((url) =>
        url.pathname === "/signin" && url.searchParams.get("error") === "suspended"
      );
      const refused = suspended.page.getByTestId("signin-error");
      await refused.getByText("This account is suspended").waitFor();
      assert.equal(
        await refused.getByRole("link", { name: "help@agora.example" }).getAttribute("href"),
        "mailto:help@agora.example",
      );
      await screenshot(suspended.page, "flow-signin-suspended");
      assert.deepEqual(suspended.errors, []);
    } finally {
      await suspended.context.close();
    }
  } finally {
    await laptop.context.close();
    await phone.context.close();
    await apiCall(stack, adminToken, "PUT", "/api/admin/config", {
      config: { whiteLabel: { supportEmail: null } },
      reason: "test cleanup",
    });
  }
});

test("[web] account: sessions listed; sign out everywhere else (the other browser is signed out on its next action); one session ended", async () => {
  const person = await createPerson(stack, "Seb Sessions", "MEMBER");
  const laptop = await openContext(stack);
  const phone = await openContext(stack, {
    userAgent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 " +
      "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
  });
  try {
    await signInThroughPages(stack, phone, person, "/chat");
    await signInThroughPages(stack, laptop, person, "/account");
    const page = laptop.page;
    const list = page.getByTestId("sessions");
    await page.waitForFunction(() =>
      document.querySelectorAll('[data-testid="sessions"] > li').length === 2
    );
    await list.getByText("This device").waitFor();
    await list.getByText("Safari on iOS").waitFor();
    await screenshot(page, "flow-account-sessions");
    await page.getByRole("button", { name: "Sign out everywhere else" }).click();
    await page.getByText("Signed out 1 other session.").waitFor();
    await page.waitForFunction(() =>
      document.querySelectorAll('[data-testid="sessions"] > li').length === 1
    );
    // The phone's next action finds its session ended, and says so.
    await phone.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Wallet" })
      .click();
    await phone.page.waitForURL((url) => url.pathname === "/signin");
    await phone.page.getByTestId("session-ended").getByText("Your session has ended").waitFor();

    // A session of an API client, ended from the page: its token is refused at once.
    const token = await bearer(stack, person);
    await page.reload();
    const other = page.locator('[data-testid="sessions"] > li', { hasText: "An API client" });
    await other.getByRole("button", { name: /^End the session/ }).click();
    await page.getByText("That session has ended.").waitFor();
    const refused = await fetch(`${stack.base}/api/auth/session`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = await refused.json();
    assert.ok(refused.status === 401 || body.user === null, JSON.stringify(body));
    assert.deepEqual(laptop.errors, []);
    assert.deepEqual(phone.errors.filter((e) => !/status of 401/.test(e)), []);
  } finally {
    await laptop.context.close();
    await phone.context.close();
  }
});

test("[web] account: the export downloads as JSON; deleting needs a fresh sign-in, explained, then deletes and signs out", async () => {
  const person = await createPerson(stack, "Del Eted", "MEMBER");
  const session = await openContext(stack);
  try {
    await signInThroughPages(stack, session, person, "/account");
    const page = session.page;
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download my data" }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^account-export-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = JSON.parse(await Deno.readTextFile((await download.path())!));
    assert.equal(exported.profile.email, person.email);
    assert.ok(Array.isArray(exported.sessions));
    await page.getByText(/^Saved account-export-/).waitFor();

    // An old sign-in: the API refuses with reauthentication_required and the page explains it.
    await stack.deps.sql`
      update app.sessions set authenticated_at = now() - interval '11 minutes'
      where user_id = ${person.id}`;
    await page.getByRole("button", { name: "Delete my account…" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Delete for good" }).click();
    await dialog.getByText("Type “delete my account” to confirm.").waitFor();
    await dialog.getByLabel("Type delete my account to confirm").fill("delete my account");
    await dialog.getByRole("button", { name: "Delete for good" }).click();
    await dialog.getByTestId("reauth-needed").getByText("Please sign in again first.").waitFor();
    await screenshot(page, "flow-account-delete-reauth");
    await dialog.getByRole("button", { name: "Sign in again" }).click();
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.getByRole("button", { name: "Send me a sign-in link" }).click();
    await page.getByTestId("dev-magic-link").click();
    // Back on the account page with the dialog open again.
    await page.waitForURL((url) => url.pathname === "/account");
    await dialog.getByLabel("Type delete my account to confirm").fill("delete my account");
    await dialog.getByRole("button", { name: "Delete for good" }).click();
    await page.waitForURL((url) => url.pathname === "/signin");
    await page.getByText("Your account was deleted.").waitFor();
    const rows = await stack.deps
      .sql`select 1 from app.users where id = ${person.id} and email is not null`;
    assert.equal(rows.length, 0, "the profile is gone");
    assert.deepEqual(session.errors.filter((e) => !/status of 403/.test(e)), []);
  } finally {
    await session.context.close();
  }
});

// Last in the file (tests run in order): this file's browser, server and OIDC servers stop here.
test("[web] teardown: the sign-in file's Chromium, stack server and OIDC servers stop", async () => {
  await stack.close();
  await peers.google.stop();
  await peers.apple.stop();
  assert.equal(stack.browser.isConnected(), false);
});
