/**
 * Access tokens: short-lived JWTs with Supabase-compatible claims (`sub`, `role:
 * "authenticated"`, `aud`, `exp`, `session_id`, ...) so hosted Realtime and RLS accept them, plus
 * `user_role`, the platform role at issue time (informational: checks read the database).
 *
 * Signed ES256 with `AGORA_JWT_SIGNING_KEY` (a private JWK, its `kid` in the header) when one is
 * set, and verified against it and the earlier keys of `AGORA_JWT_PREVIOUS_KEYS` (a rotation's
 * overlap); the public keys are the JWKS (`GET /api/auth/.well-known/jwks.json`). Without a
 * signing key they are HS256 under `AGORA_JWT_SECRET`, the legacy setting. The anon and service
 * keys are always HS256 under the secret: they are the project's API keys, not ours.
 */
import {
  calculateJwkThumbprint,
  createLocalJWKSet,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from "jose";

const API_KEY_ISSUED_AT = 1_767_225_600; // 2026-01-01
const API_KEY_EXPIRES_AT = 2_082_758_400; // 2036-01-01

export interface AccessClaims {
  sub: string;
  session_id: string;
  email: string;
  /** When the person last really signed in (seconds since epoch); a refresh keeps it. */
  auth_time: number;
  /** How: the provider that opened the session, e.g. ["google"]. */
  amr: string[];
  role: "authenticated";
  aud: "authenticated";
  user_role: string;
  exp: number;
  iat: number;
}

export interface TokenIssuer {
  issue(input: {
    userId: string;
    sessionId: string;
    email: string | null;
    userRole: string;
    /** The session's sign-in time, seconds since epoch (`auth_time`). */
    authTime: number;
    /** The provider that opened the session (`amr: [provider]`). */
    provider: string;
    /** A lifetime other than the access tokens' (the page's Realtime token), seconds. */
    ttlSeconds?: number;
  }): Promise<{ token: string; expiresAt: number }>;
  /**
   * The public keys access tokens are verified with, as a JWKS: the signing key's and the
   * previous keys' (no private part, ever). Empty on the HS256 fallback (a secret is not
   * published).
   */
  jwks(): Promise<{ keys: JWK[] }>;
  /** The claims of a valid token, or null for a bad signature, a wrong audience or an expiry. */
  verify(token: string): Promise<AccessClaims | null>;
  /** A Supabase API key (anon or service_role) signed with the same secret; deterministic, so
   * the same secret always gives the same key. */
  apiKey(role: "anon" | "service_role"): Promise<string>;
  /**
   * The `role` claim of a JWT of ours, not expired (HS256 under the secret, or ES256 under the
   * signing keys): "service_role" for the service key, "anon" for the anon key, "authenticated"
   * for an access token; null when the token is not one of ours.
   */
  roleOf(token: string): Promise<string | null>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in its text form, in either case: what a token's user and session ids must be. */
export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/**
 * The token of an `Authorization: Bearer <token>` header (the scheme in any case, RFC 9110), or
 * null. Only the scheme is parsed: whatever follows is checked by the signature, and this runs
 * on every request (a regular expression over the whole token was measurable there).
 */
export function bearerToken(authorization: string | undefined): string | null {
  if (!authorization || authorization.length < 8) return null;
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return null;
  const separator = authorization.charCodeAt(6);
  if (separator !== 32 && separator !== 9) return null; // a space or a tab
  return authorization.slice(7).trim() || null;
}

const VERIFIED_CACHE_SIZE = 10_000;

/** The keys of an ES256 setup: the private signing key and earlier public keys still accepted. */
export interface SigningKeys {
  /** A private EC P-256 JWK (`d` included); `kid` from the JWK, else its RFC 7638 thumbprint. */
  current: JWK;
  /** Public EC P-256 JWKs of earlier signing keys (any private part is dropped). */
  previous: JWK[];
}

/** The public half of an EC JWK, with its `kid` (the JWK's, else its thumbprint) and `alg`. */
export async function publicJwk(jwk: JWK): Promise<JWK & { kid: string }> {
  const { kty, crv, x, y } = jwk;
  const kid = jwk.kid ?? await calculateJwkThumbprint({ kty, crv, x, y });
  return { kty, crv, x, y, kid, alg: "ES256", use: "sig" };
}

export function createTokenIssuer(
  secret: string,
  ttlSeconds: number,
  issuer: string,
  signing: SigningKeys | null = null,
): TokenIssuer {
  // Imported once: with raw bytes, jose would import the key again on every sign and verify.
  const keyPromise = crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  const es256 = signing
    ? (async () => {
      const current = await publicJwk(signing.current);
      // The same kid twice (a key listed as current and previous) is published once.
      const previous = (await Promise.all(signing.previous.map(publicJwk)))
        .filter((key) => key.kid !== current.kid);
      const keys = [current, ...previous];
      return {
        kid: current.kid,
        privateKey: await importJWK({ ...signing.current, alg: "ES256" }, "ES256"),
        jwks: { keys },
        verifyKey: createLocalJWKSet({ keys }),
      };
    })()
    : null;
  const verified = new Map<string, AccessClaims>();
  return {
    async issue({ userId, sessionId, email, userRole, authTime, provider, ...rest }) {
      const iat = Math.floor(Date.now() / 1000);
      const exp = iat + (rest.ttlSeconds ?? ttlSeconds);
      const es = es256 ? await es256 : null;
      const token = await new SignJWT({
        role: "authenticated",
        session_id: sessionId,
        // Supabase's tokens carry "" for an account without an address.
        email: email ?? "",
        user_role: userRole,
        auth_time: authTime,
        amr: [provider],
        aal: "aal1",
        is_anonymous: false,
      })
        .setProtectedHeader(
          es ? { alg: "ES256", typ: "JWT", kid: es.kid } : { alg: "HS256", typ: "JWT" },
        )
        .setSubject(userId)
        .setAudience("authenticated")
        .setIssuer(issuer)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(es ? es.privateKey : await keyPromise);
      return { token, expiresAt: exp };
    },
    async jwks() {
      return es256 ? structuredClone((await es256).jwks) : { keys: [] };
    },
    async verify(token) {
      // Tokens already verified are remembered until they expire: a signature does not change,
      // and what can change (signout, suspension, roles) is read from the database on every
      // request anyway. Bounded: the oldest entries go first.
      const known = verified.get(token);
      if (known) {
        if (known.exp > Date.now() / 1000) return known;
        verified.delete(token);
        return null;
      }
      try {
        // One algorithm at a time: with a signing key, an HS256 token (signed with a secret the
        // hosted project also knows) is not one of ours.
        const options = { audience: "authenticated", issuer };
        const { payload } = es256
          ? await jwtVerify(token, (await es256).verifyKey, { ...options, algorithms: ["ES256"] })
          : await jwtVerify(token, await keyPromise, { ...options, algorithms: ["HS256"] });
        // The ids name rows: anything but a UUID names none, whatever signed it, so every
        // caller of a verified token (the session lookup, a statement that checks the session
        // itself) can take them as UUIDs.
        if (
          !isUuid(payload.sub) || !isUuid(payload.session_id) || payload.role !== "authenticated"
        ) return null;
        const claims = payload as unknown as AccessClaims;
        if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!);
        verified.set(token, claims);
        return claims;
      } catch {
        return null;
      }
    },
    async apiKey(role) {
      return new SignJWT({ role })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer("supabase")
        .setIssuedAt(API_KEY_ISSUED_AT)
        .setExpirationTime(API_KEY_EXPIRES_AT)
        .sign(await keyPromise);
    },
    async roleOf(token) {
      try {
        // The API keys are HS256; an access token is "one of ours" signed either way.
        const { payload } = es256
          ? await jwtVerify(
            token,
            async (header, jws) =>
              header.alg === "HS256" ? await keyPromise : (await es256).verifyKey(header, jws),
            { algorithms: ["HS256", "ES256"] },
          )
          : await jwtVerify(token, await keyPromise, { algorithms: ["HS256"] });
        return typeof payload.role === "string" ? payload.role : null;
      } catch {
        return null;
      }
    },
  };
}
