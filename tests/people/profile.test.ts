/**
 * Profiles: GET and PUT /api/profile, GET /api/users/{id} and the uploaded picture at
 * GET /api/users/{id}/image. The profile is the one source of a person's name and picture: the
 * directory, conversation participants, the session, notifications and the public profile show a
 * change from the next read. A new account's name is not its e-mail's local part.
 */
import assert from "node:assert/strict";
import {
  expectError,
  expectJson,
  type SignedIn,
  signIn,
  signInAs,
  test,
  testApp,
  uniqueEmail,
} from "../support/helpers.ts";

const t = testApp();

/** A tiny PNG's bytes (a valid 1x1 image: what the browser journey uploads too). */
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (ch) => ch.charCodeAt(0),
);

async function upload(who: SignedIn, bytes: Uint8Array<ArrayBuffer>, name: string, type: string) {
  const form = new FormData();
  form.append("file", new File([bytes], name, { type }));
  return await expectJson(
    await t.request("POST", "/api/attachments", { token: who.accessToken, rawBody: form }),
    201,
  );
}

const put = (who: SignedIn, body: unknown) =>
  t.request("PUT", "/api/profile", { token: who.accessToken, body });

test("[profile] a new account's name is not its e-mail's local part", async () => {
  const email = uniqueEmail("grace.hopper");
  const session = await signIn(t, email);
  assert.match(session.user.name, /^Member \d{4}$/);
  assert.ok(!session.user.name.includes("grace"), session.user.name);
  const profile = await expectJson(
    await t.request("GET", "/api/profile", { token: session.accessToken }),
    200,
  );
  assert.deepEqual(profile, {
    id: session.user.id,
    name: session.user.name,
    image: null,
    bio: null,
    timeZone: null,
    locale: null,
  });
});

test("[profile] GET and PUT /api/profile: anonymous 401; fields checked, stored trimmed and canonical", async () => {
  await expectError(await t.request("GET", "/api/profile"), 401, "unauthenticated");
  await expectError(
    await t.request("PUT", "/api/profile", { body: { name: "x" } }),
    401,
    "unauthenticated",
  );
  const me = await signInAs(t, "VISITOR");
  const changed = await expectJson(
    await put(me, {
      name: "  Ada Lovelace  ",
      bio: "Poetical science",
      timeZone: "europe/berlin",
      locale: "de-ch",
    }),
    200,
  );
  assert.deepEqual(changed, {
    id: me.user.id,
    name: "Ada Lovelace",
    image: null,
    bio: "Poetical science",
    timeZone: "Europe/Berlin",
    locale: "de-CH",
  });
  assert.deepEqual(
    await expectJson(await t.request("GET", "/api/profile", { token: me.accessToken }), 200),
    changed,
    "a field left out stays as it was; GET shows what PUT stored",
  );
  const refused: [unknown, string][] = [
    [{ name: "   " }, "name"],
    [{ name: "n".repeat(65) }, "name"],
    [{ name: "Ada\u0007" }, "name"],
    [{ name: null }, "name"],
    [{ bio: "b".repeat(501) }, "bio"],
    [{ timeZone: "Mars/Olympus_Mons" }, "timeZone"],
    [{ timeZone: "+02:00" }, "timeZone"],
    [{ locale: "not a tag!" }, "locale"],
    [{ imageId: "not-a-uuid" }, "imageId"],
    [{ nickname: "Ada" }, ""],
  ];
  for (const [body, path] of refused) {
    const error = await expectError(await put(me, body), 400, "invalid_request");
    if (path) {
      assert.ok(
        JSON.stringify(error.error.details).includes(path),
        `${JSON.stringify(body)}: ${JSON.stringify(error)}`,
      );
    }
  }
  // 64 characters (one of them outside the BMP) is the most a name holds.
  const longest = "😀" + "n".repeat(63);
  assert.equal((await expectJson(await put(me, { name: longest }), 200)).name, longest);
  const cleared = await expectJson(
    await put(me, { bio: null, timeZone: null, locale: null }),
    200,
  );
  assert.deepEqual([cleared.bio, cleared.timeZone, cleared.locale], [null, null, null]);
});

test("[profile] the picture: an image upload of the caller's own (another's 404, not an image 415), served to SUBSCRIBER+, null removes it", async () => {
  const ann = await signInAs(t, "SUBSCRIBER");
  const bob = await signInAs(t, "MEMBER");
  const visitor = await signInAs(t, "VISITOR");
  const png = await upload(ann, PNG, "me.png", "image/png");
  const text = await upload(ann, new TextEncoder().encode("hi"), "me.txt", "text/plain");
  const bobs = await upload(bob, PNG, "bob.png", "image/png");

  await expectError(await put(ann, { imageId: bobs.id }), 404, "not_found");
  await expectError(await put(ann, { imageId: crypto.randomUUID() }), 404, "not_found");
  await expectError(await put(ann, { imageId: text.id }), 415, "unsupported_media_type");

  const withPicture = await expectJson(await put(ann, { imageId: png.id }), 200);
  assert.equal(withPicture.image, `/api/users/${ann.user.id}/image?v=${png.id}`);

  const served = await t.request("GET", withPicture.image, { token: bob.accessToken });
  assert.equal(served.status, 200);
  assert.equal(served.headers.get("content-type"), "image/png");
  assert.equal(served.headers.get("x-content-type-options"), "nosniff");
  assert.deepEqual(new Uint8Array(await served.arrayBuffer()), PNG);
  // The attachment route still serves the file to its uploader only.
  await expectError(
    await t.request("GET", `/api/attachments/${png.id}`, { token: bob.accessToken }),
    404,
  );
  await expectError(await t.request("GET", withPicture.image), 401);
  await expectError(await t.request("GET", withPicture.image, { token: visitor.accessToken }), 403);
  await expectError(
    await t.request("GET", `/api/users/${bob.user.id}/image`, { token: ann.accessToken }),
    404,
    "not_found",
  );

  const removed = await expectJson(await put(ann, { imageId: null }), 200);
  assert.equal(removed.image, null);
  await expectError(
    await t.request("GET", withPicture.image, { token: bob.accessToken }),
    404,
    "not_found",
  );
});

test("[profile] GET /api/users/{id}: SUBSCRIBER and up, public fields only; suspended or unknown 404", async () => {
  const ann = await signInAs(t, "SUBSCRIBER");
  await expectJson(await put(ann, { name: "Ann Public", bio: "Hello", timeZone: "UTC" }), 200);
  const visitor = await signInAs(t, "VISITOR");
  const member = await signInAs(t, "MEMBER");
  await expectError(await t.request("GET", `/api/users/${ann.user.id}`), 401);
  await expectError(
    await t.request("GET", `/api/users/${ann.user.id}`, { token: visitor.accessToken }),
    403,
  );
  const response = await t.request("GET", `/api/users/${ann.user.id}`, {
    token: member.accessToken,
  });
  const text = await response.clone().text();
  assert.deepEqual(await expectJson(response, 200), {
    id: ann.user.id,
    name: "Ann Public",
    image: null,
    bio: "Hello",
    role: "SUBSCRIBER",
  });
  assert.doesNotMatch(text, /@|UTC/, "no e-mail, no time zone");
  await expectError(
    await t.request("GET", `/api/users/${crypto.randomUUID()}`, { token: member.accessToken }),
    404,
    "not_found",
  );
  await expectError(
    await t.request("GET", "/api/users/not-a-uuid", { token: member.accessToken }),
    400,
  );
  await t.deps.sql`update app.users set status = 'suspended' where id = ${ann.user.id}`;
  await expectError(
    await t.request("GET", `/api/users/${ann.user.id}`, { token: member.accessToken }),
    404,
    "not_found",
  );
});

test("[profile] a new name and picture show from the next read everywhere, and profile.updated goes to user:<id>", async () => {
  const ann = await signInAs(t, "SUBSCRIBER");
  const bob = await signInAs(t, "SUBSCRIBER");
  const direct = await expectJson(
    await t.request("POST", "/api/conversations", {
      token: ann.accessToken,
      body: { type: "direct", participantIds: [bob.user.id] },
    }),
    201,
  );
  const name = `Annika ${crypto.randomUUID().slice(0, 6)}`;
  const png = await upload(ann, PNG, "me.png", "image/png");
  const profile = await expectJson(await put(ann, { name, imageId: png.id }), 200);

  const session = await expectJson(
    await t.request("GET", "/api/auth/session", { token: ann.accessToken }),
    200,
  );
  assert.deepEqual([session.user.name, session.user.image], [name, profile.image]);

  const directory = await expectJson(
    await t.request("GET", `/api/users?search=${encodeURIComponent(name)}`, {
      token: bob.accessToken,
    }),
    200,
  );
  assert.deepEqual(directory.items, [{
    id: ann.user.id,
    name,
    image: profile.image,
    role: "SUBSCRIBER",
  }]);

  const conversations = await expectJson(
    await t.request("GET", "/api/conversations", { token: bob.accessToken }),
    200,
  );
  const seen = conversations.items.find((c: { id: string }) => c.id === direct.id);
  const annThere = seen.participants.find((p: { userId: string }) => p.userId === ann.user.id);
  assert.deepEqual([annThere.name, annThere.image], [name, profile.image]);

  // A notification made after the change (being added to a group) names her by profile.
  // (Notifications are text written when they are made: one made before keeps the old name.)
  await expectJson(
    await t.request("POST", "/api/conversations", {
      token: ann.accessToken,
      body: { type: "group", title: "Profiles", participantIds: [bob.user.id] },
    }),
    201,
  );
  const inbox = await expectJson(
    await t.request("GET", "/api/notifications?type=MESSAGE", { token: bob.accessToken }),
    200,
  );
  assert.equal(inbox.items[0]?.body, `${name} added you to Profiles`);

  const events = await t.deps.sql<{ payload: Record<string, unknown> }[]>`
    select payload from app.events
    where topic = ${`user:${ann.user.id}`} and event = 'profile.updated'
    order by id`;
  assert.deepEqual(events.at(-1)?.payload, {
    id: ann.user.id,
    name,
    image: profile.image,
    bio: null,
    role: "SUBSCRIBER",
  });
});
