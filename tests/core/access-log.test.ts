/** The access log: every /api request becomes a row, written in batches off the request path. */
import assert from "node:assert/strict";
import { createAccessLog } from "../../functions/_shared/access-log.ts";
import { createPool } from "../../functions/_shared/db.ts";
import { signInAs, test, testApp, testEnv } from "../support/helpers.ts";

const t = testApp();

interface Row {
  request_id: string;
  user_id: string | null;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  ip: string | null;
}

function rows(requestIds: string[]): Promise<Row[]> {
  return t.deps.sql<Row[]>`
    select request_id, user_id, method, route, status, duration_ms, host(ip) as ip
    from app.access_logs where request_id = any(${requestIds}) order by request_id`;
}

test("[access-log] every /api request is a row: request id, user, route pattern, status, duration, ip", async () => {
  const member = await signInAs(t, "MEMBER");
  const tag = crypto.randomUUID().slice(0, 8);
  const ids = [`log-${tag}-a`, `log-${tag}-b`, `log-${tag}-c`];
  await t.request("GET", "/api/auth/session", {
    token: member.accessToken,
    headers: { "x-request-id": ids[0] },
    ip: "192.0.2.10",
  });
  await t.request("PUT", `/api/admin/users/${member.user.id}/role`, {
    token: member.accessToken,
    body: { role: "ADMIN", reason: "probe" },
    headers: { "x-request-id": ids[1] },
    ip: "192.0.2.11",
  });
  await t.request("GET", "/api/nowhere", {
    headers: { "x-request-id": ids[2] },
    ip: "2001:db8::1",
  });

  await t.deps.accessLog.flush();
  const written = await rows(ids);
  assert.deepEqual(written.map(({ duration_ms: _, ...rest }) => rest), [
    {
      request_id: ids[0],
      user_id: member.user.id,
      method: "GET",
      route: "/api/auth/session",
      status: 200,
      ip: "192.0.2.10",
    },
    {
      request_id: ids[1],
      user_id: member.user.id,
      method: "PUT",
      route: "/api/admin/users/:id/role",
      status: 403,
      ip: "192.0.2.11",
    },
    {
      request_id: ids[2],
      user_id: null,
      method: "GET",
      route: "(unmatched)",
      status: 404,
      ip: "2001:db8::1",
    },
  ]);
  for (const row of written) assert.ok(row.duration_ms >= 0 && row.duration_ms < 60_000);
});

test("[access-log] quotes, tabs, line breaks, backslashes, nulls and times arrive as sent", async () => {
  const log = createAccessLog(createPool(testEnv().AGORA_DB_URL, 1), () => {});
  const id = `copy-${crypto.randomUUID()}`;
  const route = '/odd\tpath\nwith\\slashes\rand "quotes" \\N \u2028';
  log.push({
    requestId: id,
    userId: null,
    method: "GET",
    route,
    status: 200,
    durationMs: 1.25,
    ip: null,
    at: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  });
  await log.close();
  const [row] = await t.deps.sql<{ route: string; ip: null; user_id: null; at: string }[]>`
    select route, ip, user_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') as at
    from app.access_logs where request_id = ${id}`;
  assert.deepEqual(row, { route, ip: null, user_id: null, at: "2026-01-02 03:04:05.678" });
});

test("[access-log] a batch the database refuses is reported and the next batches still arrive", async () => {
  const errors: string[] = [];
  const log = createAccessLog(createPool(testEnv().AGORA_DB_URL, 1), (_level, msg) => {
    errors.push(msg);
  });
  const entry = (requestId: string, ip: string | null) => ({
    requestId,
    userId: null,
    method: "GET",
    route: "/api/x",
    status: 200,
    durationMs: 1,
    ip,
    at: Date.now(),
  });
  const tag = crypto.randomUUID().slice(0, 8);
  log.push(entry(`bad-${tag}`, "not an address")); // inet refuses it: the whole batch fails
  await log.flush();
  log.push(entry(`good-${tag}`, "192.0.2.1"));
  await log.close();
  assert.deepEqual(errors, ["access log batch not written"]);
  const written = await t.deps.sql<{ request_id: string }[]>`
    select request_id from app.access_logs where request_id in (${`bad-${tag}`}, ${`good-${tag}`})`;
  assert.deepEqual(written.map((r) => r.request_id), [`good-${tag}`]);
});
