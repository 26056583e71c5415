/**
 * The chat in Chromium, two (or three) browser contexts against a real stack server: delivery
 * within a second, typing, read marks, presence, unread counts, replies, edits, tombstones,
 * attachments with progress and previews, history on scrolling up, and the transport's fallback
 * to SSE and long-polling when the WebSocket (and then SSE) is blocked.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { test } from "../support/helpers.ts";
import {
  apiCall,
  bearer,
  createPerson,
  lateFrames,
  liveOver,
  openContext,
  type Person,
  pngSquare,
  screenshot,
  type Session,
  signInThroughPages,
  slowLink,
  startWebStack,
} from "./browser.ts";

const stack = await startWebStack();

interface Conversation {
  id: string;
}

async function group(owner: Person, others: Person[], title: string): Promise<string> {
  const token = await bearer(stack, owner);
  const c = await apiCall<Conversation>(stack, token, "POST", "/api/conversations", {
    type: "group",
    participantIds: others.map((o) => o.id),
    title,
  });
  return c.id;
}

async function openConversation(session: Session, id: string): Promise<void> {
  await session.page.goto(`${stack.base}/chat/${id}`);
  await session.page.locator(`.conversation-view[data-conversation-id="${id}"]`).waitFor();
  await session.page.getByRole("textbox", { name: "Message" }).waitFor();
}

/** Starts recording, in the page, when a message with this text first appears. */
async function watchFor(session: Session, text: string): Promise<void> {
  await session.page.evaluate((wanted) => {
    const seen = (globalThis as unknown as { __seen: Record<string, number> }).__seen ??= {};
    const check = () => {
      for (const el of document.querySelectorAll(".msg .content")) {
        if (el.textContent === wanted && !seen[wanted]) seen[wanted] = Date.now();
      }
    };
    new MutationObserver(check).observe(document.body, { childList: true, subtree: true });
    check();
  }, text);
}

async function seenAt(session: Session, text: string): Promise<number> {
  await session.page.locator(".msg .content", { hasText: text }).first().waitFor();
  return await session.page.evaluate(
    (wanted) => (globalThis as unknown as { __seen: Record<string, number> }).__seen[wanted],
    text,
  );
}

/** Types and sends; the page's own clock at the moment Enter is pressed. */
/** Run in the page: the moment a conversation's composer appears, the focus goes into it. */
function focusComposerOnArrival() {
  const watch = new MutationObserver(() => {
    const box = document.querySelector<HTMLTextAreaElement>(
      ".conversation-view .composer textarea",
    );
    if (!box) return;
    box.focus();
    watch.disconnect();
  });
  watch.observe(document.body, { childList: true, subtree: true });
}

async function send(session: Session, text: string): Promise<number> {
  const box = session.page.getByRole("textbox", { name: "Message" });
  await box.fill(text);
  const at = await session.page.evaluate(() => Date.now());
  await box.press("Enter");
  return at;
}

test("[web] presence is app-wide: B in the store shows online in A's conversation, offline once B's tab closes", async () => {
  const alice = await createPerson(stack, "Ama Presence");
  const bob = await createPerson(stack, "Ben Elsewhere");
  const carol = await createPerson(stack, "Cleo Stranger");
  const conv = await group(alice, [bob], "Who is around");
  const a = await openContext(stack);
  const b = await openContext(stack);
  const c = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await openConversation(a, conv);
    await liveOver(a.page, "websocket");
    const presence = a.page.getByTestId("presence");
    await presence.getByText("nobody else online").waitFor();

    // Bob signs in and stays in the store: he is online in Alice's conversation all the same.
    await signInThroughPages(stack, b, bob, "/store");
    await b.page.getByTestId("header-cart").waitFor();
    assert.equal(new URL(b.page.url()).pathname, "/store");
    await presence.getByText("Ben Elsewhere online").waitFor({ timeout: 10_000 });
    const avatar = a.page.getByRole("list", { name: "Participants" }).getByRole("link", {
      name: "Ben Elsewhere, online",
    });
    await avatar.waitFor();

    // Someone who shares no conversation with Alice being online changes nothing for her, and
    // is not allowed to watch Alice's presence (app.can_see_presence: pgTAP 109).
    await signInThroughPages(stack, c, carol, "/store");
    await liveOver(c.page, "websocket");
    assert.equal(await presence.textContent(), "Ben Elsewhere online");

    // Bob moves to another page of the app: still online.
    await b.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Chat" })
      .click();
    await b.page.waitForURL(/\/chat/);
    await a.page.waitForTimeout(500);
    assert.equal(await presence.textContent(), "Ben Elsewhere online");

    // Bob closes the tab: offline in Alice's view within the presence timeout (the socket's close
    // ends his presence at once; a lost connection would after the idle timeout).
    const closedAt = Date.now();
    await b.page.close();
    await presence.getByText("nobody else online").waitFor({ timeout: 10_000 });
    const took = Date.now() - closedAt;
    assert.ok(took < 10_000, `offline after ${took} ms`);
  } finally {
    await a.context.close();
    await b.context.close();
    await c.context.close();
  }
});

test("[web] presence in a large group: a participant past the first 50 shows online once scrolled to, with at most 50 channels watched", async () => {
  const alice = await createPerson(stack, "Ada Hall");
  const others: Person[] = [];
  for (let i = 1; i <= 59; i++) others.push(await createPerson(stack, `Hall Member ${i}`));
  const conv = await group(alice, others, "The large hall");
  // The one a watch of "the first 50" (by id, as the page once did) never followed.
  const far = [...others].sort((x, y) => x.id < y.id ? -1 : 1)[58];
  const a = await openContext(stack);
  const f = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await openConversation(a, conv);
    await liveOver(a.page, "websocket");
    const strip = a.page.getByRole("list", { name: "Participants" });
    await strip.getByRole("listitem").nth(59).waitFor({ state: "attached" });
    const presence = a.page.getByTestId("presence");

    await signInThroughPages(stack, f, far, "/store");
    await f.page.getByTestId("header-cart").waitFor();
    // Scrolled to in the strip, the person's avatar and the summary line say they are online.
    await strip.getByRole("link", { name: new RegExp(`^${far.name}(, online)?$`) })
      .scrollIntoViewIfNeeded();
    await strip.getByRole("link", { name: `${far.name}, online` }).waitFor({ timeout: 10_000 });
    // The summary line speaks of those shown only: in a large group nobody else is watched.
    await presence.getByText(`${far.name} online among those shown`).waitFor();
    // Never a channel per participant: those in view (and a few beside), at most 50.
    const watched = Number(await strip.getAttribute("data-presence-watched"));
    assert.ok(watched > 0 && watched <= 50, `${watched} presence channels watched`);

    // Scrolled to the other end, far out of view: no longer watched, so no longer claimed.
    await strip.evaluate((el: HTMLElement, id) => {
      const item = el.querySelector<HTMLElement>(`[data-user-id="${id}"]`)!;
      el.scrollLeft = item.offsetLeft - el.offsetLeft < el.scrollWidth / 2 ? el.scrollWidth : 0;
    }, far.id);
    await presence.getByText("nobody online among those shown").waitFor({ timeout: 10_000 });
  } finally {
    await a.context.close();
    await f.context.close();
  }
});

test("[web] two browsers chat: delivery within 1 s, typing, read marks, presence, live unread counts", async () => {
  const alice = await createPerson(stack, "Alice Martin");
  const bob = await createPerson(stack, "Bob Okafor");
  const conv = await group(alice, [bob], "Launch planning");
  const side = await group(bob, [alice], "Side project");
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await signInThroughPages(stack, b, bob);
    await openConversation(a, conv);
    await openConversation(b, conv);
    await liveOver(a.page, "websocket");
    await liveOver(b.page, "websocket");

    // Presence on the conversation's channel: each sees the other.
    await a.page.getByTestId("presence").getByText("Bob Okafor online").waitFor();
    await b.page.getByTestId("presence").getByText("Alice Martin online").waitFor();

    // Typing shows in the other browser.
    await a.page.getByRole("textbox", { name: "Message" }).pressSequentially("Hel");
    await b.page.getByTestId("typing").getByText("Alice Martin is typing…").waitFor();

    // A message sent in one appears in the other within a second (measured in the pages).
    for (const text of ["Hello Bob, the deck is ready.", "Shall we go through it at ten?"]) {
      await watchFor(b, text);
      const sentAt = await send(a, text);
      const arrived = await seenAt(b, text);
      assert.ok(arrived - sentAt < 1_000, `delivered in ${arrived - sentAt} ms`);
    }
    // Typing stops with the send.
    await b.page.getByTestId("typing").getByText("is typing").waitFor({ state: "detached" })
      .catch(async () =>
        await b.page.locator('[data-testid="typing"]:empty').waitFor({ state: "attached" })
      );

    // Read marks: Bob's page saw them, so Alice's shows "Seen by Bob" under her last message.
    const last = a.page.locator(".msg", { hasText: "Shall we go through it at ten?" });
    await last.getByTestId("seen-by").getByText("Seen by Bob Okafor").waitFor();

    // Bob answers; it reaches Alice as fast.
    await watchFor(a, "Yes, ten works.");
    const sentAt = await send(b, "Yes, ten works.");
    assert.ok((await seenAt(a, "Yes, ten works.")) - sentAt < 1_000);

    // The side conversation's unread count goes up live in Alice's list (WebSocket side feed).
    const token = await bearer(stack, bob);
    await apiCall(stack, token, "POST", `/api/conversations/${side}/messages`, {
      content: "Unrelated: lunch?",
    });
    await a.page.locator(`[data-conversation-id="${side}"] [data-testid="unread-count"]`)
      .getByText("1").waitFor();
    await screenshot(a.page, "chat-desktop");

    // No session material in script storage; only the CSRF cookie is readable by script.
    const storage = await a.page.evaluate(async () => ({
      local: localStorage.length,
      session: sessionStorage.length,
      idb: (await indexedDB.databases()).length,
      cookie: document.cookie,
    }));
    assert.deepEqual(
      { local: storage.local, session: storage.session, idb: storage.idb },
      { local: 0, session: 0, idb: 0 },
    );
    assert.deepEqual(storage.cookie.split("; ").map((c) => c.split("=")[0]), ["agora-csrf"]);
    const cookies = await a.context.cookies();
    for (const name of ["agora-access-token", "agora-refresh-token"]) {
      assert.equal(cookies.find((c) => c.name === name)?.httpOnly, true, `${name} is httpOnly`);
    }
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test("[web] a message in another conversation while the page is still starting its feeds is not lost from the list", async () => {
  const alice = await createPerson(stack, "Ava Early");
  const bob = await createPerson(stack, "Ben Early");
  const conv = await group(alice, [bob], "Early open");
  const side = await group(bob, [alice], "Early side");
  const bobToken = await bearer(stack, bob);
  const a = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await openConversation(a, conv);
    // The list has been read; the other conversation's feed starts a moment later. A message
    // now falls between the two.
    await a.page.locator(`[data-conversation-id="${side}"]`).waitFor();
    await apiCall(stack, bobToken, "POST", `/api/conversations/${side}/messages`, {
      content: "Sent while the page was starting",
    });
    await a.page.locator(`[data-conversation-id="${side}"] [data-testid="unread-count"]`)
      .getByText("1").waitFor({ timeout: 5_000 });
    assert.deepEqual(a.errors, []);
  } finally {
    await a.context.close();
  }
});

test("[web] a message in the open conversation updates its list item (preview, first place) without reading the list again", async () => {
  const alice = await createPerson(stack, "Ada Preview");
  const bob = await createPerson(stack, "Bo Preview");
  const open = await group(alice, [bob], "Preview open");
  const other = await group(alice, [bob], "Preview other");
  const bobToken = await bearer(stack, bob);
  const a = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await openConversation(a, open);
    // The newer conversation is first until the open one gets a message.
    await apiCall(stack, bobToken, "POST", `/api/conversations/${other}/messages`, {
      content: "In the other one",
    });
    const items = a.page.locator(".chat-list [data-conversation-id]");
    await a.page.locator(`[data-conversation-id="${other}"] .conversation-preview`)
      .getByText("In the other one").waitFor({ timeout: 5_000 });
    // The page's start-up reads (its feeds coming up, each reads the list once) are over once
    // the list has been quiet for a second; only then are reads counted.
    const lists: string[] = [];
    a.page.on("request", (r) => {
      if (new URL(r.url()).pathname === "/api/conversations" && r.method() === "GET") {
        lists.push(r.url());
      }
    });
    for (let seen = -1, waited = 0; seen !== lists.length; waited += 1_000) {
      assert.ok(waited < 15_000, `the list kept being read: ${lists.length} reads`);
      seen = lists.length;
      await a.page.waitForTimeout(1_000);
    }
    lists.length = 0;
    await apiCall(stack, bobToken, "POST", `/api/conversations/${open}/messages`, {
      content: "Fresh in the open one",
    });
    await a.page.locator(".msg .content", { hasText: "Fresh in the open one" }).waitFor();
    await a.page.locator(`[data-conversation-id="${open}"] .conversation-preview`)
      .getByText("Fresh in the open one").waitFor({ timeout: 2_000 });
    assert.equal(await items.first().getAttribute("data-conversation-id"), open, "first now");
    await a.page.waitForTimeout(600); // longer than the list's debounce (250 ms)
    assert.deepEqual(lists, [], "the list was not read again");
    assert.deepEqual(a.errors, []);
  } finally {
    await a.context.close();
  }
});

test("[web] replies, edits, tombstones and an image with upload progress and preview reach the other browser", async () => {
  const alice = await createPerson(stack, "Alice Nguyen");
  const bob = await createPerson(stack, "Bob Silva");
  const conv = await group(alice, [bob], "Design review");
  const a = await openContext(stack);
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, a, alice);
    await signInThroughPages(stack, b, bob);
    await openConversation(a, conv);
    await openConversation(b, conv);
    await liveOver(b.page, "websocket");

    // An image: progress while it uploads, a preview from the local file, then in both pages.
    // Alice's link is slow (400 ms each way): the bar is full once the bytes are out, before the
    // server has the file; her Enter then says it sends once the file is in, and does.
    await slowLink(a.page, 400);
    await a.page.locator('input[type="file"]').setInputFiles({
      name: "mockup.png",
      mimeType: "image/png",
      buffer: Buffer.from(pngSquare(64, [229, 83, 0])),
    });
    await a.page.locator(".upload-preview").waitFor();
    await a.page.getByTestId("upload-progress").waitFor();
    await a.page.waitForFunction(() => {
      const p = document.querySelector<HTMLProgressElement>('[data-testid="upload-progress"]');
      return p?.value === 1;
    });
    await send(a, "The new mockup");
    await a.page.getByRole("status").filter({ hasText: "Sends when the upload finishes" })
      .waitFor();
    const image = b.page.locator('.msg img[alt="mockup.png"]');
    await image.waitFor();
    await b.page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('.msg img[alt="mockup.png"]');
      return img?.complete && img.naturalWidth === 64;
    });

    // Bob replies to it; Alice sees the quote.
    await b.page.locator(".msg", { hasText: "The new mockup" }).getByRole("button", {
      name: "Reply to Alice Nguyen",
    }).click();
    await b.page.getByText("Replying to").waitFor();
    await send(b, "Love the colour");
    const reply = a.page.locator(".msg", { hasText: "Love the colour" });
    await reply.locator(".reply-quote", { hasText: "The new mockup" }).waitFor();

    // Alice edits her message; Bob sees the new text, marked edited.
    await send(a, "Typo in the titel");
    const mine = a.page.locator(".msg.mine", { hasText: "Typo in the titel" });
    await mine.getByRole("button", { name: "Edit your message" }).click();
    const editor = a.page.getByLabel("Edit the message");
    await editor.fill("Typo in the title, fixed");
    await a.page.getByRole("button", { name: "Save" }).click();
    await b.page.locator(".msg", { hasText: "Typo in the title, fixed" }).locator(".edited")
      .waitFor();

    // Alice deletes it; Bob sees a tombstone in its place.
    await a.page.locator(".msg.mine", { hasText: "Typo in the title, fixed" })
      .getByRole("button", { name: "Delete your message" }).click();
    await a.page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await b.page.locator(".msg.deleted .tombstone").waitFor();
    assert.equal(await b.page.locator(".msg", { hasText: "Typo in the title, fixed" }).count(), 0);
    // The conversation list follows too: its preview is the tombstone now.
    await b.page.locator(`[data-conversation-id="${conv}"] .conversation-preview`)
      .getByText("(deleted)").waitFor();
    await screenshot(b.page, "chat-reply-edit-delete");

    // Edit is offered only within the edit window: a message sent long ago has none, and one
    // whose window closes while the page is open loses it then.
    // Still on her slow link, Alice sends two at once: the second, typed and sent while the
    // first is on its way, says it follows it, is not wiped by the first's answer, and arrives
    // after it.
    await send(a, "Sent long ago");
    await send(a, "Nearly too late");
    await a.page.getByRole("status").filter({ hasText: "Sends after the message before it" })
      .waitFor();
    await b.page.locator(".msg", { hasText: "Nearly too late" }).waitFor();
    assert.deepEqual(
      await b.page.locator(".msg .content").evaluateAll((els) =>
        els.map((e) => e.textContent).filter((t) =>
          t === "Sent long ago" || t === "Nearly too late"
        )
      ),
      ["Sent long ago", "Nearly too late"],
    );
    await a.page.waitForFunction(() =>
      document.querySelector<HTMLTextAreaElement>(".composer textarea")?.value === ""
    );
    await slowLink(a.page, 0);
    await stack.deps.sql`
      update app.messages set created_at = now() - make_interval(
        mins => app.config_int('limits', 'messageEditWindowMinutes') + 1)
      where conversation_id = ${conv} and content = 'Sent long ago'`;
    await stack.deps.sql`
      update app.messages set created_at = now() - make_interval(
        mins => app.config_int('limits', 'messageEditWindowMinutes'), secs => -15)
      where conversation_id = ${conv} and content = 'Nearly too late'`;
    await a.page.reload();
    const late = a.page.locator(".msg.mine", { hasText: "Nearly too late" });
    await late.getByRole("button", { name: "Edit your message" }).waitFor();
    const long = a.page.locator(".msg.mine", { hasText: "Sent long ago" });
    await long.getByRole("button", { name: "Reply to Alice Nguyen" }).waitFor();
    assert.equal(await long.getByRole("button", { name: "Edit your message" }).count(), 0);
    await late.getByRole("button", { name: "Edit your message" }).waitFor({
      state: "detached",
      timeout: 30_000,
    });
    await late.getByRole("button", { name: "Reply to Alice Nguyen" }).waitFor();
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await a.context.close();
    await b.context.close();
  }
});

test("[web] scrolling up loads older messages (infinite scroll) without losing the place", async () => {
  const alice = await createPerson(stack, "Alice Keller");
  const bob = await createPerson(stack, "Bob Haddad");
  const conv = await group(alice, [bob], "History");
  const token = await bearer(stack, alice);
  for (let i = 1; i <= 75; i++) {
    await apiCall(stack, token, "POST", `/api/conversations/${conv}/messages`, {
      content: `Message number ${i}`,
    });
  }
  const b = await openContext(stack);
  try {
    await signInThroughPages(stack, b, bob);
    await openConversation(b, conv);
    await b.page.locator(".msg", { hasText: "Message number 75" }).waitFor();
    assert.equal(await b.page.locator(".msg").count(), 30, "the newest page first");
    // Scroll to the top until every older page has arrived, up to the start (as a reader keeps
    // scrolling up: a scroll that comes while a page is still loading is not a second request).
    for (const expected of [60, 75]) {
      await b.page.waitForFunction(
        (n) => {
          const list = document.querySelector(".messages");
          if (list) list.scrollTop = 0;
          return document.querySelectorAll(".msg").length >= n;
        },
        expected,
        { polling: 200 },
      );
    }
    await b.page.getByText("This is the start of the conversation.").waitFor();
    const seqs = await b.page.locator(".msg").evaluateAll((els) =>
      els.map((el) => Number((el as HTMLElement).dataset.seq))
    );
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), "in order");
    assert.equal(new Set(seqs).size, 75, "each once");
    assert.deepEqual(b.errors, []);
  } finally {
    await b.context.close();
  }
});

test("[web] with the WebSocket blocked messages arrive over SSE, with SSE blocked too over long-polling", async () => {
  const alice = await createPerson(stack, "Alice Dubois");
  const bob = await createPerson(stack, "Bob Tanaka");
  const carol = await createPerson(stack, "Carol Reyes");
  const conv = await group(alice, [bob, carol], "Fallbacks");
  const a = await openContext(stack);
  const b = await openContext(stack); // no WebSocket
  const c = await openContext(stack); // no WebSocket, no SSE
  try {
    for (const session of [b, c]) {
      await session.context.routeWebSocket(/\/realtime\/v1\/websocket/, (ws) => ws.close());
    }
    await c.context.route(/\/api\/realtime\/sse/, (route) => route.abort());
    await signInThroughPages(stack, a, alice);
    await signInThroughPages(stack, b, bob);
    await signInThroughPages(stack, c, carol);
    await openConversation(a, conv);
    await openConversation(b, conv);
    await openConversation(c, conv);
    await liveOver(a.page, "websocket");
    await liveOver(b.page, "sse");
    await liveOver(c.page, "poll");
    await screenshot(c.page, "chat-fallback-poll");

    for (const text of ["Over every transport", "And once more"]) {
      await watchFor(b, text);
      await watchFor(c, text);
      const sentAt = await send(a, text);
      for (const session of [b, c]) {
        const arrived = await seenAt(session, text);
        assert.ok(arrived - sentAt < 2_000, `delivered in ${arrived - sentAt} ms`);
      }
    }
    // The other way: from the long-polling page to the others.
    await watchFor(a, "From the polling side");
    await send(c, "From the polling side");
    await seenAt(a, "From the polling side");
    await b.page.locator(".msg .content", { hasText: "From the polling side" }).waitFor();
    // Each message once.
    for (const session of [a, b, c]) {
      assert.equal(
        await session.page.locator(".msg .content", { hasText: "Over every transport" }).count(),
        1,
      );
    }
    // Presence needs the socket: the blocked pages say so instead of guessing.
    await b.page.getByTestId("presence").getByText("presence unavailable").waitFor();
    const errors = [...a.errors, ...b.errors, ...c.errors].filter((e) =>
      // The blocked requests and sockets are reported by the browser as failures.
      !/WebSocket|ERR_FAILED|net::|realtime\/sse/.test(e)
    );
    assert.deepEqual(errors, []);
  } finally {
    await a.context.close();
    await b.context.close();
    await c.context.close();
  }
});

Deno.test({
  name: "[web] the user directory starts a direct conversation, shown to both",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const alice = await createPerson(stack, "Alice Directory");
    const bob = await createPerson(stack, `Bob Directory ${crypto.randomUUID().slice(0, 4)}`);
    const a = await openContext(stack);
    const b = await openContext(stack);
    try {
      // Alice's browser paints late (a busy phone): once in the new conversation, the focus she
      // puts in the composer stays there (the closed dialog gave it back to its opener a frame
      // later, and her Enter then opened the dialog again).
      await a.context.addInitScript(lateFrames, 300);
      await signInThroughPages(stack, a, alice);
      await signInThroughPages(stack, b, bob);
      await a.page.getByRole("button", { name: "New conversation" }).click();
      const dialog = a.page.getByRole("dialog");
      await dialog.getByLabel("Find people by name").fill(bob.name);
      await dialog.getByRole("checkbox", { name: bob.name }).check();
      await a.page.evaluate(focusComposerOnArrival);
      await dialog.getByRole("button", { name: "Start conversation" }).click();
      await a.page.waitForURL((url) => url.pathname.startsWith("/chat/"));
      const box = a.page.getByRole("textbox", { name: "Message" });
      await a.page.waitForTimeout(400);
      assert.equal(
        await box.evaluate((e) => e === document.activeElement),
        true,
        `the composer keeps the focus (it is on ${await a.page.evaluate(() =>
          document.activeElement?.outerHTML.slice(0, 120)
        )})`,
      );
      await send(a, "Found you in the directory");
      // Bob's list gets the new conversation live (user:<id> says he joined one).
      await b.page.locator(".conversation", { hasText: "Alice Directory" }).waitFor();
      await b.page.locator(".conversation", { hasText: "Alice Directory" }).click();
      await b.page.locator(".msg .content", { hasText: "Found you in the directory" }).waitFor();
      assert.deepEqual([...a.errors, ...b.errors], []);
    } finally {
      await a.context.close();
      await b.context.close();
    }
  },
});

// Last in the file (tests run in order): this file's browser and server stop here, so no Chromium
// outlives the run.
test("[web] teardown: this file's Chromium and stack server stop", async () => {
  await stack.close();
  assert.equal(stack.browser.isConnected(), false);
});
