/**
 * Role changes under concurrency (PUT /api/admin/users/:id/role). A change commits with its
 * record (app.role_changes) and its security event and answers what it did, or is refused and
 * changes nothing: never a 500, never a change nobody was told about, never a state that no
 * serial order of the answers explains. The races are forced with real row locks held by another
 * transaction, so each run takes the same path.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createUser, type SignedIn, signIn, signInAs, test, testApp } from "../support/helpers.ts";

const t = testApp();
/** A connection of its own for the transactions that hold locks while the API works. */
const blocker = postgres(Deno.env.get("AGORA_TEST_DB_URL")!, { max: 2, onnotice: () => {} });
// Always at least one more active ADMIN, so the last-admin rule never decides these races.
await signInAs(t, "ADMIN");

/** Waits until `n` API connections wait on a lock inside app.change_user_role. */
async function waitingChanges(n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [{ waiting }] = await blocker<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity
      where application_name = 'agora-api' and wait_event_type = 'Lock'
        and query ilike '%change_user_role%'`;
    if (waiting >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${n} role changes never waited on a lock`);
}

function changeRole(by: SignedIn, userId: string, role: string, reason: string) {
  return t.request("PUT", `/api/admin/users/${userId}/role`, {
    token: by.accessToken,
    body: { role, reason },
  });
}

async function roleOf(userId: string): Promise<string> {
  const [row] = await t.deps.sql<
    { role: string }[]
  >`select role from app.users where id = ${userId}`;
  return row.role;
}

async function recorded(userId: string, by: string) {
  const [row] = await t.deps.sql<{ changes: number; events: number }[]>`
    select (select count(*)::int from app.role_changes where user_id = ${userId} and changed_by = ${by}) as changes,
           (select count(*)::int from app.security_events
            where type = 'admin.role_changed' and user_id = ${userId} and details ->> 'by' = ${by}) as events`;
  return row;
}

test("[admin] two admins demoting each other at once: one change commits with its record, the other is refused and changes nothing", async () => {
  for (let round = 0; round < 3; round++) {
    const a = await signInAs(t, "ADMIN");
    const b = await signInAs(t, "ADMIN");
    // Hold both rows, so both requests are on their way before either can finish.
    let release!: () => void;
    const held = new Promise<void>((r) => release = r);
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => locked = r);
    const holder = blocker.begin(async (tx) => {
      await tx`select 1 from app.users where id in (${a.user.id}, ${b.user.id}) for update`;
      locked();
      await held;
    });
    await isLocked;
    const answers = Promise.all([
      changeRole(a, b.user.id, "MEMBER", "demote b"),
      changeRole(b, a.user.id, "MEMBER", "demote a"),
    ]);
    await waitingChanges(2).finally(release);
    await holder;
    const [toB, toA] = await answers;
    const [textB, textA] = [await toB.text(), await toA.text()];
    const statuses = [toB.status, toA.status].sort();
    assert.deepEqual(statuses, [200, 403], `round ${round}: ${textB} / ${textA}`);
    const [winner, loser, winnerText] = toB.status === 200 ? [a, b, textB] : [b, a, textA];
    const body = JSON.parse(winnerText);
    assert.equal(body.user.id, loser.user.id);
    assert.equal(body.user.role, "MEMBER");
    assert.equal(body.change.changedBy, winner.user.id);
    assert.equal(await roleOf(loser.user.id), "MEMBER", "the winner's change holds");
    assert.equal(await roleOf(winner.user.id), "ADMIN", "the refused change changed nothing");
    assert.deepEqual(await recorded(loser.user.id, winner.user.id), { changes: 1, events: 1 });
    assert.deepEqual(await recorded(winner.user.id, loser.user.id), { changes: 0, events: 0 });
  }
});

test("[admin] a role change racing the caller's own demotion is refused and changes nothing, never a 500", async () => {
  const a = await signInAs(t, "ADMIN");
  const b = await signInAs(t, "ADMIN");
  const target = await createUser(t.deps, "MEMBER");
  // B demotes A through app.change_user_role, as the API does, and holds the transaction open.
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  let demoted!: () => void;
  const isDemoted = new Promise<void>((r) => demoted = r);
  const demotion = blocker.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', ${
      JSON.stringify({ sub: b.user.id, role: "authenticated", session_id: crypto.randomUUID() })
    }, true)`;
    await tx`select app.change_user_role(${a.user.id}, 'MEMBER', 'demoted while acting')`;
    demoted();
    await held;
  });
  await isDemoted;
  // A, still ADMIN as far as committed data goes, changes someone else's role meanwhile.
  const answer = changeRole(a, target.id, "CONFIDENTIAL", "promote");
  await waitingChanges(1).finally(release);
  await demotion;
  const response = await answer;
  const text = await response.text();
  assert.equal(response.status, 403, text);
  assert.equal(JSON.parse(text).error.code, "forbidden");
  assert.equal(await roleOf(target.id), "MEMBER", "the refused change changed nothing");
  assert.deepEqual(await recorded(target.id, a.user.id), { changes: 0, events: 0 });
  assert.equal(await roleOf(a.user.id), "MEMBER", "the demotion holds");

  // The other way round: C's change is under way (held open) when B demotes C. B's demotion
  // waits for it, then goes through: C's change stands, recorded, and so does the demotion.
  const c = await signIn(t, (await createUser(t.deps, "ADMIN")).email);
  const other = await createUser(t.deps, "MEMBER");
  let releaseC!: () => void;
  const heldC = new Promise<void>((r) => releaseC = r);
  let changed!: () => void;
  const isChanged = new Promise<void>((r) => changed = r);
  const change = blocker.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true),
                    set_config('request.jwt.claims', ${
      JSON.stringify({ sub: c.user.id, role: "authenticated", session_id: crypto.randomUUID() })
    }, true)`;
    await tx`select app.change_user_role(${other.id}, 'CONFIDENTIAL', 'promote first')`;
    changed();
    await heldC;
  });
  await isChanged;
  const demotion2 = changeRole(b, c.user.id, "MEMBER", "then demote");
  await new Promise((r) => setTimeout(r, 200));
  releaseC();
  await change;
  const second = await demotion2;
  assert.equal(second.status, 200, await second.text());
  assert.equal(await roleOf(other.id), "CONFIDENTIAL");
  assert.equal(await roleOf(c.user.id), "MEMBER");
  assert.deepEqual(await recorded(other.id, c.user.id), { changes: 1, events: 1 });
  assert.deepEqual(await recorded(c.user.id, b.user.id), { changes: 1, events: 1 });
});
