/**
 * The wallet key's export, decrypted in the browser. The page makes a one-time P-256 key pair
 * (WebCrypto; the private half is not extractable and lives only in this tab's memory), sends the
 * public half as a JWK, and gets back a compact JWE with `alg` ECDH-ES (direct key agreement) and
 * `enc` A256GCM (RFC 7516, RFC 7518 §4.6), which this module opens with WebCrypto alone:
 *
 *   Z   = ECDH(our private key, the sender's ephemeral public key `epk`)
 *   CEK = SHA-256(00000001 ‖ Z ‖ OtherInfo)  (Concat KDF, one round gives the 256 bits A256GCM needs)
 *   OtherInfo = len‖"A256GCM" ‖ len‖apu ‖ len‖apv ‖ 00000100 (the key length in bits)
 *   plaintext = AES-256-GCM⁻¹(CEK, iv, ciphertext ‖ tag, AAD = the protected header as sent)
 */

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function fromB64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(
    Math.ceil(text.length / 4) * 4,
    "=",
  );
  const raw = atob(b64);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function u32(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n);
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

const lengthPrefixed = (bytes: Uint8Array): Uint8Array<ArrayBuffer> =>
  concat(u32(bytes.length), bytes);

export interface OneTimeKey {
  publicJwk: JsonWebKey;
  privateKey: CryptoKey;
}

/** A fresh P-256 key pair for one export. */
export async function oneTimeKey(): Promise<OneTimeKey> {
  const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, false, [
    "deriveBits",
  ]);
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  return {
    publicJwk: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y },
    privateKey: pair.privateKey,
  };
}

/** Opens a compact ECDH-ES / A256GCM JWE with `privateKey`; the plaintext as text. */
export async function decryptCompactJwe(jwe: string, privateKey: CryptoKey): Promise<string> {
  const parts = jwe.split(".");
  if (parts.length !== 5) throw new Error("Not a compact JWE.");
  const [protectedB64, encryptedKey, ivB64, ciphertextB64, tagB64] = parts;
  const header = JSON.parse(decoder.decode(fromB64url(protectedB64)));
  if (header.alg !== "ECDH-ES" || header.enc !== "A256GCM") {
    throw new Error(`Unexpected JWE algorithms ${header.alg} / ${header.enc}.`);
  }
  if (encryptedKey !== "") throw new Error("ECDH-ES (direct) carries no encrypted key.");
  const epk = header.epk as JsonWebKey | undefined;
  if (!epk || epk.kty !== "EC" || epk.crv !== "P-256") throw new Error("No P-256 `epk`.");
  const senderKey = await crypto.subtle.importKey(
    "jwk",
    { kty: "EC", crv: "P-256", x: epk.x, y: epk.y },
    { name: "ECDH", namedCurve: "P-256" },
    false,
    [],
  );
  const z = new Uint8Array(
    await crypto.subtle.deriveBits({ name: "ECDH", public: senderKey }, privateKey, 256),
  );
  const otherInfo = concat(
    lengthPrefixed(encoder.encode(header.enc)),
    lengthPrefixed(header.apu ? fromB64url(header.apu) : new Uint8Array()),
    lengthPrefixed(header.apv ? fromB64url(header.apv) : new Uint8Array()),
    u32(256),
  );
  const cekBytes = new Uint8Array(
    await crypto.subtle.digest("SHA-256", concat(u32(1), z, otherInfo)),
  );
  const cek = await crypto.subtle.importKey("raw", cekBytes, "AES-GCM", false, ["decrypt"]);
  cekBytes.fill(0);
  z.fill(0);
  const plaintext = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: fromB64url(ivB64),
      additionalData: encoder.encode(protectedB64),
      tagLength: 128,
    },
    cek,
    concat(fromB64url(ciphertextB64), fromB64url(tagB64)),
  );
  return decoder.decode(plaintext);
}
