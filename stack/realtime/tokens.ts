/**
 * JWT checks as the Realtime server makes them, with its error texts: HS256 under the project's
 * secret, `role` and `exp` required, expiry reported in seconds.
 */
import { decodeJwt, errors, jwtVerify } from "jose";

export type Claims = Record<string, unknown> & { role: string; exp: number; sub?: string };

export type TokenCheck =
  | { ok: true; claims: Claims }
  | { ok: false; code: "expired" | "malformed" | "signature" | "missing_claims"; message: string };

export const MISSING_CLAIMS = "Fields `role` and `exp` are required in JWT";

export function createTokenChecker(secret: string): (token: unknown) => Promise<TokenCheck> {
  const key = new TextEncoder().encode(secret);
  return async (token) => {
    if (typeof token !== "string" || token.split(".").length !== 3) {
      return { ok: false, code: "malformed", message: "The token provided is not a valid JWT" };
    }
    try {
      const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"] });
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
      if (err instanceof errors.JWSSignatureVerificationFailed) {
        return { ok: false, code: "signature", message: "Failed to validate JWT signature" };
      }
      return { ok: false, code: "malformed", message: "The token provided is not a valid JWT" };
    }
  };
}
