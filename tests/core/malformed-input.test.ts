/**
 * Bad input over every route: the route list comes from the OpenAPI document, so a new route is
 * covered the day it is added. Each case must give a 4xx in the contract's error shape (never a
 * 500) that the document describes (status, content type and schema), or, for the sign-in
 * callbacks a browser opens, a 303 to the sign-in page with `?error=`; and the whole suite must
 * write nothing.
 */
import assert from "node:assert/strict";
import { expectJson, signInAs, test, testApp } from "../support/helpers.ts";
import { encodeCursor } from "../../functions/api/core/openapi.ts";
import { responseValidator } from "../support/openapi-validator.ts";
import { type Schema, schemaTools } from "../support/schema-samples.ts";
import { platform } from "../support/wallet.ts";

const t = testApp({ AGORA_MAX_BODY_BYTES: "4096" });
const admin = await signInAs(t, "ADMIN");
// The platform's contracts on the test chain: wallet routes given valid input work for real.
await platform(t.deps);

interface Operation {
  method: string;
  path: string;
  hasBody: boolean;
  /** The JSON body's schema, when the operation takes JSON. */
  bodySchema: Schema | null;
  /** Each query parameter's schema. */
  querySchemas: Record<string, Schema>;
  bodyProps: Record<string, { enum?: unknown[] }>;
  queryParams: string[];
  /** Query parameters that take any text (a search term): any value is valid for them. */
  freeText: string[];
}

const doc = await expectJson(await t.request("GET", "/api/openapi.json"), 200);
const validator = responseValidator(doc);

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const [method, op] of Object.entries(item)) {
      const operation = op as {
        requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
        parameters?: { in: string; name: string; schema?: Record<string, unknown> }[];
      };
      const schema = operation.requestBody?.content?.["application/json"]?.schema ?? {};
      const resolved = resolve(schema);
      const variants = (resolved.oneOf ?? resolved.anyOf ?? [resolved]) as Record<
        string,
        unknown
      >[];
      const bodyProps: Record<string, { enum?: unknown[] }> = {};
      for (const variant of variants) {
        Object.assign(
          bodyProps,
          (resolve(variant).properties ?? {}) as Record<string, { enum?: unknown[] }>,
        );
      }
      out.push({
        method: method.toUpperCase(),
        path,
        hasBody: !!operation.requestBody,
        bodySchema: operation.requestBody?.content?.["application/json"]?.schema ?? null,
        querySchemas: Object.fromEntries(
          (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => [
            p.name,
            p.schema ?? {},
          ]),
        ),
        bodyProps,
        queryParams: (operation.parameters ?? []).filter((p) => p.in === "query").map((p) =>
          p.name
        ),
        freeText: (operation.parameters ?? [])
          .filter((p) =>
            p.in === "query" && p.schema?.type === "string" && !p.schema.enum &&
            !p.schema.format && !p.schema.pattern
          )
          .map((p) => p.name),
      });
    }
  }
  return out;
}

function resolve(schema: Record<string, unknown>): Record<string, unknown> {
  const ref = schema.$ref as string | undefined;
  if (!ref) return schema;
  return doc.components.schemas[ref.replace("#/components/schemas/", "")];
}

/** Path parameters filled with a value that is wrong for any id. */
function fill(path: string, value: string) {
  return path.replace(/\{[^}]+\}/g, encodeURIComponent(value));
}

/**
 * What a refused request must not write: the rows of every table of Agora's schemas, but the
 * records every request may leave (its access-log row, its rate-limit window, the security event
 * of a refused admin call).
 */
const WRITTEN_BY_ANY_REQUEST = new Set([
  "app.access_logs",
  "app.security_events",
  "app_private.rate_limits",
]);

/**
 * Counters kept by appending deltas that the every-minute compaction (pg_cron's
 * agora-compact-counters and agora-fold-vendor-balances) folds into their rows. A fold deletes
 * deltas and adds rows without any request writing anything, so their row counts are not
 * compared: a request that wrote to them would also have written the rows they count (users,
 * messages, orders, ledger entries), which are. The user counters are compared by the figure their
 * reader gives instead (rows plus deltas, as `app.user_counts()` adds them: the same before and
 * after a fold), since a change of role or status moves a user between counters without adding a
 * row.
 */
const FOLDED_IN_THE_BACKGROUND = new Set([
  "app_private.analytics_count_deltas",
  "app_private.analytics_counts",
  "app_private.analytics_fact_deltas",
  "app_private.analytics_fact_members",
  "app_private.analytics_facts",
  "app_private.analytics_fold_marks",
  "app_private.user_count_deltas",
  "app_private.user_counts",
  "app_private.vendor_balance_changes",
  "app_private.vendor_balances",
]);

async function counts(): Promise<Record<string, number>> {
  const sql = t.deps.sql;
  const tables = await sql<{ schema: string; table: string }[]>`
    select schemaname as schema, relname as table from pg_stat_user_tables
    where schemaname in ('app', 'app_private', 'dev') order by 1, 2`;
  const out: Record<string, number> = {};
  // What app.user_counts() reads (it answers ADMINs only), in one statement as it does.
  for (
    const row of await sql<{ role: string; status: string; n: number }[]>`
    select role::text, status::text, sum(n)::int as n
    from (select role, status, n from app_private.user_counts
          union all select role, status, delta from app_private.user_count_deltas) c
    group by 1, 2 order by 1, 2`
  ) {
    out[`users counted as ${row.role} ${row.status}`] = row.n;
  }
  for (const { schema, table } of tables) {
    const name = `${schema}.${table}`;
    if (WRITTEN_BY_ANY_REQUEST.has(name) || FOLDED_IN_THE_BACKGROUND.has(name)) continue;
    // Names from the catalog, quoted as identifiers by the driver: no text is spliced in.
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from ${sql(schema)}.${sql(table)}`;
    out[`${schema}.${table}`] = row.n;
  }
  return out;
}

type Case = {
  name: string;
  method: string;
  /** The operation's path as the document writes it. */
  operation: string;
  path: string;
  headers?: Record<string, string>;
  raw?: string;
  /** Free-text input may also succeed; it must still never be a 500. */
  mayPass?: boolean;
};

function cases(): Case[] {
  const list: Case[] = [];
  for (const op of operations()) {
    const base = fill(op.path, crypto.randomUUID());
    for (const bad of ["not-a-uuid", "../../etc/passwd", "x".repeat(300), "%00"]) {
      if (op.path.includes("{")) {
        list.push({
          name: `path ${bad.slice(0, 12)}`,
          method: op.method,
          operation: op.path,
          path: fill(op.path, bad),
        });
      }
    }
    if (op.hasBody) {
      const json = { "content-type": "application/json" };
      list.push({
        name: "malformed JSON",
        method: op.method,
        operation: op.path,
        path: base,
        headers: json,
        raw: '{"a":',
      });
      list.push({
        name: "empty body",
        method: op.method,
        operation: op.path,
        path: base,
        headers: json,
        raw: "",
      });
      for (const raw of ["[]", "42", '"text"', "null", "true"]) {
        list.push({
          name: `JSON ${raw}`,
          method: op.method,
          operation: op.path,
          path: base,
          headers: json,
          raw,
        });
      }
      list.push({
        name: "text/plain",
        method: op.method,
        operation: op.path,
        path: base,
        headers: { "content-type": "text/plain" },
        raw: "hello",
      });
      list.push({
        name: "oversized",
        method: op.method,
        operation: op.path,
        path: base,
        headers: json,
        raw: JSON.stringify({ pad: "x".repeat(10_000) }),
      });
      const props = Object.keys(op.bodyProps);
      if (props.length) {
        const wrongTypes = Object.fromEntries(props.map((p) => [p, { nested: [1, 2] }]));
        list.push({
          name: "wrong types",
          method: op.method,
          operation: op.path,
          path: base,
          headers: json,
          raw: JSON.stringify(wrongTypes),
        });
        const numbers = Object.fromEntries(props.map((p) => [p, 12345]));
        list.push({
          name: "numbers everywhere",
          method: op.method,
          operation: op.path,
          path: base,
          headers: json,
          raw: JSON.stringify(numbers),
        });
        for (const [prop, schema] of Object.entries(op.bodyProps)) {
          if (schema.enum) {
            list.push({
              name: `unknown enum ${prop}`,
              method: op.method,
              operation: op.path,
              path: base,
              headers: json,
              raw: JSON.stringify({
                ...Object.fromEntries(props.map((p) => [p, "x"])),
                [prop]: "NOT_A_VALUE",
              }),
            });
          }
        }
      }
    }
    for (const param of op.queryParams) {
      const mayPass = op.freeText.includes(param);
      const values = [
        "-1",
        "abc",
        "99999999999999999999",
        "2026-13-45T99:99:99Z",
        "NOT_A_VALUE",
        "'; drop table app.users; --",
        // Cursors of the right shape (two strings) holding what the list's key cannot be.
        encodeCursor(["not a time", "00000000-0000-0000-0000-000000000000"]),
        encodeCursor(["2026-01-01T00:00:00Z", "not a uuid"]),
      ];
      for (const value of values) {
        const q = `${param}=${encodeURIComponent(value)}`;
        const path = base.includes("?") ? `${base}&${q}` : `${base}?${q}`;
        list.push({
          name: `query ${param}=${value}`,
          method: op.method,
          operation: op.path,
          path,
          mayPass,
        });
      }
      // The parameter's own boundaries, from its schema: each must be refused.
      const schema = resolve(op.querySchemas[param] ?? {});
      const boundaries: string[] = [];
      if (schema.maxLength !== undefined) boundaries.push("y".repeat(Number(schema.maxLength) + 1));
      if (schema.minimum !== undefined) boundaries.push(String(Number(schema.minimum) - 1));
      if (schema.maximum !== undefined) boundaries.push(String(Number(schema.maximum) + 1));
      if (schema.type === "integer") boundaries.push("1.5");
      for (const value of boundaries) {
        const q = `${param}=${encodeURIComponent(value)}`;
        list.push({
          name: `query ${param}=${value.slice(0, 12)} (out of bounds)`,
          method: op.method,
          operation: op.path,
          path: base.includes("?") ? `${base}&${q}` : `${base}?${q}`,
        });
      }
      // A NUL byte, which Postgres refuses in text.
      list.push({
        name: `query ${param}=NUL`,
        method: op.method,
        operation: op.path,
        path: `${base}?${param}=a%00b`,
        mayPass,
      });
      list.push({
        name: `query ${param} twice`,
        method: op.method,
        operation: op.path,
        path: `${base}?${param}=a&${param}=b`,
        mayPass,
      });
    }
  }
  return list;
}

test("[input] the OpenAPI document lists every route of the contract", () => {
  const listed = operations().map((o) => `${o.method} ${o.path}`);
  for (
    const route of [
      "POST /api/auth/signin",
      "POST /api/auth/signout",
      "GET /api/auth/session",
      "GET /api/auth/callback/{provider}",
      "POST /api/auth/verify",
      "POST /api/auth/refresh",
      "GET /api/auth/csrf",
      "GET /api/admin/users",
      "PUT /api/admin/users/{id}/role",
      "GET /api/admin/analytics",
      "GET /api/admin/config",
      "PUT /api/admin/config",
      "GET /api/admin/security-events",
      "GET /api/admin/access-logs",
      "GET /api/config/public",
      "GET /api/auth/providers",
      "GET /api/auth/nonce",
      "POST /api/auth/callback/apple",
      "GET /api/auth/sessions",
      "DELETE /api/auth/sessions/{id}",
      "DELETE /api/auth/sessions",
      "GET /api/account/export",
      "DELETE /api/account",
      "PUT /api/admin/users/{id}/status",
      "POST /api/admin/users/{id}/signout",
      "GET /api/notifications",
      "POST /api/notifications",
      "PUT /api/notifications/{id}/read",
      "PUT /api/notifications/read-all",
      "DELETE /api/notifications/{id}",
      "GET /api/notifications/preferences",
      "PUT /api/notifications/preferences",
      "POST /api/notifications/fcm/register",
      "DELETE /api/notifications/fcm/register",
      "POST /api/notifications/bulk",
      "GET /api/notifications/bulk/{id}",
      "GET /api/notifications/analytics",
    ]
  ) assert.ok(listed.includes(route), `${route} is in the OpenAPI document`);
  assert.equal(doc.openapi, "3.1.0");
});

test("[input] malformed input on every route, anonymous and as ADMIN: a documented 4xx in the error shape, never a 500, nothing written", async () => {
  const before = await counts();
  const all = cases();
  assert.ok(all.length > 150, `enough cases (${all.length})`);
  const failures: string[] = [];
  for (const c of all) {
    for (const token of [undefined, admin.accessToken]) {
      const response = await t.request(c.method, c.path, {
        token,
        headers: c.headers,
        rawBody: c.raw,
      });
      failures.push(...await judge(c, token ? "admin" : "anon", response));
    }
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(await counts(), before, "nothing was written");
});

const tools = schemaTools(doc);

/** Every JSON body broken field by field, as its schema says; `strict` ones must be refused. */
function bodyCases(strict: boolean): Case[] {
  const list: Case[] = [];
  for (const op of operations()) {
    if (!op.bodySchema) continue;
    const path = fill(op.path, crypto.randomUUID());
    for (const mutation of tools.mutations(op.bodySchema)) {
      if (mutation.strict !== strict) continue;
      list.push({
        name: mutation.name,
        method: op.method,
        operation: op.path,
        path,
        headers: { "content-type": "application/json" },
        raw: mutation.raw,
        mayPass: !strict,
      });
    }
  }
  return list;
}

/** Operations a browser opens, whose refusals are redirects to the sign-in page. */
const BROWSER_FACING = new Set([
  "GET /api/auth/callback/{provider}",
  "POST /api/auth/callback/apple",
]);

/** What is wrong with `response` as the answer to `c` (an empty list when nothing is). */
async function judge(c: Case, who: string, response: Response): Promise<string[]> {
  const failures = (await validator.check(c.method, c.operation, response)).map((problem) =>
    `${who} [${c.name}] ${problem}`
  );
  const text = await response.text();
  let shaped = false;
  try {
    const body = JSON.parse(text);
    shaped = typeof body.error?.code === "string" && typeof body.error?.message === "string";
  } catch {
    shaped = false;
  }
  // A browser opens the sign-in callbacks (a magic link, a provider's redirect or form post): they
  // refuse with a 303 to the site's sign-in page, which says what happened, never a JSON body.
  const toSigninPage = BROWSER_FACING.has(`${c.method} ${c.operation}`) &&
    response.status === 303 &&
    new URL(response.headers.get("location") ?? "/", "http://x").pathname === "/signin" &&
    new URL(response.headers.get("location") ?? "/", "http://x").searchParams.has("error");
  const acceptable = (c.mayPass && response.status < 300) || toSigninPage
    ? true
    : response.status >= 400 && response.status < 500 && shaped;
  if (!acceptable) {
    failures.push(
      `${who} ${c.method} ${c.operation} [${c.name}] -> ${response.status} ${text.slice(0, 160)}`,
    );
  }
  return failures;
}

test("[input] every body field with a pattern shows an example that matches it", () => {
  const missing: string[] = [];
  let fields = 0;
  for (const op of operations()) {
    for (const field of op.bodySchema ? tools.patternFields(op.bodySchema) : []) {
      fields++;
      const example = field.example;
      if (typeof example !== "string" || !new RegExp(field.pattern, "u").test(example)) {
        missing.push(`${op.method} ${op.path} ${field.path}: ${JSON.stringify(example)}`);
      }
    }
  }
  assert.ok(fields >= 15, `${fields} fields with a pattern`);
  assert.deepEqual(missing, []);
});

test("[input] every body field broken as its schema says (types, missing, boundaries, NUL, lone surrogates), anonymous and as ADMIN: a documented 4xx, nothing written", async () => {
  const before = await counts();
  const all = bodyCases(true);
  assert.ok(all.length > 500, `enough cases (${all.length})`);
  for (const name of ["NUL", "lone surrogate", "missing", "characters"]) {
    assert.ok(all.some((c) => c.name.includes(name)), `cases of ${name}`);
  }
  const failures: string[] = [];
  for (const c of all) {
    for (const [who, token] of [["anon", undefined], ["admin", admin.accessToken]] as const) {
      const response = await t.request(c.method, c.path, {
        token,
        headers: c.headers,
        rawBody: c.raw,
      });
      failures.push(...await judge(c, who, response));
    }
  }
  assert.deepEqual(failures, []);
  assert.deepEqual(await counts(), before, "nothing was written");
});

test("[input] Unicode edge cases and unknown extra fields in every text field, as ADMIN: accepted or a documented 4xx, never a 5xx", async () => {
  const all = bodyCases(false);
  assert.ok(all.length > 100, `enough cases (${all.length})`);
  const failures: string[] = [];
  let caller = await signInAs(t, "ADMIN");
  for (const c of all) {
    const response = await t.request(c.method, c.path, {
      token: caller.accessToken,
      headers: c.headers,
      rawBody: c.raw,
    });
    failures.push(...await judge(c, "admin", response));
    // A case may be a valid request that ends the caller's session or account (sign-out,
    // deletion): the next ones need a live caller.
    if (response.ok && c.method !== "GET") {
      const session = await expectJson(
        await t.request("GET", "/api/auth/session", { token: caller.accessToken }),
        200,
      );
      if (!session.user) caller = await signInAs(t, "ADMIN");
    }
  }
  assert.deepEqual(failures, []);
});

test("[input] an oversized body is 413 payload_too_large", async () => {
  const response = await t.request("POST", "/api/auth/signin", {
    headers: { "content-type": "application/json" },
    rawBody: JSON.stringify({ provider: "email", email: "a@b.test", pad: "x".repeat(10_000) }),
  });
  assert.equal((await expectJson(response, 413)).error.code, "payload_too_large");
});

test("[input] field errors name the field", async () => {
  const response = await t.request("POST", "/api/auth/signin", {
    body: { provider: "email", email: "nope" },
  });
  const body = await expectJson(response, 400);
  assert.equal(body.error.code, "invalid_request");
  assert.ok(body.error.details.some((d: { path: string }) => d.path === "email"));
});

test("[input] an unknown route is a 404 in the error shape", async () => {
  const response = await t.request("GET", "/api/nope");
  assert.equal((await expectJson(response, 404)).error.code, "not_found");
});

test("[input] a JSON route given another content type is 415 in the error shape", async () => {
  const response = await t.request("POST", "/api/auth/signin", {
    headers: { "content-type": "text/plain" },
    rawBody: JSON.stringify({ provider: "email", email: "a@b.test" }),
  });
  assert.equal((await expectJson(response, 415)).error.code, "unsupported_media_type");
});
