/**
 * Sign in with Apple's client secret: not a stored secret but a JWT the client makes for itself,
 * signed ES256 with the team's private key (the .p8 file of AGORA_APPLE_PRIVATE_KEY) under its
 * key id: `iss` the team id, `sub` the client id (the Services ID), `aud` the issuer
 * (https://appleid.apple.com), `iat` now and a short `exp` (Apple accepts up to six months; five
 * minutes is enough for one code exchange and limits what a leaked one is worth). One is made
 * per exchange; the imported key is kept.
 */
import { importPKCS8, SignJWT } from "jose";
import type { AppleSettings } from "../../_shared/settings.ts";

const LIFETIME_SECONDS = 300;
const keys = new Map<string, ReturnType<typeof importPKCS8>>();

/** A fresh client secret for Apple's token endpoint. */
export async function appleClientSecret(settings: AppleSettings): Promise<string> {
  let key = keys.get(settings.privateKey);
  if (!key) {
    key = importPKCS8(settings.privateKey, "ES256");
    keys.set(settings.privateKey, key);
    key.catch(() => keys.delete(settings.privateKey));
  }
  const now = Math.floor(Date.now() / 1000);
  return await new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: settings.keyId })
    .setIssuer(settings.teamId)
    .setSubject(settings.clientId)
    .setAudience(settings.issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + LIFETIME_SECONDS)
    .sign(await key);
}
