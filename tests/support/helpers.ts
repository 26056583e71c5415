/**
 * Test helpers: the real app in-process (`app.request`) against the throwaway database the test
 * runner made (AGORA_TEST_DB_URL), sign-in through the real magic-link flow and the dev mailbox,
 * and small request builders.
 */
import { createApp } from "../../functions/api/app.ts";
import type { Deps } from "../../functions/api/core/context.ts";
import { createDeps } from "../../functions/api/deps.ts";
import { loadSettings } from "../../functions/_shared/settings.ts";
import { publicJwk } from "../../functions/_shared/jwt.ts";
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { type ResponseValidator, responseValidator } from "./openapi-validator.ts";

export const SITE = "http://localhost:54321";

/** Deno.test without the resource sanitizers (the pool keeps sockets and timers open). */
export function test(name: string, fn: () => Promise<void> | void): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false, fn });
}

export function testEnv(overrides: Record<string, string> = {}): Record<string, string> {
  const url = Deno.env.get("AGORA_TEST_DB_URL");
  if (!url) throw new Error("AGORA_TEST_DB_URL is not set: run the tests with `npm test`");
  // `npm test -- --pooler`: the API's pool goes through a transaction-mode PgBouncer in front of
  // the run's database (statement preparation off, LISTEN on a direct session connection), as a
  // hosted project's API goes through Supavisor; the tests' own connections stay direct.
  const pooler = Deno.env.get("AGORA_TEST_POOLER_URL");
  return {
    ...Deno.env.toObject(),
    AGORA_DB_URL: pooler || url,
    ...(pooler ? { AGORA_DB_POOL_MODE: "transaction", AGORA_DB_SESSION_URL: url } : {}),
    AGORA_LOCAL_MODE: "true",
    AGORA_SITE_URL: SITE,
    AGORA_ALLOWED_ORIGINS: "http://app.example.test",
    AGORA_LOG_LEVEL: "silent",
    AGORA_DB_POOL_SIZE: "5",
    // Generous limits so tests do not trip each other; rate-limit tests set their own.
    AGORA_RATE_SIGNIN_IP: "100000/600",
    AGORA_RATE_SIGNIN_EMAIL: "100000/600",
    AGORA_RATE_VERIFY_IP: "100000/600",
    AGORA_RATE_REFRESH_SESSION: "100000/600",
    AGORA_RATE_ADMIN_USER: "100000/60",
    AGORA_RATE_REPORTS_USER: "100000/3600",
    // The run's throwaway chain (stack/cli.ts), for the wallet.
    ...(Deno.env.get("AGORA_TEST_RPC_URL")
      ? { AGORA_RPC_URL: Deno.env.get("AGORA_TEST_RPC_URL")! }
      : {}),
    // A test on a database of its own (a throwaway cluster it restarts) listens there too: the
    // pooler's session URL above names the run's database.
    ...(overrides.AGORA_DB_URL && pooler
      ? { AGORA_DB_POOL_MODE: "session", AGORA_DB_SESSION_URL: overrides.AGORA_DB_URL }
      : {}),
    ...overrides,
  };
}

export interface TestApp {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  /** A request as a client would send it; `ip` plays the socket's remote address. */
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
  ip?: string;
  /**
   * Skip the check against the OpenAPI document: only for a fault the test injects into the
   * server itself (a storage that plants a conflicting row, a process without its keys), where
   * the document promises nothing.
   */
  injectedFault?: boolean;
}

export function testApp(overrides: Record<string, string> = {}): TestApp {
  const deps = createDeps(loadSettings(testEnv(overrides)));
  const app = createApp(deps);
  return {
    app,
    deps,
    request(method, path, opts = {}) {
      const headers = new Headers(opts.headers);
      if (opts.token) headers.set("authorization", `Bearer ${opts.token}`);
      if (opts.cookies) {
        headers.set("cookie", Object.entries(opts.cookies).map(([k, v]) => `${k}=${v}`).join("; "));
      }
      let body: BodyInit | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        if (!headers.has("content-type")) headers.set("content-type", "application/json");
      }
      const answered = Promise.resolve(
        app.request(`${SITE}${path}`, { method, headers, body }, {
          remoteAddr: { hostname: opts.ip ?? "127.0.0.1", port: 40000, transport: "tcp" },
        }),
      );
      const caller =
        new Error().stack?.split("\n").find((l) =>
          l.includes("/tests/") && !l.includes("/tests/support/")
        )?.trim() ?? "";
      if (opts.injectedFault) return answered;
      return answered.then((response) => checkAgainstDocument(app, method, path, response, caller));
    },
  };
}

/**
 * A JWT with these claims signed as the app signs its access tokens: ES256 with its signing key
 * and `kid` when one is set (the default), HS256 under the secret otherwise. For tokens a test
 * shapes itself (an expiry in 2 s, an expired one).
 */
export async function signAsApp(t: TestApp, claims: JWTPayload): Promise<string> {
  const keys = t.deps.settings.jwtSigningKeys;
  if (!keys) {
    return await new SignJWT(claims).setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .sign(new TextEncoder().encode(t.deps.settings.jwtSecret));
  }
  const { kid } = await publicJwk(keys.current);
  return await new SignJWT(claims).setProtectedHeader({ alg: "ES256", typ: "JWT", kid })
    .sign(await importJWK({ ...keys.current, alg: "ES256" }, "ES256"));
}

/** A fresh address, so tests never share accounts or rate-limit buckets by accident. */
export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}@test.example`;
}

/** Creates a user directly (a trusted server path), with a role. */
export async function createUser(
  deps: Deps,
  role: "VISITOR" | "SUBSCRIBER" | "MEMBER" | "CONFIDENTIAL" | "ADMIN" = "SUBSCRIBER",
  email = uniqueEmail(role.toLowerCase()),
): Promise<{ id: string; email: string }> {
  const [row] = await deps.sql<{ id: string }[]>`
    insert into app.users (email, name, role) values (${email}, ${
    email.split("@")[0]
  }, ${role}) returning id`;
  return { id: row.id, email };
}

/** The newest magic-link token mailed to `email`, read from the dev mailbox. */
export async function latestMagicToken(deps: Deps, email: string): Promise<string> {
  const [mail] = await deps.sql<{ links: string[] }[]>`
    select links from dev.mail where lower(to_address) = lower(${email}) order by id desc limit 1`;
  if (!mail) throw new Error(`no mail for ${email}`);
  return new URL(mail.links[0]).searchParams.get("token")!;
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
  user: { id: string; email: string; role: string; name: string };
}

/** The full magic-link flow for integrators: sign-in request, mailbox, verify. */
export async function signIn(t: TestApp, email: string): Promise<SignedIn> {
  const sent = await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  if (sent.status !== 202) throw new Error(`signin: ${sent.status} ${await sent.text()}`);
  const token = await latestMagicToken(t.deps, email);
  return await expectJson(await t.request("POST", "/api/auth/verify", { body: { token } }), 200);
}

/** Signs in a new user with the given role. */
export async function signInAs(
  t: TestApp,
  role: Parameters<typeof createUser>[1],
): Promise<SignedIn> {
  const user = await createUser(t.deps, role);
  return await signIn(t, user.email);
}

/** Cookies set by a response, as a name-value map. */
export function setCookies(
  response: Response,
): Record<string, { value: string; attributes: string }> {
  const out: Record<string, { value: string; attributes: string }> = {};
  for (const header of response.headers.getSetCookie()) {
    const [pair, ...attributes] = header.split(";");
    const index = pair.indexOf("=");
    out[pair.slice(0, index).trim()] = {
      value: pair.slice(index + 1),
      attributes: attributes.join(";"),
    };
  }
  return out;
}

/** The cookies a response set, as the next request sends them back: name to value. */
export function cookieJar(response: Response): Record<string, string> {
  return Object.fromEntries(
    Object.entries(setCookies(response)).map(([name, cookie]) => [name, cookie.value]),
  );
}

/**
 * A browser's magic-link sign-in: the sign-in request, the dev mailbox, then the link's callback,
 * which answers 303 with the session cookies: returned as a jar for the next requests
 * (`cookies`) and with their attributes.
 */
export async function browserSignIn(t: TestApp, email = uniqueEmail("browser")) {
  const sent = await t.request("POST", "/api/auth/signin", { body: { provider: "email", email } });
  if (sent.status !== 202) throw new Error(`signin: ${sent.status} ${await sent.text()}`);
  const token = await latestMagicToken(t.deps, email);
  const response = await t.request("GET", `/api/auth/callback/email?token=${token}`);
  if (response.status !== 303) {
    throw new Error(`callback: ${response.status} ${await response.text()}`);
  }
  return { response, cookies: cookieJar(response), attributes: setCookies(response) };
}

/**
 * Reads a response the one way tests do: the status first, then the body as JSON, which it
 * returns. On a wrong status or a body that is not JSON it throws with the body's text, so a
 * failure shows what the server said instead of a later `undefined`. `status` may list the
 * statuses that are all right (`[200, 201]`).
 *
 * @example
 * const page = await expectJson(await t.request("GET", "/api/conversations", { token }), 200);
 */
export async function expectJson<T = Any>(
  response: Response,
  status: number | readonly number[],
): Promise<T> {
  const text = await response.text();
  const expected = typeof status === "number" ? [status] : status;
  if (!expected.includes(response.status)) {
    throw new Error(
      `expected ${expected.join(" or ")}, got ${response.status}: ${text.slice(0, 2000)}`,
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected a JSON body with ${status}, got: ${text.slice(0, 2000)}`);
  }
}

// deno-lint-ignore no-explicit-any
type Any = any;

/** Asserts the contract's error shape and returns the body. */
export async function expectError(response: Response, status: number, code?: string) {
  const text = await response.text();
  if (response.status !== status) {
    throw new Error(`expected ${status}, got ${response.status}: ${text}`);
  }
  const body = JSON.parse(text);
  if (typeof body?.error?.code !== "string" || typeof body.error.message !== "string") {
    throw new Error(`not the error shape: ${text}`);
  }
  if (code && body.error.code !== code) {
    throw new Error(`expected code ${code}, got ${body.error.code}`);
  }
  return body as { error: { code: string; message: string; details?: unknown } };
}

/**
 * Every response a test receives through `testApp` is checked against the served OpenAPI
 * document (tests/support/openapi-validator.ts): a status the operation does not declare, or a
 * body outside its schema, fails the request (and with it the test, naming where it was sent), so
 * the document stays the truth for every route the suite reaches. Paths outside the document
 * (unknown routes, /health) and event streams are not checked.
 */
async function checkAgainstDocument(
  app: ReturnType<typeof createApp>,
  method: string,
  path: string,
  response: Response,
  caller: string,
): Promise<Response> {
  const type = response.headers.get("content-type") ?? "";
  if (!path.startsWith("/api/") || type.startsWith("text/event-stream")) return response;
  const { validator, operations } = await documentOf(app);
  const pathname = path.split("?")[0];
  const operation = operations.find((o) =>
    o.method === method.toUpperCase() && o.match.test(pathname)
  );
  if (!operation) return response;
  const problems = await validator.check(method, operation.path, response);
  if (problems.length) {
    throw new Error(
      `the answer is not what the OpenAPI document declares (${caller}):\n  ${
        problems.join("\n  ")
      }\n  body: ${(await response.clone().text()).slice(0, 500)}`,
    );
  }
  return response;
}

let document:
  | Promise<{
    validator: ResponseValidator;
    operations: { method: string; path: string; match: RegExp }[];
  }>
  | null = null;

function documentOf(app: ReturnType<typeof createApp>) {
  document ??= (async () => {
    const doc = await (await app.request(`${SITE}/api/openapi.json`)).json();
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => ({
          method: method.toUpperCase(),
          path,
          match: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
        }))
      )
      // Literal segments before parameters: /api/messages/search before /api/messages/{id}.
      .sort((a, b) => (a.path.includes("{") ? 1 : 0) - (b.path.includes("{") ? 1 : 0));
    return { validator: responseValidator(doc), operations };
  })();
  return document;
}
