/**
 * OpenID Connect with Google and Apple: what Agora asks of the provider and how it checks the
 * answer. The flow itself (state, binding, callback) is in oauth.ts.
 *
 * - Endpoints come from the issuer's discovery document (`<issuer>/.well-known/openid-
 *   configuration`), whose `issuer` must be the configured one; kept for an hour per process.
 * - The authorization request: `response_type=code`, PKCE with S256, `state`, `nonce`; Google
 *   asks `openid email profile`; Apple `name email` with `response_mode=form_post` (Apple posts
 *   the answer to the callback, the only mode it allows when a name or address is asked for).
 * - The code is exchanged at the token endpoint with the PKCE verifier and the client's
 *   credentials in the body: Google's client secret; for Apple, a short-lived ES256 JWT signed
 *   with the team's key (apple.ts).
 * - The ID token from the token endpoint (Apple's form post carries one too; it is not used: the
 *   one fetched with the client's credentials is) is verified with jose against the issuer's JWKS
 *   (signature with an asymmetric algorithm the issuer announces; `iss`, `aud` = the client id,
 *   `exp`, `iat`, 60 s of clock tolerance) and its `nonce` must be the flow's.
 */
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import type { AppleSettings, GoogleSettings, Settings } from "../../_shared/settings.ts";
import { sha256Hex, timingSafeEqual } from "../../_shared/crypto.ts";
import { appleClientSecret } from "./apple.ts";

export type OidcProviderId = "google" | "apple";

/** Why a step with the provider failed: the `error` the callback sends the browser back with. */
export type OidcFailure =
  | "provider_unavailable"
  | "token_exchange_failed"
  | "invalid_id_token"
  | "nonce_mismatch";

export class OidcError extends Error {
  constructor(readonly failure: OidcFailure, message: string) {
    super(message);
  }
}

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  id_token_signing_alg_values_supported?: string[];
}

/** Asymmetric algorithms only: never `none`, never an HMAC keyed with something public. */
const ALLOWED_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384"];
const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const HTTP_TIMEOUT_MS = 5_000;
const CLOCK_TOLERANCE_SECONDS = 60;

const discoveries = new Map<string, { at: number; doc: Discovery }>();
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/** The provider's settings, or null when it is not configured. */
export function providerSettings(
  settings: Settings,
  provider: OidcProviderId,
): GoogleSettings | AppleSettings | null {
  return provider === "google" ? settings.google : settings.apple;
}

/** The issuer's discovery document (cached for an hour). */
export async function discover(issuer: string): Promise<Discovery> {
  const cached = discoveries.get(issuer);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.doc;
  let doc: Discovery;
  try {
    const response = await fetch(`${issuer}/.well-known/openid-configuration`, {
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      headers: { accept: "application/json" },
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    doc = await response.json();
  } catch (err) {
    throw new OidcError("provider_unavailable", `discovery of ${issuer} failed: ${err}`);
  }
  const urls = [doc.authorization_endpoint, doc.token_endpoint, doc.jwks_uri];
  if (doc.issuer !== issuer || urls.some((u) => typeof u !== "string" || !/^https?:\/\//.test(u))) {
    throw new OidcError(
      "provider_unavailable",
      `the discovery document of ${issuer} is not usable`,
    );
  }
  discoveries.set(issuer, { at: Date.now(), doc });
  return doc;
}

/** The `iss` values an ID token of this issuer may carry (Google also writes it without scheme). */
function acceptedIssuers(issuer: string): string[] {
  return issuer === "https://accounts.google.com" ? [issuer, "accounts.google.com"] : [issuer];
}

/** The provider's authorization URL for one flow. */
export async function authorizationUrl(
  provider: OidcProviderId,
  settings: GoogleSettings | AppleSettings,
  flow: { state: string; nonce: string; codeChallenge: string; redirectUri: string },
): Promise<string> {
  const doc = await discover(settings.issuer);
  const url = new URL(doc.authorization_endpoint);
  const params: Record<string, string> = {
    response_type: "code",
    client_id: settings.clientId,
    redirect_uri: flow.redirectUri,
    state: flow.state,
    nonce: flow.nonce,
    code_challenge: flow.codeChallenge,
    code_challenge_method: "S256",
    ...(provider === "apple"
      ? { scope: "name email", response_mode: "form_post" }
      : { scope: "openid email profile" }),
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

/** Exchanges the authorization code (with the PKCE verifier) for the provider's ID token. */
export async function exchangeCode(
  provider: OidcProviderId,
  settings: GoogleSettings | AppleSettings,
  input: { code: string; codeVerifier: string; redirectUri: string },
): Promise<string> {
  const doc = await discover(settings.issuer);
  let clientSecret: string;
  try {
    clientSecret = provider === "apple"
      ? await appleClientSecret(settings as AppleSettings)
      : (settings as GoogleSettings).clientSecret;
  } catch (err) {
    // AGORA_APPLE_PRIVATE_KEY is not an ES256 PKCS#8 key: an operator's mistake, said in the log.
    throw new OidcError("token_exchange_failed", `the client secret could not be made: ${err}`);
  }
  let response: Response;
  try {
    response = await fetch(doc.token_endpoint, {
      method: "POST",
      signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: input.code,
        redirect_uri: input.redirectUri,
        client_id: settings.clientId,
        client_secret: clientSecret,
        code_verifier: input.codeVerifier,
      }),
    });
  } catch (err) {
    throw new OidcError("provider_unavailable", `the token endpoint did not answer: ${err}`);
  }
  const body = await response.json().catch(() => null) as { id_token?: unknown } | null;
  if (!response.ok || typeof body?.id_token !== "string") {
    throw new OidcError("token_exchange_failed", `the token endpoint answered ${response.status}`);
  }
  return body.id_token;
}

/** What Agora takes from a verified ID token. */
export interface IdTokenClaims {
  sub: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  picture: string | null;
  /** Apple: the address is a private relay (`…@privaterelay.appleid.com`). */
  privateEmail: boolean;
}

/** Booleans Apple may send as the strings "true" and "false". */
function truthy(value: unknown): boolean {
  return value === true || value === "true";
}

/**
 * Verifies an ID token: signature against the issuer's JWKS, `iss`, `aud` (this client),
 * `exp` and `iat`, and its `nonce` against the hash stored with the flow.
 */
export async function verifyIdToken(
  settings: GoogleSettings | AppleSettings,
  idToken: string,
  nonceHash: string,
): Promise<IdTokenClaims> {
  const doc = await discover(settings.issuer);
  let keys = keySets.get(doc.jwks_uri);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: HTTP_TIMEOUT_MS });
    keySets.set(doc.jwks_uri, keys);
  }
  const announced = doc.id_token_signing_alg_values_supported ?? ["RS256"];
  const algorithms = announced.filter((alg) => ALLOWED_ALGORITHMS.includes(alg));
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keys, {
      issuer: acceptedIssuers(settings.issuer),
      audience: settings.clientId,
      algorithms: algorithms.length ? algorithms : ["RS256"],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["sub", "iat", "exp"],
    }));
  } catch (err) {
    throw new OidcError("invalid_id_token", `the ID token was refused: ${err}`);
  }
  if (typeof payload.sub !== "string" || !payload.sub || payload.sub.length > 255) {
    throw new OidcError("invalid_id_token", "the ID token has no usable subject");
  }
  const nonce = typeof payload.nonce === "string" ? payload.nonce : "";
  if (!nonce || !timingSafeEqual(await sha256Hex(nonce), nonceHash)) {
    throw new OidcError("nonce_mismatch", "the ID token's nonce is not this sign-in's");
  }
  const text = (value: unknown, max: number) =>
    typeof value === "string" && value.trim() && value.length <= max ? value.trim() : null;
  return {
    sub: payload.sub,
    email: text(payload.email, 320)?.toLowerCase() ?? null,
    emailVerified: truthy(payload.email_verified),
    name: text(payload.name, 200),
    picture: text(payload.picture, 2048),
    privateEmail: truthy(payload.is_private_email),
  };
}
