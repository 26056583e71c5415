/**
 * GET /api/users, the people directory: SUBSCRIBER and above find other active users by name and
 * see their id, name, image and role, never an e-mail; anonymous callers get 401, VISITORs 403.
 */
import assert from "node:assert/strict";
import { createUser, expectError, signIn, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
const tag = `Wombat${crypto.randomUUID().slice(0, 6)}`;

/** A user named `<tag> <name>`, signed in. */
async function person(name: string, role: Parameters<typeof createUser>[1] = "SUBSCRIBER") {
  const user = await createUser(t.deps, role);
  await t.deps.sql`update app.users set name = ${`${tag} ${name}`} where id = ${user.id}`;
  return await signIn(t, user.email);
}

const caller = await person("Caller");
const others = [
  await person("alice", "MEMBER"),
  await person("Bruno", "SUBSCRIBER"),
  await person("carla", "CONFIDENTIAL"),
  await person("Dmitri", "ADMIN"),
  await person("eve", "VISITOR"),
];
const suspended = await person("Frank");
await t.deps.sql`update app.users set status = 'suspended' where id = ${suspended.user.id}`;

test("[people] GET /api/users: anonymous is 401, a VISITOR 403", async () => {
  await expectError(await t.request("GET", `/api/users?search=${tag}`), 401, "unauthenticated");
  const visitor = await signInAs(t, "VISITOR");
  await expectError(
    await t.request("GET", `/api/users?search=${tag}`, { token: visitor.accessToken }),
    403,
    "forbidden",
  );
});

test("[people] GET /api/users finds other active users by name, without regard to case; public fields only", async () => {
  const response = await t.request("GET", `/api/users?search=${tag.toUpperCase()}`, {
    token: caller.accessToken,
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const text = await response.text();
  const body = JSON.parse(text);
  assert.deepEqual(
    body.items.map((p: { name: string }) => p.name),
    ["alice", "Bruno", "carla", "Dmitri", "eve"].map((n) => `${tag} ${n}`),
    "A to Z without regard to case; not the caller, not the suspended user",
  );
  assert.equal(body.nextCursor, null);
  for (const item of body.items) {
    assert.deepEqual(Object.keys(item).sort(), ["id", "image", "name", "role"]);
  }
  assert.deepEqual(
    body.items.map((p: { id: string; role: string }) => [p.id, p.role]),
    others.map((o) => [o.user.id, o.user.role]),
  );
  assert.doesNotMatch(text, /@/, "no e-mail address anywhere in the answer");
  const bySubstring = await (await t.request(
    "GET",
    `/api/users?search=${encodeURIComponent(`${tag.slice(3)} BRU`)}`,
    { token: caller.accessToken },
  )).json();
  assert.deepEqual(bySubstring.items.map((p: { id: string }) => p.id), [others[1].user.id]);
  const noEmail = await (await t.request(
    "GET",
    `/api/users?search=${encodeURIComponent(others[0].user.email.split("@")[0])}`,
    { token: caller.accessToken },
  )).json();
  assert.deepEqual(noEmail.items, [], "the search never looks at e-mail addresses");
});

test("[people] GET /api/users pages reach every person once, in order", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `search=${tag}&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await t.request("GET", `/api/users?${query}`, {
      token: others[3].accessToken,
    });
    assert.equal(response.status, 200);
    const body: { items: { id: string }[]; nextCursor: string | null } = await response.json();
    assert.ok(body.items.length <= 2);
    seen.push(...body.items.map((p) => p.id));
    cursor = body.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  const expected = [others[0], others[1], caller, others[2], others[4]].map((p) => p.user.id);
  assert.deepEqual(seen, expected, "an ADMIN pages through everyone but themselves, once each");
  assert.equal(pages, 3);
});

test("[people] GET /api/users refuses a bad limit or cursor with 400", async () => {
  for (const query of ["limit=0", "limit=201", "limit=x", "cursor=nope", "cursor=WyJhIiwiYiJd"]) {
    await expectError(
      await t.request("GET", `/api/users?${query}`, { token: caller.accessToken }),
      400,
      "invalid_request",
    );
  }
});

test("[people] GET /api/users pages past names in any script: a page may end on 李娜 or 🦊 Fox", async () => {
  const scriptTag = `Quokka${crypto.randomUUID().slice(0, 6)}`;
  const names = ["Ärger", "李娜", "Zoë", "🦊 Fox"];
  const ids: string[] = [];
  for (const name of names) {
    const user = await createUser(t.deps, "SUBSCRIBER");
    await t.deps.sql`update app.users set name = ${`${scriptTag} ${name}`} where id = ${user.id}`;
    ids.push(user.id);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `search=${scriptTag}&limit=1${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await t.request("GET", `/api/users?${query}`, { token: caller.accessToken });
    assert.equal(response.status, 200, `page ${pages + 1}`);
    const body: { items: { id: string }[]; nextCursor: string | null } = await response.json();
    seen.push(...body.items.map((p) => p.id));
    cursor = body.nextCursor;
    pages++;
  } while (cursor && pages < 10);
  assert.deepEqual(seen.toSorted(), ids.toSorted(), "each person once, whatever the script");
  assert.equal(pages, 4);
});
