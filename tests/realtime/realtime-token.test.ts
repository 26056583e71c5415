/**
 * The page's Realtime token and how long a signed-out session keeps a channel (docs/realtime.md,
 * "Signing out and hosted Realtime"): hosted Realtime checks the channel's policies only at join
 * and when a new token arrives, and closes the channel when its token expires. So the page's
 * token lives `AGORA_REALTIME_TOKEN_TTL` (120 s), is renewed before that, and renewal is refused
 * once the session ends: the channel dies at the last token's expiry.
 */
import assert from "node:assert/strict";
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { decodeJwt, decodeProtectedHeader, importJWK, SignJWT } from "jose";
import {
  browserSignIn,
  expectError,
  expectJson,
  signAsApp,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";
import { startStackServer } from "../../stack/server.ts";
import { generateSigningKey } from "../../stack/local-env.ts";
import { createPageToken } from "../../web/realtime/page-token.ts";
import { renewalDelay } from "../../web/realtime/transport.ts";

const t = testApp();
const ORIGIN = "http://localhost:54321";

async function pageToken(app: ReturnType<typeof testApp>, cookies: Record<string, string>) {
  return await app.request("POST", "/api/auth/token", {
    cookies,
    headers: { origin: ORIGIN, "x-csrf-token": cookies["agora-csrf"] },
  });
}

test("[realtime token] the page's token lives AGORA_REALTIME_TOKEN_TTL (120 s), an access token 900 s", async () => {
  const { cookies } = await browserSignIn(t, uniqueEmail("page"));
  const body = await expectJson(await pageToken(t, cookies), 200);
  const claims = decodeJwt(body.accessToken);
  assert.equal(claims.exp! - claims.iat!, 120);
  assert.equal(new Date(body.expiresAt).getTime(), claims.exp! * 1000);
  assert.equal(decodeProtectedHeader(body.accessToken).alg, "ES256", "the local default");
  const access = decodeJwt(cookies["agora-access-token"]);
  assert.equal(access.exp! - access.iat!, 900, "the session's own access token is unchanged");

  const shorter = testApp({ AGORA_REALTIME_TOKEN_TTL: "45" });
  const page = await browserSignIn(shorter, uniqueEmail("page"));
  const short = decodeJwt(
    (await expectJson(await pageToken(shorter, page.cookies), 200)).accessToken,
  );
  assert.equal(short.exp! - short.iat!, 45);
});

test("[realtime token] after sign-out the page cannot renew: 401, so its channels end at the last token's expiry", async () => {
  const { cookies } = await browserSignIn(t, uniqueEmail("page"));
  await expectJson(await pageToken(t, cookies), 200);
  const out = await t.request("POST", "/api/auth/signout", {
    cookies,
    headers: { origin: ORIGIN, "x-csrf-token": cookies["agora-csrf"] },
  });
  assert.equal(out.status, 200);
  await expectError(await pageToken(t, cookies), 401, "unauthenticated");
});

// The local gateway, as supabase-js reaches it -----------------------------------------------

const server = startStackServer(t.deps, { port: 0 });
await server.gateway.ready;
const base = `http://127.0.0.1:${server.port}`;
const anonKey = await t.deps.tokens.apiKey("anon");

function joinStatus(channel: RealtimeChannel): Promise<{ status: string; err?: Error }> {
  return new Promise((resolve) => {
    channel.subscribe((status, err) => {
      if (status === "SUBSCRIBED" || status === "CHANNEL_ERROR" || status === "TIMED_OUT") {
        resolve({ status, err });
      }
    });
  });
}

async function privateChannel(token: string, topic: string) {
  const client: SupabaseClient = createClient(base, anonKey, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  await client.realtime.setAuth(token);
  return { client, channel: client.channel(topic, { config: { private: true } }) };
}

test("[realtime token] the gateway verifies ES256 by the JWKS, refuses an unknown key, and closes the channel at exp", async () => {
  const alice = await signInAs(t, "MEMBER");
  const bob = await signInAs(t, "MEMBER");
  const created = await t.request("POST", "/api/conversations", {
    token: alice.accessToken,
    body: { type: "group", participantIds: [bob.user.id], title: "Realtime token" },
  });
  const topic = `conversation:${(await expectJson(created, 201)).id}`;
  const claims = decodeJwt(bob.accessToken);
  const clients: SupabaseClient[] = [];
  try {
    // A key the gateway's JWKS does not hold, with a kid of its own: refused.
    const stranger = JSON.parse(generateSigningKey());
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", typ: "JWT", kid: stranger.kid })
      .sign(await importJWK(stranger, "ES256"));
    const refused = await privateChannel(forged, topic);
    clients.push(refused.client);
    const answer = await joinStatus(refused.channel);
    assert.equal(answer.status, "CHANNEL_ERROR");
    assert.match(String(answer.err?.message), /JwtSignatureError/);

    // Ours, expiring in 2 s: joins, then the gateway closes it with "Token has expired".
    const shortLived = await signAsApp(t, { ...claims, exp: Math.floor(Date.now() / 1000) + 2 });
    assert.equal(decodeProtectedHeader(shortLived).alg, "ES256");
    const { client, channel } = await privateChannel(shortLived, topic);
    clients.push(client);
    const closed = new Promise<string>((resolve) => {
      channel.on("system", {}, (p) => p.status === "error" && resolve(String(p.message)));
      setTimeout(() => resolve("no system error"), 6_000);
    });
    assert.equal((await joinStatus(channel)).status, "SUBSCRIBED");
    assert.match(await closed, /^Token has expired \d+ seconds ago$/);
  } finally {
    for (const c of clients) await c.removeAllChannels();
  }
});

// The web client's renewal (web/realtime/page-token.ts, web/realtime/transport.ts) -------------

test("[realtime token] the web client keeps a 120 s token for a minute, then fetches a new one", async () => {
  let now = 1_000_000_000_000;
  let fetched = 0;
  const cache = createPageToken(() => {
    fetched++;
    return Promise.resolve({
      accessToken: `token-${fetched}`,
      expiresAt: new Date(now + 120_000).toISOString(),
    });
  }, () => now);
  assert.equal(await cache.get(), "token-1");
  now += 10_000;
  assert.equal(await cache.get(), "token-1", "a heartbeat 10 s later reuses it");
  now += 45_000;
  assert.equal(await cache.get(), "token-1", "55 s in: still more than half its life left");
  now += 6_000;
  assert.equal(await cache.get(), "token-2", "61 s in: renewed, well before its expiry");
  assert.equal(fetched, 2);
  // A 900 s token (an older server): kept until two minutes are left, as before.
  const long = createPageToken(
    () =>
      Promise.resolve({ accessToken: "long", expiresAt: new Date(now + 900_000).toISOString() }),
    () => now,
  );
  await long.get();
  now += 779_000;
  assert.equal(await long.get(), "long");

  // The transport renews a two-minute token after one minute (half its life), never after exp.
  const issuedAt = 2_000_000_000;
  assert.equal(renewalDelay(issuedAt + 120, issuedAt * 1000), 60_000);
  assert.equal(renewalDelay(issuedAt + 900, issuedAt * 1000), 840_000);
  assert.equal(renewalDelay(issuedAt + 120, (issuedAt + 100) * 1000), 10_000);
});
