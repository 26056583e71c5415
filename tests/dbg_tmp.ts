import { expectJson, signInAs, testApp } from "./helpers.ts";
import { fund, platform, walletJobs } from "./wallet-support.ts";
import { drain } from "../functions/api/jobs/queue.ts";
const t = testApp();
const contracts = await platform(t.deps);
const senders = [];
for (let i = 0; i < 10; i++) {
  const s = await signInAs(t, "MEMBER");
  const { wallet } = await expectJson(
    await t.request("GET", "/api/wallet", { token: s.accessToken }),
    200,
  );
  senders.push({ token: s.accessToken, address: wallet.address });
}
for (const s of senders) await fund(contracts, s.address, { nfts: false });
const t0 = performance.now();
const ids: string[] = [];
await Promise.all(senders.map(async (s, i) => {
  const to = senders[(i + 1) % senders.length].address;
  const created = await Promise.all(
    Array.from({ length: 10 }, (_, n) =>
      t.request("POST", "/api/wallet/transfer", {
        token: s.token,
        body: { to, token: "AGU", amount: String(1000 + n) },
      }).then((r) => r.json())),
  );
  ids.push(...created.map((c) => c.id));
  await Promise.all(
    created.map((c) =>
      t.request("POST", `/api/wallet/transactions/${c.id}/confirm`, { token: s.token }).then((r) =>
        r.json()
      )
    ),
  );
}));
const t1 = performance.now();
for (;;) {
  await drain(t.deps, { registry: walletJobs(), maxJobs: 1000, batch: 20 });
  const [{ n }] = await t.deps
    .sql`select count(*)::int as n from app.wallet_transactions where id = any(${ids}::uuid[]) and status = 'confirmed'`;
  if (n === 100) break;
}
const t2 = performance.now();
console.log("create+confirm", (t1 - t0).toFixed(0), "ms; mined", (t2 - t1).toFixed(0), "ms");
Deno.exit(0);
