/**
 * Small crypto helpers over Web Crypto (the same in Deno, on Supabase's edge runtime and in
 * browsers). Tokens are random 32-byte base64url strings; only their SHA-256 hashes are stored.
 */

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A new unguessable token (256 bits). */
export function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** SHA-256 as lowercase hex: how tokens are stored and looked up. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** An HMAC-SHA256 signer bound to one secret; the key is imported once. */
export function hmacSigner(secret: string): (message: string) => Promise<string> {
  const key = crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return async (message) =>
    base64url(new Uint8Array(await crypto.subtle.sign("HMAC", await key, encoder.encode(message))));
}

/** Constant-time string comparison, for tokens and signatures. */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** SHA-256 as base64url: a PKCE S256 code challenge of a verifier (RFC 7636). */
export async function sha256Base64url(text: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text))));
}
