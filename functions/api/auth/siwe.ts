/**
 * Sign-In with Ethereum (EIP-4361) for browser wallets. A named server path
 * (docs/authorization.md): the signature is what establishes who the caller is.
 *
 * 1. `GET /api/auth/nonce`: 32 random alphanumerics from the platform's CSPRNG (viem's
 *    generateSiweNonce uses Math.random, so it is not used), stored as a SHA-256 hash, ten minutes,
 *    single use. Rate-limited per IP.
 * 2. The wallet signs a message built with that nonce. `POST /api/auth/signin { provider:
 *    "wallet", message, signature }`: rate-limited per IP and per address; the message is parsed
 *    with viem's `parseSiweMessage` (400 when it is not an EIP-4361 message: a missing field, a
 *    version other than 1, a date that is not RFC 3339); then, each refusal 401:
 *    - `domain` is the host of an allowed origin (the site's own, or AGORA_ALLOWED_ORIGINS'), and
 *      `uri` is on that very origin; a `scheme`, when given, is the URI's;
 *    - `chainId` is the configuration's `wallet.chainId`;
 *    - `issuedAt` is not in the future (60 s of clock skew) nor older than a nonce lives;
 *      `expirationTime` (if any) is later than now, `notBefore` (if any) not later;
 *    - the nonce is one the server handed out, unspent and unexpired;
 *    - the signature: `verifySiweMessage` (viem) first as an EIP-191 personal signature of the
 *      account, recovered locally; failing that, when the address holds code on the chain at
 *      AGORA_RPC_URL, as a contract wallet's ERC-1271 `isValidSignature` (viem calls it through
 *      its ERC-6492 validator). A chain that does not answer: 503 `chain_unavailable`.
 *    Only then is the nonce spent, by one conditional update: a replay, even a concurrent one,
 *    finds it spent.
 * 3. The account: the wallet's identity (its checksummed address) signs in to its account, or
 *    makes a new one; a wallet never links to an existing account by itself, only with `link`.
 */
import {
  createClient,
  createPublicClient,
  custom,
  getAddress,
  type Hex,
  http,
  type PublicClient,
} from "viem";
import { parseSiweMessage, type SiweMessage, verifySiweMessage } from "viem/siwe";
import { sha256Hex } from "../../_shared/crypto.ts";
import { ApiError, badRequest, unauthenticated } from "../../_shared/errors.ts";
import type { Deps } from "../core/context.ts";
import { enforceRateLimit, type RateContext } from "../core/rate-limits.ts";
import { resolveAccount } from "./accounts.ts";
import { createSession } from "./sessions.ts";
import type { IssuedSession } from "../core/context.ts";
import { serverSql } from "../core/doors.ts";

export const NONCE_TTL_SECONDS = 600;
const NONCE_LENGTH = 32;
const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const CLOCK_SKEW_MS = 60_000;

/** A nonce of `NONCE_LENGTH` alphanumerics, uniformly drawn (rejection sampling). */
export function newNonce(): string {
  let out = "";
  while (out.length < NONCE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(NONCE_LENGTH * 2))) {
      // 248 = 62 * 4: bytes above it would favour the first characters.
      if (byte < 248 && out.length < NONCE_LENGTH) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

/** `GET /api/auth/nonce`. */
export async function issueNonce(
  deps: Deps,
  ctx: RateContext,
): Promise<{ nonce: string; expiresAt: Date }> {
  const sql = serverSql(deps, "wallet sign-in");
  await enforceRateLimit(deps, ctx, {
    bucket: `nonce:ip:${ctx.ip ?? "unknown"}`,
    rule: deps.settings.rateLimits.noncePerIp,
    group: "nonce_ip",
  });
  const nonce = newNonce();
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into app_private.siwe_nonces (nonce_hash, ip, expires_at)
    values (${await sha256Hex(
    nonce,
  )}, ${ctx.ip}, now() + make_interval(secs => ${NONCE_TTL_SECONDS}))
    returning expires_at`;
  return { nonce, expiresAt: row.expires_at };
}

/** Why a wallet sign-in was refused (401), for the security event. */
export type WalletRefusal =
  | "wrong_domain"
  | "wrong_uri"
  | "wrong_chain"
  | "not_yet_valid"
  | "expired"
  | "issued_in_future"
  | "unknown_or_spent_nonce"
  | "bad_signature";

class Refused extends Error {
  constructor(readonly reason: WalletRefusal, message: string) {
    super(message);
  }
}

/** The checks of the message's fields, in the order the module comment lists them. */
function checkFields(deps: Deps, parsed: SiweMessage, chainId: number, now: Date): void {
  const origins = deps.settings.allowedOrigins.map((o) => new URL(o));
  if (!origins.some((o) => o.host === parsed.domain)) {
    throw new Refused("wrong_domain", "The message is for another site.");
  }
  let uri: URL | null = null;
  try {
    uri = new URL(parsed.uri);
  } catch {
    uri = null;
  }
  if (
    !uri || uri.host !== parsed.domain || !deps.settings.allowedOrigins.includes(uri.origin) ||
    (parsed.scheme !== undefined && `${parsed.scheme}:` !== uri.protocol)
  ) {
    throw new Refused("wrong_uri", "The message's URI is not this site's.");
  }
  if (parsed.chainId !== chainId) {
    throw new Refused("wrong_chain", `The message is for chain ${parsed.chainId}, not ${chainId}.`);
  }
  const issuedAt = parsed.issuedAt!.getTime();
  if (issuedAt > now.getTime() + CLOCK_SKEW_MS) {
    throw new Refused("issued_in_future", "The message was issued in the future.");
  }
  if (issuedAt < now.getTime() - NONCE_TTL_SECONDS * 1000) {
    throw new Refused("expired", "The message was issued too long ago.");
  }
  if (parsed.expirationTime && parsed.expirationTime.getTime() <= now.getTime()) {
    throw new Refused("expired", "The message has expired.");
  }
  if (parsed.notBefore && parsed.notBefore.getTime() > now.getTime()) {
    throw new Refused("not_yet_valid", "The message is not valid yet.");
  }
}

/** Parses an EIP-4361 message; 400 when it is not one. */
export function parseMessage(message: string): SiweMessage {
  const parsed = parseSiweMessage(message);
  const bad = (what: string) =>
    badRequest("The message is not an EIP-4361 sign-in message.", [
      { path: "message", message: what },
    ]);
  for (const field of ["domain", "address", "uri", "version", "nonce"] as const) {
    if (!parsed[field]) throw bad(`no ${field}`);
  }
  if (parsed.version !== "1") throw bad("version must be 1");
  if (typeof parsed.chainId !== "number" || !Number.isSafeInteger(parsed.chainId)) {
    throw bad("no chain id");
  }
  for (const field of ["issuedAt", "expirationTime", "notBefore"] as const) {
    const value = parsed[field];
    if (field === "issuedAt" && !value) throw bad("no issued-at time");
    if (value && Number.isNaN(value.getTime())) throw bad(`${field} is not an RFC 3339 time`);
  }
  if (parsed.nonce!.length < 8) throw bad("the nonce has fewer than 8 characters");
  return parsed as SiweMessage;
}

/** A client that can do nothing on the network: verifies EIP-191 signatures locally only. */
const offline = createClient({
  transport: custom({
    request: () => Promise.reject(new Error("no chain: local EIP-191 verification only")),
  }),
});
const chains = new Map<string, PublicClient>();

function chainClient(url: string): PublicClient {
  let client = chains.get(url);
  if (!client) {
    client = createPublicClient({
      transport: http(url, { timeout: 5_000, retryCount: 1 }),
    }) as PublicClient;
    chains.set(url, client);
  }
  return client;
}

/**
 * Whether `signature` signs `message` for its address: EIP-191 by the account itself, or
 * ERC-1271 by the contract wallet at that address (through the chain). Throws 503
 * `chain_unavailable` when the chain is needed and does not answer.
 */
export async function verifyWalletSignature(
  deps: Deps,
  parsed: SiweMessage,
  message: string,
  signature: Hex,
  now: Date,
): Promise<boolean> {
  const params = { message, signature, domain: parsed.domain, nonce: parsed.nonce, time: now };
  try {
    // `mode: "eoa"` (passed through to viem's verifyHash) recovers the signer locally first.
    if (await verifySiweMessage(offline, { ...params, mode: "eoa" } as typeof params)) return true;
  } catch {
    // not an account's signature; maybe a contract wallet's
  }
  const rpcUrl = deps.settings.rpcUrl;
  if (!rpcUrl) return false;
  const client = chainClient(rpcUrl);
  let code: Hex | undefined;
  try {
    code = await client.getCode({ address: parsed.address! });
  } catch (err) {
    deps.log("warn", "chain unavailable for a contract-wallet sign-in", { error: String(err) });
    throw new ApiError("chain_unavailable", "The chain does not answer; try again later.");
  }
  if (!code || code === "0x") return false;
  try {
    return await verifySiweMessage(client, params);
  } catch (err) {
    deps.log("warn", "ERC-1271 check failed", { error: String(err) });
    throw new ApiError("chain_unavailable", "The chain does not answer; try again later.");
  }
}

/** `POST /api/auth/signin { provider: "wallet", message, signature, link? }`. */
export async function signInWithWallet(
  deps: Deps,
  input: { message: string; signature: Hex; linkUserId: string | null },
  ctx: RateContext,
): Promise<{ session: IssuedSession; newAccount: boolean }> {
  const sql = serverSql(deps, "wallet sign-in");
  const parsed = parseMessage(input.message);
  const address = getAddress(parsed.address!);
  await enforceRateLimit(deps, ctx, {
    bucket: `signin:wallet:${address.toLowerCase()}`,
    rule: deps.settings.rateLimits.signinPerWallet,
    group: "signin_wallet",
    details: { address },
  });
  const failed = (reason: string, userId: string | null = null) =>
    deps.security({
      type: "auth.signin_failed",
      severity: "warning",
      userId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { provider: "wallet", reason, address },
    });
  const now = new Date();
  const nonceHash = await sha256Hex(parsed.nonce!);
  try {
    checkFields(deps, parsed, (await deps.config.get()).wallet.chainId, now);
    const [known] = await sql`
      select 1 from app_private.siwe_nonces
      where nonce_hash = ${nonceHash} and used_at is null and expires_at > now()`;
    if (!known) {
      throw new Refused("unknown_or_spent_nonce", "The nonce is unknown, used or expired.");
    }
    if (!(await verifyWalletSignature(deps, parsed, input.message, input.signature, now))) {
      throw new Refused("bad_signature", "The signature does not match the address.");
    }
    const spent = await sql`
      update app_private.siwe_nonces set used_at = now()
      where nonce_hash = ${nonceHash} and used_at is null and expires_at > now()
      returning 1`;
    if (!spent.length) {
      throw new Refused("unknown_or_spent_nonce", "The nonce is unknown, used or expired.");
    }
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    await failed(err.reason);
    throw unauthenticated(err.message);
  }

  const account = await resolveAccount(deps, {
    provider: "wallet",
    subject: address,
    email: null,
    emailVerified: false,
    name: null,
    image: null,
  }, input.linkUserId);
  if (!account.ok) {
    await failed(account.reason, account.userId);
    if (account.reason === "identity_in_use") {
      throw new ApiError("conflict", "This wallet already signs in to another account.");
    }
    if (account.reason === "signups_closed") {
      throw new ApiError("forbidden", "Sign-ups are closed.");
    }
    throw new ApiError("forbidden", "This account is suspended.");
  }
  if (account.linked) {
    await deps.security({
      type: "auth.identity_linked",
      severity: "warning",
      userId: account.userId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { provider: "wallet", via: account.linked, address },
    });
  }
  const session = await createSession(deps, {
    userId: account.userId,
    provider: "wallet",
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  await deps.security({
    type: "auth.signin",
    userId: account.userId,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: {
      provider: "wallet",
      sessionId: session.user.sessionId,
      newAccount: account.newAccount,
      address,
    },
  });
  return { session, newAccount: account.newAccount };
}
