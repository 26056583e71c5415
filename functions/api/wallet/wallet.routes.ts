/**
 * /api/wallet: the custodial wallet. SUBSCRIBER and above (declared on this router). Reads run as
 * the caller (wallet/wallet.queries.ts, RLS: one's own wallet, history and NFTs); what creates keys,
 * reads the chain to decide, signs or exports is a named server path in functions/api/wallet/
 * (docs/authorization.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { isAddress } from "viem";
import type { Context } from "hono";
import type { AppEnv } from "../core/context.ts";
import {
  decodeCursor,
  errors,
  json,
  jsonBody,
  limitParam,
  pageOf,
  router,
  signedIn,
  timeIdCursor,
} from "../core/openapi.ts";
import { asUser, serverSql } from "../core/doors.ts";
import { requireRole } from "../core/middleware/roles.ts";
import { conflict, notFound, unauthenticated } from "../../_shared/errors.ts";
import { sha256Hex } from "../../_shared/crypto.ts";
import { rateRecorder } from "../core/rate-headers.ts";
import { noStore } from "../core/cookies.ts";
import { listNfts, listTransactions, myWallet, myWalletAndTokens } from "./wallet.queries.ts";
import { createWallet, walletJson, walletOf } from "./wallets.ts";
import { readBalances } from "./balances.ts";
import { platformContracts } from "./chain.ts";
import { addCustomToken, customTokens, platformTokens } from "./tokens.ts";
import { cancelTransfer, confirmTransfer, createTransfer } from "./transfers.ts";
import { exportKey } from "./export.ts";
import { assertFreshSignIn } from "../core/middleware/freshness.ts";

export const wallet = router();
wallet.use("*", requireRole("SUBSCRIBER"));

const address = z.string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "a 0x-prefixed 20-byte address")
  .refine((a) => isAddress(a, { strict: true }), "the EIP-55 checksum is wrong")
  .openapi({ example: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" });
const digits = (v: string) => /^[0-9]{1,78}$/.test(v);
const amount = z.string()
  .regex(/^[0-9]{1,78}$/, "base units as a decimal string of digits")
  .refine((v) => !digits(v) || BigInt(v) > 0n, "must be more than zero")
  .refine((v) => !digits(v) || BigInt(v) < 2n ** 256n, "must fit in 256 bits")
  .openapi({ example: "1500000000000000000" });
const timestamp = z.string().openapi({ format: "date-time" });

const walletSchema = z.object({
  id: z.uuid(),
  address: z.string(),
  chainId: z.number().int(),
  createdAt: timestamp,
  exportedAt: timestamp.nullable(),
}).openapi("Wallet");

const tokenSchema = z.object({
  kind: z.enum(["native", "utility", "governance", "staking", "custom"]),
  symbol: z.string(),
  name: z.string(),
  decimals: z.number().int(),
  address: z.string().nullable(),
  chainId: z.number().int(),
}).openapi("Token");

const transactionSchema = z.object({
  id: z.uuid(),
  direction: z.enum(["out", "in"]),
  status: z.enum(["pending", "submitted", "confirmed", "failed", "expired", "cancelled"]),
  token: tokenSchema,
  from: z.string(),
  to: z.string(),
  toUserId: z.uuid().nullable(),
  counterparty: z.union([
    z.object({ type: z.literal("mint") }),
    z.object({ type: z.literal("user"), userId: z.uuid(), name: z.string() }),
  ]).nullable().openapi({
    description: "Who is on the other side (`to` of an outgoing transfer, `from` of an incoming " +
      "one): `mint` for the zero address (tokens created), `user` for an active person's " +
      "custodial wallet with their profile name, null for an address outside the platform",
  }),
  amount: z.string().openapi({ description: "Base units, a decimal string" }),
  hash: z.string().nullable(),
  nonce: z.number().int().nullable(),
  blockNumber: z.number().int().nullable(),
  confirmations: z.number().int().nullable(),
  maxFee: z.string().nullable().openapi({
    description: "Native base units: the most this transfer's gas can cost (gas limit × max fee " +
      "per gas, quoted at creation), what a confirm step shows; null for an incoming transfer",
  }),
  fee: z.string().nullable().openapi({
    description: "Native base units: gasUsed × effectiveGasPrice; null until mined",
  }),
  error: z.string().nullable(),
  createdAt: timestamp,
  expiresAt: timestamp.nullable(),
  confirmedAt: timestamp.nullable(),
}).openapi("WalletTransaction");

const nftSchema = z.object({
  contract: z.string(),
  tokenId: z.string().openapi({ description: "A decimal string" }),
  standard: z.enum(["ERC721", "ERC1155"]),
  balance: z.string().openapi({ description: "How many the wallet holds (1 for ERC-721)" }),
  name: z.string().nullable(),
  image: z.string().nullable(),
  tokenUri: z.string().nullable(),
  collection: z.object({ name: z.string().nullable(), symbol: z.string().nullable() }),
}).openapi("Nft");

const idParam = z.object({ id: z.uuid() });

/** The caller (the router's gate guarantees one). */
function caller(c: Context<AppEnv>) {
  const user = c.get("user");
  if (!user) throw unauthenticated();
  return user;
}

wallet.openapi(
  createRoute({
    method: "get",
    path: "/",
    operationId: "getWallet",
    summary: "The caller's wallet",
    description: "404 when the caller has none yet (a wallet is created at the first sign-in " +
      "from SUBSCRIBER up, or by `POST /api/wallet/create`).",
    security: signedIn,
    responses: {
      200: json(z.object({ wallet: walletSchema }), "The wallet"),
      ...errors(401, 403, 404),
    },
  }),
  async (c) => {
    const row = await asUser(c, (tx) => myWallet(tx));
    if (!row) throw notFound("You have no wallet yet.");
    const config = await c.get("deps").config.get();
    return c.json({ wallet: walletJson(row, config.wallet.chainId) }, 200);
  },
);

wallet.openapi(
  createRoute({
    method: "post",
    path: "/create",
    operationId: "createWallet",
    summary: "Create the caller's wallet",
    description: "A new key from a CSPRNG, stored encrypted (AES-256-GCM under a per-wallet data " +
      "key wrapped by the platform's master key). 409 when the caller already has a wallet.",
    security: signedIn,
    responses: {
      201: json(z.object({ wallet: walletSchema }), "The new wallet"),
      ...errors(401, 403, 409),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const user = caller(c);
    const sql = serverSql(deps, "wallet creation");
    if (await walletOf(sql, user.id)) throw conflict("You already have a wallet.");
    const row = await createWallet(deps, user.id);
    const config = await deps.config.get();
    return c.json({ wallet: walletJson(row, config.wallet.chainId) }, 201);
  },
);

wallet.openapi(
  createRoute({
    method: "get",
    path: "/balance",
    operationId: "getWalletBalance",
    summary: "Balances of native currency, the platform's tokens and the caller's tokens",
    description: "Read in one multicall (one `eth_call` to the node) at one block. A token " +
      "whose contract does not answer has `balance` and `formatted` null. 503 " +
      "`chain_unavailable` when the node does not answer.",
    security: signedIn,
    responses: {
      200: json(
        z.object({
          address: z.string(),
          chainId: z.number().int(),
          blockNumber: z.number().int(),
          balances: z.array(z.object({
            token: tokenSchema,
            balance: z.string().nullable(),
            formatted: z.string().nullable(),
          })),
        }),
        "The balances",
      ),
      ...errors(401, 403, 404, 503),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const config = await deps.config.get();
    const contracts = platformContracts(config);
    const mine = await asUser(c, (tx) => myWalletAndTokens(tx, contracts.chainId));
    if (!mine) throw notFound("You have no wallet yet.");
    const row = mine.wallet;
    const tokens = [...await platformTokens(deps, config), ...mine.tokens];
    const read = await readBalances(
      deps,
      contracts.chainId,
      contracts.multicall3,
      row.address as `0x${string}`,
      tokens,
    );
    return c.json({
      address: row.address,
      chainId: contracts.chainId,
      blockNumber: read.blockNumber,
      balances: read.balances,
    }, 200);
  },
);

const transferBody = z.object({
  to: z.union([address, z.object({ userId: z.uuid() })]).openapi({
    description: "A 0x address (EIP-55 checksum checked when mixed case) or `{ userId }`",
  }),
  token: z.string().min(1).max(100).openapi({
    description: "`native`, a token symbol, or a token's 0x address",
    example: "native",
  }),
  amount: amount.openapi({ description: "Base units, a decimal string, more than zero" }),
}).openapi("TransferRequest");

wallet.openapi(
  createRoute({
    method: "post",
    path: "/transfer",
    operationId: "createTransfer",
    summary: "Prepare a transfer (pending until confirmed)",
    description: "Validates the recipient and token, checks the balance less what is still in " +
      "flight (and gas, in native currency) and answers the transaction `pending` with its " +
      "`expiresAt` (`wallet.pendingTtlSeconds`). Nothing is signed or sent before " +
      "`POST /api/wallet/transactions/{id}/confirm`. With `Idempotency-Key`, the same key and " +
      "body within 24 h replay the first answer (201 `{ transaction }`, the transaction as it " +
      "was then); another body is 409.",
    security: signedIn,
    request: {
      headers: z.object({ "idempotency-key": z.string().min(1).max(255).optional() }),
      body: jsonBody(transferBody),
    },
    responses: {
      201: json(z.object({ transaction: transactionSchema }), "The pending transaction"),
      ...errors(400, 401, 403, 404, 409, 422, 503),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const key = c.req.valid("header")["idempotency-key"] ?? null;
    const user = caller(c);
    const idempotency = key
      ? { key, hash: await sha256Hex(JSON.stringify([body.to, body.token, body.amount])) }
      : null;
    const transaction = await createTransfer(c.get("deps"), user.id, {
      to: body.to as `0x${string}` | { userId: string },
      token: body.token,
      amount: BigInt(body.amount),
    }, idempotency);
    return c.json({ transaction: transaction as z.infer<typeof transactionSchema> }, 201);
  },
);

const statusEnum = z.enum(["pending", "submitted", "confirmed", "failed", "expired", "cancelled"]);

wallet.openapi(
  createRoute({
    method: "get",
    path: "/transactions",
    operationId: "listWalletTransactions",
    summary: "The caller's transactions, out and in, newest first",
    security: signedIn,
    request: {
      query: z.object({
        status: statusEnum.optional(),
        direction: z.enum(["in", "out"]).optional(),
        token: z.string().min(1).max(100).optional().openapi({
          description: "`native`, a symbol or a token address",
        }),
        limit: limitParam,
        cursor: z.string().max(500).optional(),
      }),
    },
    responses: {
      200: json(
        pageOf(transactionSchema),
        "A page of transactions",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = timeIdCursor(q.cursor);
    const page = await asUser(c, (tx) =>
      listTransactions(tx, {
        status: q.status,
        direction: q.direction,
        token: q.token,
        after,
        limit: q.limit,
      }));
    return c.json(
      page as { items: z.infer<typeof transactionSchema>[]; nextCursor: string | null },
      200,
    );
  },
);

wallet.openapi(
  createRoute({
    method: "post",
    path: "/transactions/{id}/confirm",
    operationId: "confirmTransfer",
    summary: "Confirm a pending transfer: sign it and send it",
    description: "Signs with the wallet's next nonce (allocated in the database: distinct and " +
      "gapless under concurrent confirms) and queues the broadcast: answers `submitted` with " +
      "`hash` and `nonce` (or `confirmed` when the chain was quicker). Confirming again answers " +
      "the transaction as it is. 404 for a transaction that is not the caller's; 422 once " +
      "expired, and 422 `invalid_transition` once cancelled (a confirm racing a cancel: " +
      "exactly one wins); 503 `chain_unavailable` when the node does not answer (nothing is " +
      "signed).",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(z.object({ transaction: transactionSchema }), "The transaction"),
      ...errors(400, 401, 403, 404, 422, 503),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const transaction = await confirmTransfer(c.get("deps"), caller(c).id, id);
    return c.json({ transaction: transaction as z.infer<typeof transactionSchema> }, 200);
  },
);

wallet.openapi(
  createRoute({
    method: "post",
    path: "/transactions/{id}/cancel",
    operationId: "cancelTransfer",
    summary: 'Cancel a pending transfer ("Don\'t send")',
    description: "The owner withdraws a transfer before confirming it: `pending` becomes " +
      "`cancelled`, nothing is signed or sent, and its amount and gas are no longer held " +
      "against later transfers. Cancelling again answers the transaction as it is. 404 for a " +
      "transaction that is not the caller's; 422 `invalid_transition` once it was confirmed " +
      "(submitted, confirmed, failed) or expired. A cancel racing a confirm: the row is locked " +
      "by both, exactly one wins and the other is 422.",
    security: signedIn,
    request: { params: idParam },
    responses: {
      200: json(z.object({ transaction: transactionSchema }), "The cancelled transaction"),
      ...errors(400, 401, 403, 404, 422),
    },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const transaction = await asUser(c, (tx) => cancelTransfer(tx, id));
    return c.json({ transaction: transaction as z.infer<typeof transactionSchema> }, 200);
  },
);

wallet.openapi(
  createRoute({
    method: "get",
    path: "/tokens",
    operationId: "listWalletTokens",
    summary: "The tokens of the caller's wallet",
    description: "Native currency, the platform's utility, governance and staking-rewards " +
      "tokens, then the tokens the caller added.",
    security: signedIn,
    responses: {
      200: json(z.object({ items: z.array(tokenSchema) }), "The tokens"),
      ...errors(401, 403, 503),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const config = await deps.config.get();
    const custom = await asUser(c, (tx) => customTokens(tx, config.wallet.chainId));
    return c.json({ items: [...await platformTokens(deps, config), ...custom] }, 200);
  },
);

wallet.openapi(
  createRoute({
    method: "post",
    path: "/tokens/add",
    operationId: "addWalletToken",
    summary: "Add an ERC-20 to the caller's wallet",
    description: "Read from the chain: code at the address, and `decimals`, `symbol`, `name`, " +
      "`totalSupply` and `balanceOf` answering sensibly; else 422 `not_erc20`. 409 when it is " +
      "already in the caller's list (the platform's tokens always are).",
    security: signedIn,
    request: { body: jsonBody(z.object({ address })) },
    responses: {
      201: json(tokenSchema, "The token"),
      ...errors(400, 401, 403, 409, 422, 503),
    },
  }),
  async (c) => {
    const { address: tokenAddress } = c.req.valid("json");
    const token = await addCustomToken(
      c.get("deps"),
      caller(c).id,
      tokenAddress as `0x${string}`,
    );
    return c.json(token, 201);
  },
);

wallet.openapi(
  createRoute({
    method: "get",
    path: "/nfts",
    operationId: "listWalletNfts",
    summary: "The caller's NFTs of the platform's collections",
    description: "ERC-721 and ERC-1155 holdings, from the collections' transfer logs, with their " +
      "token URI metadata (data: URIs decoded); newest first.",
    security: signedIn,
    request: {
      query: z.object({ limit: limitParam, cursor: z.string().max(500).optional() }),
    },
    responses: {
      200: json(
        pageOf(nftSchema),
        "A page of NFTs",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const q = c.req.valid("query");
    const after = q.cursor
      ? decodeCursor(q.cursor, ["string", "string", "string"]) as [string, string, string]
      : null;
    const config = await c.get("deps").config.get();
    const page = await asUser(
      c,
      (tx) => listNfts(tx, { chainId: config.wallet.chainId, after, limit: q.limit }),
    );
    return c.json(page, 200);
  },
);

const b64url = z.string().regex(/^[A-Za-z0-9_-]{43}$/, "32 bytes, base64url")
  .openapi({ example: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU" });
const publicJwk = z.strictObject({
  kty: z.literal("EC"),
  crv: z.literal("P-256"),
  x: b64url,
  y: b64url,
  kid: z.string().max(200).optional(),
  use: z.literal("enc").optional(),
  alg: z.literal("ECDH-ES").optional(),
  ext: z.boolean().optional(),
  key_ops: z.array(z.string().max(40)).max(10).optional(),
}).openapi({ description: "A one-time EC P-256 public key (JWK); a private key (`d`) is refused" });

wallet.openapi(
  createRoute({
    method: "post",
    path: "/export",
    operationId: "exportWalletKey",
    summary: "Export the wallet's private key, encrypted to the client",
    description: "Answers a compact JWE (`alg` `ECDH-ES`, `enc` `A256GCM`) encrypted to the " +
      "given one-time P-256 public key, whose plaintext is the 0x-prefixed private key. Needs a " +
      "sign-in within `security.freshSignInSeconds` (403 `reauthentication_required`), at most " +
      "`wallet.exportsPerDay` a day (429), is recorded as the security event " +
      "`wallet.key_exported` and notifies the owner (critical).",
    security: signedIn,
    request: { body: jsonBody(z.object({ publicKey: publicJwk })) },
    responses: {
      200: json(z.object({ address: z.string(), jwe: z.string() }), "The encrypted key"),
      ...errors(400, 401, 403, 404, 429),
    },
  }),
  async (c) => {
    const { publicKey } = c.req.valid("json");
    // A stolen session must not be enough: the sign-in behind it must be recent.
    await assertFreshSignIn(c);
    const result = await exportKey(c.get("deps"), caller(c), publicKey, {
      ip: c.get("ip"),
      userAgent: c.get("userAgent"),
      rate: rateRecorder(c),
    });
    noStore(c);
    return c.json(result, 200);
  },
);
