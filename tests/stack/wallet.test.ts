/**
 * The wallet in `npm start`: the four seeded accounts get wallets, funded with native currency,
 * each platform token and demo NFTs (which the follower indexes); a new user's wallet is funded
 * as soon as it is created; a transfer is confirmed within 5 s of its confirm (anvil, one
 * confirmation; the stack's own job worker and follower, no test drain).
 */
import assert from "node:assert/strict";
import { freePort } from "../../stack/postgres.ts";
import { expectJson, test } from "../support/helpers.ts";
import { startStack, stopStack } from "./stack-process.ts";

async function until<T>(what: string, fn: () => Promise<T | null>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("[stack] npm start: seeded wallets funded (the member with NFTs), new wallets funded, a transfer confirmed within 5 s", async () => {
  const localDir = await Deno.makeTempDir({ prefix: "agora-stack-" });
  await Deno.chmod(localDir, 0o755); // the database server runs as the postgres user
  const port = freePort();
  const base = `http://localhost:${port}`;
  const running = await startStack(localDir, { port, dbPort: freePort() });
  try {
    assert.match(running.output(), /created 4 seeded wallet\(s\)/);
    assert.match(running.output(), /funded 4 seeded wallet\(s\) on the chain/);

    const signIn = async (email: string): Promise<{ token: string; userId: string }> => {
      const sent = await fetch(`${base}/api/auth/signin`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "email", email }),
      });
      await sent.body?.cancel();
      const mail = await expectJson(await fetch(`${base}/_dev/mail?to=${email}`), 200);
      const token = new URL(mail.items[0].links[0]).searchParams.get("token");
      const session = await expectJson(
        await fetch(`${base}/api/auth/verify`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ token }),
        }),
        200,
      );
      return { token: session.accessToken, userId: session.user.id };
    };
    const get = async (token: string, path: string) =>
      await expectJson(
        await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } }),
        200,
      );
    const post = async (token: string, path: string, body?: unknown, status = 200) =>
      await expectJson(
        await fetch(`${base}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        status,
      );
    const agu = (balance: { balances: { token: { symbol: string }; formatted: string }[] }) =>
      balance.balances.find((b) => b.token.symbol === "AGU")?.formatted;

    const member = await signIn("member@example.com");
    const balance = await get(member.token, "/api/wallet/balance");
    assert.equal(agu(balance), "1000", "the seeded member holds each platform token");
    assert.equal(balance.balances[0].formatted, "10", "and native currency");
    const nfts = await until("the member's NFTs to be indexed", async () => {
      const page = await get(member.token, "/api/wallet/nfts");
      return page.items.length ? page.items : null;
    }, 10_000);
    assert.ok(nfts.length >= 1, "the seeded member has demo NFTs");
    assert.ok(nfts.every((n: { name: string | null }) => n.name));
    for (
      const email of ["admin@example.com", "confidential@example.com", "subscriber@example.com"]
    ) {
      const seeded = await signIn(email);
      assert.equal(agu(await get(seeded.token, "/api/wallet/balance")), "1000", email);
    }

    const newcomer = await signIn("newcomer@example.test");
    await until("the new wallet to be funded", async () => {
      return agu(await get(newcomer.token, "/api/wallet/balance")) === "1000" ? true : null;
    }, 20_000);

    const { transaction: created } = await post(newcomer.token, "/api/wallet/transfer", {
      to: { userId: member.userId },
      token: "AGU",
      amount: "1000000000000000000",
    }, 201);
    const started = Date.now();
    const { transaction: submitted } = await post(
      newcomer.token,
      `/api/wallet/transactions/${created.id}/confirm`,
    );
    assert.ok(["submitted", "confirmed"].includes(submitted.status));
    const confirmedAfter = await until("the transfer to be confirmed", async () => {
      const page = await get(newcomer.token, "/api/wallet/transactions?direction=out");
      const row = page.items.find((i: { id: string }) => i.id === created.id);
      return row.status === "confirmed" ? Date.now() - started : null;
    }, 5_000);
    assert.ok(confirmedAfter < 5_000, `confirmed ${confirmedAfter} ms after the confirm`);
    const received = await until("the member to see it arrive", async () => {
      const page = await get(member.token, "/api/wallet/transactions?direction=in");
      return page.items.find((i: { hash: string }) => i.hash === submitted.hash) ?? null;
    }, 10_000);
    assert.equal(received.status, "confirmed");
  } finally {
    const status = await stopStack(running);
    assert.equal(status.code, 0, running.output().slice(-2000));
    await Deno.remove(localDir, { recursive: true }).catch(() => {});
  }
});
