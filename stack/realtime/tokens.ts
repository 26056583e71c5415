/**
 * JWT checks as the Realtime server makes them, with its error texts: HS256 under the project's
 * secret (the anon and service keys, and access tokens on the legacy setting) or ES256 under a
 * key of the project's JWKS, found by the header's `kid` (the access tokens signed with
 * `AGORA_JWT_SIGNING_KEY`, as hosted Realtime verifies them against the project's signing keys);
 * `role` and `exp` required, expiry reported in seconds.
 */
import {
  createLocalJWKSet,
  decodeJwt,
  errors,
  type JSONWebKeySet,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";

export type Claims = Record<string, unknown> & { role: string; exp: number; sub?: string };

export type TokenCheck =
  | { ok: true; claims: Claims }
  | { ok: false; code: "expired" | "malformed" | "signature" | "missing_claims"; message: string };

export const MISSING_CLAIMS = "Fields `role` and `exp` are required in JWT";

export function createTokenChecker(
  secret: string,
  /** The public keys ES256 tokens are checked against (none: HS256 only). */
  jwks: () => Promise<JSONWebKeySet> = () => Promise.resolve({ keys: [] }),
): (token: unknown) => Promise<TokenCheck> {
  const hmac = new TextEncoder().encode(secret);
  let keySet: Promise<JWTVerifyGetKey> | null = null;
  const key: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === "HS256") return hmac;
    keySet ??= jwks().then(createLocalJWKSet);
    return (await keySet)(header, token);
  };
  return async (token) => {
    if (typeof token !== "string" || token.split(".").length !== 3) {
      return { ok: false, code: "malformed", message: "The token provided is not a valid JWT" };
    }
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ["HS256", "ES256"] });
      if (typeof payload.role !== "string" || typeof payload.exp !== "number") {
        return { ok: false, code: "missing_claims", message: MISSING_CLAIMS };
      }
      return { ok: true, claims: payload as Claims };
    } catch (err) {
      if (err instanceof errors.JWTExpired) {
        const exp = Number(decodeJwt(token).exp ?? 0);
        const ago = Math.max(0, Math.floor(Date.now() / 1000) - exp);
        return { ok: false, code: "expired", message: `Token has expired ${ago} seconds ago` };
      }
      if (
        err instanceof errors.JWSSignatureVerificationFailed ||
        err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys
      ) {
        return { ok: false, code: "signature", message: "Failed to validate JWT signature" };
      }
      return { ok: false, code: "malformed", message: "The token provided is not a valid JWT" };
    }
  };
}
