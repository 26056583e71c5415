/**
 * The authorization matrix, generated: every operation of the OpenAPI document, as every persona,
 * compared with docs/authorization.md read as data (its endpoint table: the lowest role; its
 * table of resources by id: owner, stranger, ADMIN stranger). A new route is tried the day it is
 * added, and fails here until the document says who may call it.
 */
import assert from "node:assert/strict";
import { parseEther } from "viem";
import { expectJson, type SignedIn, signIn, signInAs, test, testApp } from "../support/helpers.ts";
import { approvedVendor, checkout, product } from "../support/store.ts";
import { addressOfCaller, fund, platform } from "../support/wallet.ts";

const t = testApp();
const doc = await expectJson(await t.request("GET", "/api/openapi.json"), 200);

// --- docs/authorization.md, read as data ----------------------------------------------------------

const ROLES = ["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"] as const;
type Role = typeof ROLES[number];
/** Who may call an operation, from the endpoint table's "lowest role" column. */
type Needs =
  | { kind: "anyone" }
  | { kind: "credential" }
  | { kind: "signedIn" }
  | { kind: "role"; role: Role }
  | { kind: "serviceKey" };

const authorizationDoc = await Deno.readTextFile(
  new URL("../../docs/authorization.md", import.meta.url),
);

/** The rows of the markdown table that follows `heading` (cells trimmed, header row skipped). */
function tableAfter(heading: string): string[][] {
  const lines = authorizationDoc.split("\n");
  const start = lines.findIndex((line) => line.trim() === heading);
  assert.ok(start >= 0, `docs/authorization.md has "${heading}"`);
  const rows: string[][] = [];
  let inTable = false;
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith("|")) {
      inTable = true;
      rows.push(line.split("|").slice(1, -1).map((cell) => cell.trim()));
    } else if (inTable) break;
  }
  return rows.slice(2); // the header and its --- line
}

/** `METHOD /path` keys of a row: "GET, PUT" gives two; the path without its query. */
function keysOf(methods: string, path: string): string[] {
  const bare = path.replace(/`/g, "").split("?")[0];
  return methods.split(",").map((m) => `${m.trim()} ${bare}`);
}

function needsOf(cell: string): Needs {
  if (cell.startsWith("the service role key")) return { kind: "serviceKey" };
  if (cell.startsWith("signed in")) return { kind: "signedIn" };
  // "VISITOR (holder of a refresh token)": anyone, with a credential of its own in the request,
  // which no persona's access token stands in for.
  if (cell.startsWith("VISITOR (holder of")) return { kind: "credential" };
  const role = ROLES.find((r) => cell.startsWith(r));
  assert.ok(role, `a lowest role in "${cell}"`);
  return role === "VISITOR" ? { kind: "anyone" } : { kind: "role", role };
}

const endpointTable = new Map<string, Needs>();
for (const [methods, path, lowest] of tableAfter("## Endpoints")) {
  for (const key of keysOf(methods, path)) endpointTable.set(key, needsOf(lowest));
}

type Outcome = "allowed" | 403 | 404;
interface ResourceRow {
  owner: string;
  stranger: Outcome;
  adminStranger: Outcome;
}
const outcome = (cell: string): Outcome =>
  cell.startsWith("allowed") ? "allowed" : Number(cell) as 403 | 404;
const resourceTable = new Map<string, ResourceRow>();
for (
  const [method, path, owner, stranger, adminStranger] of tableAfter(
    "### Another person's resource",
  )
) {
  for (const key of keysOf(method, path)) {
    resourceTable.set(key, {
      owner,
      stranger: outcome(stranger),
      adminStranger: outcome(adminStranger),
    });
  }
}

const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap((
  [path, item],
) => Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })));

test("[matrix] docs/authorization.md names every operation of the OpenAPI document", () => {
  assert.ok(operations.length >= 80, `${operations.length} operations`);
  const missing = operations.filter((op) => !endpointTable.has(`${op.method} ${op.path}`));
  assert.deepEqual(missing.map((op) => `${op.method} ${op.path}`), []);
  const withId = operations.filter((op) => {
    const needs = endpointTable.get(`${op.method} ${op.path}`);
    return /\{(id|userId)\}/.test(op.path) &&
      !(needs?.kind === "role" && needs.role === "ADMIN");
  });
  assert.deepEqual(
    withId.filter((op) => !resourceTable.has(`${op.method} ${op.path}`)).map((op) =>
      `${op.method} ${op.path}`
    ),
    [],
    "every operation on a resource by id says whose it is",
  );
  for (const key of resourceTable.keys()) {
    assert.ok(operations.some((op) => `${op.method} ${op.path}` === key), `${key} exists`);
  }
});

// --- personas -----------------------------------------------------------------------------------

type Persona = "anonymous" | "ended session" | "suspended" | Role;
const live = new Map<Role, SignedIn>();
for (const role of ROLES) live.set(role, await signInAs(t, role));
const admin = () => live.get("ADMIN")!;

const ended = await signInAs(t, "SUBSCRIBER");
await expectJson(
  await t.request("POST", "/api/auth/signout", { token: ended.accessToken }),
  200,
);
const suspended = await signInAs(t, "MEMBER");
await expectJson(
  await t.request("PUT", `/api/admin/users/${suspended.user.id}/status`, {
    token: admin().accessToken,
    body: { status: "suspended", reason: "authorization matrix" },
  }),
  200,
);

function tokenOf(persona: Persona): string | undefined {
  if (persona === "anonymous") return undefined;
  if (persona === "ended session") return ended.accessToken;
  if (persona === "suspended") return suspended.accessToken;
  return live.get(persona)!.accessToken;
}

/** A persona's session ended by the call just made (a sign-out, say): sign the role in again. */
async function keepAlive(): Promise<void> {
  for (const role of ROLES) {
    const session = await expectJson(
      await t.request("GET", "/api/auth/session", { token: live.get(role)!.accessToken }),
      200,
    );
    if (!session.user) live.set(role, await signInAs(t, role));
  }
}

/** What a persona may expect of an operation, from the endpoint table. */
function expected(needs: Needs, persona: Persona): string {
  const signedOut = persona === "anonymous" || persona === "ended session" ||
    persona === "suspended";
  switch (needs.kind) {
    case "anyone":
      return "through";
    case "credential":
      return "refused without it";
    case "signedIn":
      return signedOut ? "401" : "through";
    case "serviceKey":
      return persona === "anonymous" ? "401" : "403";
    case "role":
      if (signedOut) return "401";
      return ROLES.indexOf(persona as Role) < ROLES.indexOf(needs.role)
        ? `refused below ${needs.role}`
        : "through";
  }
}

/** 401; the role gate's 403 (naming the role); any other 403; or through the gates. */
async function observed(needs: Needs, response: Response): Promise<string> {
  if (needs.kind === "credential" && (response.status === 400 || response.status === 401)) {
    return "refused without it";
  }
  if (response.status === 401) return "401";
  if (response.status !== 403) return "through";
  const body = await response.json();
  const gate = /^This needs the (\w+) role\.$/.exec(body.error?.message ?? "");
  if (gate) return `refused below ${gate[1]}`;
  return needs.kind === "serviceKey" ? "403" : "through";
}

const PERSONAS: Persona[] = ["anonymous", "ended session", "suspended", ...ROLES];

test("[matrix] every operation as every persona: 401 without a live session where one is needed, the role gate below the lowest role, through at or above it", async () => {
  const wrong: string[] = [];
  let calls = 0;
  for (const op of operations) {
    const needs = endpointTable.get(`${op.method} ${op.path}`);
    if (!needs) continue; // reported by the test above
    // A malformed id and no body: a persona the gates let through gets a 400 from validation
    // (or the route's own answer when it takes no input); the gates answer before it.
    const path = op.path.replace(/\{[^}]+\}/g, "not-an-id");
    for (const persona of PERSONAS) {
      const response = await t.request(op.method, path, { token: tokenOf(persona) });
      calls++;
      const got = await observed(needs, response);
      const want = expected(needs, persona);
      if (got !== want) {
        wrong.push(
          `${op.method} ${op.path} as ${persona}: ${response.status} (${got}), expected ${want}`,
        );
      }
    }
    if (op.method !== "GET") await keepAlive();
  }
  assert.deepEqual(wrong, []);
  assert.ok(calls >= 80 * PERSONAS.length, `${calls} calls`);
});

test("[matrix] the admin gate covers every path under /api/admin, unknown ones too", async () => {
  for (const persona of PERSONAS) {
    const response = await t.request("GET", "/api/admin/no-such-thing", {
      token: tokenOf(persona),
    });
    const want = persona === "ADMIN" ? 404 : ["anonymous", "ended session", "suspended"]
        .includes(persona)
      ? 401
      : 403;
    assert.equal(response.status, want, `${persona}: ${response.status}`);
  }
});

// --- owner and strangers, with real resources -------------------------------------------------------

interface Fixture {
  /** The path with its ids filled. */
  path: string;
  owner: SignedIn;
  /** A valid body for the owner (the strangers send the same). */
  body?: unknown;
}

const contracts = await platform(t.deps);
const vendor = await approvedVendor(t, admin());

async function groupOf(owner: SignedIn) {
  const other = await signInAs(t, "SUBSCRIBER");
  const conversation = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: owner.accessToken,
      body: { type: "group", title: "Matrix", participantIds: [other.user.id] },
    }),
    201,
  );
  return { conversation, other };
}

async function messageOf(owner: SignedIn) {
  const { conversation } = await groupOf(owner);
  const message = await expectJson(
    await t.request("POST", `/api/conversations/${conversation.id}/messages`, {
      token: owner.accessToken,
      body: { content: "hello" },
    }),
    201,
  );
  return message;
}

/** A real resource for each operation of the resource table, and its owner. */
const FIXTURES: Record<string, (owner: SignedIn) => Promise<Omit<Fixture, "owner">>> = {
  "DELETE /api/auth/sessions/{id}": async (owner) => {
    const second = await signIn(t, owner.user.email);
    const sessions = await expectJson(
      await t.request("GET", "/api/auth/sessions", { token: second.accessToken }),
      200,
    );
    const other = sessions.items.find((s: { current: boolean }) => s.current);
    return { path: `/api/auth/sessions/${other.id}` };
  },
  "DELETE /api/auth/identities/{id}": async (owner) => {
    const [identity] = await t.deps.sql<{ id: string }[]>`
      insert into app.identities (user_id, provider, provider_user_id)
      values (${owner.user.id}, 'google', ${crypto.randomUUID()}) returning id`;
    return { path: `/api/auth/identities/${identity.id}` };
  },
  "GET /api/conversations/{id}/messages": async (owner) => ({
    path: `/api/conversations/${(await groupOf(owner)).conversation.id}/messages`,
  }),
  "POST /api/conversations/{id}/messages": async (owner) => ({
    path: `/api/conversations/${(await groupOf(owner)).conversation.id}/messages`,
    body: { content: "hi" },
  }),
  "POST /api/conversations/{id}/typing": async (owner) => ({
    path: `/api/conversations/${(await groupOf(owner)).conversation.id}/typing`,
    body: { isTyping: true },
  }),
  "GET /api/conversations/{id}/settings": async (owner) => ({
    path: `/api/conversations/${(await groupOf(owner)).conversation.id}/settings`,
  }),
  "PUT /api/conversations/{id}/settings": async (owner) => ({
    path: `/api/conversations/${(await groupOf(owner)).conversation.id}/settings`,
    body: { muted: true },
  }),
  "POST /api/conversations/{id}/participants": async (owner) => {
    const newcomer = await signInAs(t, "SUBSCRIBER");
    return {
      path: `/api/conversations/${(await groupOf(owner)).conversation.id}/participants`,
      body: { userIds: [newcomer.user.id] },
    };
  },
  "DELETE /api/conversations/{id}/participants/{userId}": async (owner) => {
    const { conversation, other } = await groupOf(owner);
    return { path: `/api/conversations/${conversation.id}/participants/${other.user.id}` };
  },
  "PUT /api/messages/{id}": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}`,
    body: { content: "edited" },
  }),
  "DELETE /api/messages/{id}": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}`,
  }),
  "PUT /api/messages/{id}/read": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}/read`,
  }),
  "PUT /api/conversations/{id}/unread": async (owner) => {
    const message = await messageOf(owner);
    return {
      path: `/api/conversations/${message.conversationId}/unread`,
      body: { fromMessageId: message.id },
    };
  },
  "PUT /api/messages/{id}/reactions/{emoji}": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}/reactions/${encodeURIComponent("👍")}`,
  }),
  "DELETE /api/messages/{id}/reactions/{emoji}": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}/reactions/${encodeURIComponent("👍")}`,
  }),
  "GET /api/messages/{id}/thread": async (owner) => ({
    path: `/api/messages/${(await messageOf(owner)).id}/thread`,
  }),
  "GET /api/attachments/{id}": async (owner) => {
    const form = new FormData();
    form.append(
      "file",
      new File([new TextEncoder().encode("note")], "note.txt", {
        type: "text/plain",
      }),
    );
    const uploaded = await expectJson(
      await t.request("POST", "/api/attachments", { token: owner.accessToken, rawBody: form }),
      201,
    );
    return { path: `/api/attachments/${uploaded.id}` };
  },
  "GET /api/users/{id}": (owner) => Promise.resolve({ path: `/api/users/${owner.user.id}` }),
  "PUT /api/users/{id}/block": (owner) =>
    Promise.resolve({ path: `/api/users/${owner.user.id}/block` }),
  "DELETE /api/users/{id}/block": (owner) =>
    Promise.resolve({ path: `/api/users/${owner.user.id}/block` }),
  "GET /api/users/{id}/image": async (owner) => {
    // A 1x1 PNG, uploaded and made the owner's picture.
    const png = Uint8Array.from(
      atob(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      ),
      (ch) => ch.charCodeAt(0),
    );
    const form = new FormData();
    form.append("file", new File([png], "me.png", { type: "image/png" }));
    const uploaded = await expectJson(
      await t.request("POST", "/api/attachments", { token: owner.accessToken, rawBody: form }),
      201,
    );
    await expectJson(
      await t.request("PUT", "/api/profile", {
        token: owner.accessToken,
        body: { imageId: uploaded.id },
      }),
      200,
    );
    return { path: `/api/users/${owner.user.id}/image` };
  },
  "POST /api/wallet/transactions/{id}/confirm": async (owner) => {
    const address = await addressOfCaller(t, owner.accessToken);
    await fund(contracts, address, { native: parseEther("1"), tokens: 0n, nfts: false });
    const { transaction } = await expectJson(
      await t.request("POST", "/api/wallet/transfer", {
        token: owner.accessToken,
        body: {
          to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          token: "native",
          amount: "1000",
        },
      }),
      201,
    );
    return { path: `/api/wallet/transactions/${transaction.id}/confirm` };
  },
  "POST /api/wallet/transactions/{id}/cancel": async (owner) => {
    const address = await addressOfCaller(t, owner.accessToken);
    await fund(contracts, address, { native: parseEther("1"), tokens: 0n, nfts: false });
    const { transaction } = await expectJson(
      await t.request("POST", "/api/wallet/transfer", {
        token: owner.accessToken,
        body: {
          to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          token: "native",
          amount: "1000",
        },
      }),
      201,
    );
    return { path: `/api/wallet/transactions/${transaction.id}/cancel` };
  },
  "PUT /api/notifications/{id}/read": async (owner) => ({
    path: `/api/notifications/${(await notificationOf(owner)).id}/read`,
  }),
  "DELETE /api/notifications/{id}": async (owner) => ({
    path: `/api/notifications/${(await notificationOf(owner)).id}`,
  }),
  "GET /api/store/products/{id}": async () => ({
    path: `/api/store/products/${(await product(t, vendor)).id}`,
  }),
  "GET /api/store/images/{id}": async () => {
    // A 1x1 PNG uploaded by the vendor's owner and listed among an active product's images.
    const png = Uint8Array.from(
      atob(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      ),
      (ch) => ch.charCodeAt(0),
    );
    const form = new FormData();
    form.append("file", new File([png], "pot.png", { type: "image/png" }));
    const uploaded = await expectJson(
      await t.request("POST", "/api/attachments", {
        token: vendor.owner.accessToken,
        rawBody: form,
      }),
      201,
    );
    const made = await product(t, vendor);
    await expectJson(
      await t.request("PUT", `/api/store/products/${made.id}`, {
        token: vendor.owner.accessToken,
        body: { images: [`/api/store/images/${uploaded.id}`] },
      }),
      200,
    );
    return { path: `/api/store/images/${uploaded.id}` };
  },
  "PUT /api/store/products/{id}": async () => ({
    path: `/api/store/products/${(await product(t, vendor)).id}`,
    body: { description: "Edited by its owner" },
  }),
  "GET /api/store/orders/{id}": async (owner) => ({
    path: `/api/store/orders/${(await orderOf(owner)).id}`,
  }),
  "PUT /api/store/orders/{id}/status": async (owner) => ({
    path: `/api/store/orders/${(await orderOf(owner)).id}/status`,
    body: { status: "cancelled", reason: "changed my mind" },
  }),
  "POST /api/store/checkouts/{id}/payment": async (owner) => ({
    path: `/api/store/checkouts/${(await orderOf(owner)).checkoutId}/payment`,
  }),
};

/** Resources of the vendor's products belong to the vendor's owner, whoever asks for them. */
const OWNED_BY_VENDOR = new Set([
  "GET /api/store/products/{id}",
  "PUT /api/store/products/{id}",
  "GET /api/store/images/{id}",
]);

async function notificationOf(owner: SignedIn) {
  return await expectJson(
    await t.request("POST", "/api/notifications", {
      token: owner.accessToken,
      body: { type: "SYSTEM", title: "Matrix", body: "A notification of one's own" },
    }),
    201,
  );
}

async function orderOf(owner: SignedIn) {
  const item = await product(t, vendor);
  const { checkout: made } = await checkout(t, owner, [{ productId: item.id, quantity: 1 }]);
  return made.orders[0];
}

/** The authorization's verdict on an answer: the refusals it gives, or through. */
function verdict(status: number): Outcome | "401" | "400" {
  if (status === 401) return "401";
  if (status === 400) return "400";
  if (status === 403 || status === 404) return status;
  return "allowed";
}

test("[matrix] every resource by id: its owner is let through; a stranger and an ADMIN stranger get what docs/authorization.md says", async () => {
  const wrong: string[] = [];
  for (const [key, row] of resourceTable) {
    const make = FIXTURES[key];
    if (!make) {
      wrong.push(`${key}: no fixture in this test for "${row.owner}"`);
      continue;
    }
    const [method] = key.split(" ");
    const owner = OWNED_BY_VENDOR.has(key) ? vendor.owner : await signInAs(t, "SUBSCRIBER");
    const fixture = await make(owner);
    const stranger = await signInAs(t, "SUBSCRIBER");
    // Strangers first: what they are refused must still be there for the owner.
    for (
      const [who, token, want] of [
        ["a stranger", stranger.accessToken, row.stranger],
        ["an ADMIN stranger", admin().accessToken, row.adminStranger],
        ["the owner", owner.accessToken, "allowed"],
      ] as const
    ) {
      const response = await t.request(method, fixture.path, { token, body: fixture.body });
      const got = verdict(response.status);
      if (got !== want) {
        wrong.push(
          `${key} as ${who}: ${response.status} ${(await response.text()).slice(0, 160)}, ` +
            `expected ${want}`,
        );
      }
    }
  }
  assert.deepEqual(wrong, []);
});
