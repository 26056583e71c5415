/**
 * Google's and Apple's side of a sign-in, played by real OpenID Connect servers from npm
 * (`oauth2-mock-server`): discovery, JWKS, an authorization endpoint that checks and remembers
 * the PKCE challenge and nonce, a token endpoint that checks the PKCE verifier and issues
 * RS256-signed ID tokens. Its hooks shape the next ID token (subject, address, `email_verified`,
 * or a wrong nonce, audience or expiry) and record what reached the token endpoint (the verifier,
 * Apple's client-secret JWT).
 *
 * `signInFlow` then does what a browser does: starts the sign-in at the API, follows the
 * authorization URL to the provider, and comes back to the callback (Google: a GET with the
 * query; Apple: the form post `response_mode=form_post` asks for).
 */
import { Events, OAuth2Server } from "oauth2-mock-server";
import { exportPKCS8, exportSPKI, generateKeyPair } from "jose";
import { setCookies, type TestApp } from "./helpers.ts";

type Payload = Record<string, unknown>;

/** Who the provider says signs in next. */
export interface PeerIdentity {
  sub: string;
  email?: string;
  /** Apple sends the strings "true" and "false". */
  email_verified?: boolean | "true" | "false";
  name?: string;
  is_private_email?: "true" | "false";
}

export class OidcPeer {
  /** Bodies of the token requests, in order (form fields as the provider parsed them). */
  readonly tokenRequests: Record<string, string>[] = [];
  /** Who signs in next (every ID token until changed). */
  identity: PeerIdentity = { sub: "nobody" };
  private shapers: ((payload: Payload) => void)[] = [];

  private constructor(readonly server: OAuth2Server, readonly clientId: string) {
    // Both the access token and the ID token pass here; the ID token is the one without `scope`.
    server.service.on(Events.BeforeTokenSigning, (token: { payload: Payload }) => {
      if ("scope" in token.payload) return;
      Object.assign(token.payload, this.identity);
      this.shapers.shift()?.(token.payload);
    });
    server.service.on(
      Events.BeforeResponse,
      (_response: unknown, req: { body?: Record<string, string> }) => {
        this.tokenRequests.push({ ...(req.body ?? {}) });
      },
    );
  }

  static async start(clientId: string): Promise<OidcPeer> {
    const server = new OAuth2Server();
    await server.issuer.keys.generate("RS256");
    await server.start(0, "127.0.0.1");
    return new OidcPeer(server, clientId);
  }

  get issuer(): string {
    return this.server.issuer.url!;
  }

  /** Changes the next ID token only (after the identity is applied). */
  shapeNextIdToken(shape: (payload: Payload) => void): void {
    this.shapers.push(shape);
  }

  /** Makes the next token request fail as a provider refusing the code would. */
  refuseNextCode(): void {
    this.server.service.once(
      Events.BeforeResponse,
      (response: { body: unknown; statusCode: number }) => {
        response.body = { error: "invalid_grant" };
        response.statusCode = 400;
      },
    );
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}

/** A team key for Sign in with Apple, as the .p8 file Apple hands out (and its public half). */
export async function appleTeamKey(): Promise<{ privatePem: string; publicPem: string }> {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { privatePem: await exportPKCS8(privateKey), publicPem: await exportSPKI(publicKey) };
}

export const GOOGLE_CLIENT_ID = "agora-test.apps.googleusercontent.test";
export const APPLE_CLIENT_ID = "test.agora.signin";
export const APPLE_TEAM_ID = "TEAM123456";
export const APPLE_KEY_ID = "KEY1234567";

/** Both providers running, and the settings that point the API at them. */
export async function startPeers() {
  const google = await OidcPeer.start(GOOGLE_CLIENT_ID);
  const apple = await OidcPeer.start(APPLE_CLIENT_ID);
  const appleKey = await appleTeamKey();
  const env = {
    AGORA_GOOGLE_CLIENT_ID: GOOGLE_CLIENT_ID,
    AGORA_GOOGLE_CLIENT_SECRET: "google-client-secret-for-tests",
    AGORA_GOOGLE_ISSUER: google.issuer,
    AGORA_APPLE_CLIENT_ID: APPLE_CLIENT_ID,
    AGORA_APPLE_TEAM_ID: APPLE_TEAM_ID,
    AGORA_APPLE_KEY_ID: APPLE_KEY_ID,
    AGORA_APPLE_PRIVATE_KEY: appleKey.privatePem,
    AGORA_APPLE_ISSUER: apple.issuer,
  };
  return { google, apple, appleKey, env };
}

export const BINDING_COOKIE = "agora-oauth-binding";

/** The start of a sign-in as the API answered it. */
export interface Started {
  response: Response;
  url: URL;
  /** The binding cookie the answer set (browser flows). */
  binding: string | null;
  bindingAttributes: string | null;
}

export async function startSignIn(
  t: TestApp,
  provider: "google" | "apple",
  body: Record<string, unknown> = {},
  opts: { token?: string; cookies?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Started> {
  const response = await t.request("POST", "/api/auth/signin", {
    body: { provider, ...body },
    ...opts,
  });
  const text = await response.clone().text();
  if (response.status !== 200) throw new Error(`signin: ${response.status} ${text}`);
  const cookie = setCookies(response)[BINDING_COOKIE];
  return {
    response,
    url: new URL(JSON.parse(text).url),
    binding: cookie?.value ?? null,
    bindingAttributes: cookie?.attributes ?? null,
  };
}

/** What the provider sends the browser back with: its redirect to our callback. */
export async function authorizeAtProvider(url: URL): Promise<URL> {
  const response = await fetch(url, { redirect: "manual" });
  await response.body?.cancel();
  const location = response.headers.get("location");
  if (response.status !== 302 || !location) {
    throw new Error(`the provider answered ${response.status}, not a redirect`);
  }
  return new URL(location);
}

/** Calls our callback as the browser would: Google by GET, Apple by form post. */
export function callback(
  t: TestApp,
  provider: "google" | "apple",
  params: Record<string, string>,
  opts: { cookies?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Response> {
  if (provider === "google") {
    return t.request("GET", `/api/auth/callback/google?${new URLSearchParams(params)}`, opts);
  }
  return t.request("POST", "/api/auth/callback/apple", {
    ...opts,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      // Apple's page posts the form: a cross-site request from Apple's origin.
      origin: "https://appleid.apple.com",
      ...opts.headers,
    },
    rawBody: new URLSearchParams(params).toString(),
  });
}

/** A whole browser sign-in: start, provider, callback. Returns the callback's answer. */
export async function signInFlow(
  t: TestApp,
  provider: "google" | "apple",
  body: Record<string, unknown> = {},
  opts: { token?: string; appleUser?: Record<string, unknown> } = {},
): Promise<{ started: Started; back: URL; response: Response }> {
  const started = await startSignIn(t, provider, body, { token: opts.token });
  const back = await authorizeAtProvider(started.url);
  const params: Record<string, string> = {
    code: back.searchParams.get("code")!,
    state: back.searchParams.get("state")!,
  };
  if (opts.appleUser) params.user = JSON.stringify(opts.appleUser);
  const response = await callback(t, provider, params, {
    cookies: started.binding ? { [BINDING_COOKIE]: started.binding } : undefined,
  });
  return { started, back, response };
}

export type { Payload };
