/**
 * Custody of the wallets' private keys (docs/wallet.md, "Key custody"): envelope encryption with
 * Web Crypto's AES-256-GCM.
 *
 * - Each wallet's private key (32 bytes from the CSPRNG) is sealed under a data key of its own
 *   (32 random bytes), and the data key is sealed under the master key (`AGORA_WALLET_MASTER_KEY`,
 *   never in the database). Both seals are `iv (12 bytes) ‖ ciphertext ‖ tag (16 bytes)` with a
 *   fresh random IV, and both bind the wallet's id and address as additional authenticated data
 *   (the data key's seal also the master key's id): a sealed key copied onto another wallet's row,
 *   or a data key presented under another master key's id, fails to open.
 * - A master key is known by its id: the first 16 hex digits of its SHA-256. A keyring holds the
 *   current key (which seals) and earlier ones (which only open, during a rotation). Rotating
 *   re-seals the data key under the current master key; the private key's ciphertext stays.
 * - Keys are opened only to sign or to export, by the server paths that need them; the bytes are
 *   zeroed once used (the hex string viem signs with cannot be, and is dropped at once). Nothing
 *   here logs or returns a key.
 */
import { getAddress, type Hex, toHex } from "viem";
import { privateKeyToAddress } from "viem/accounts";
import type { Settings } from "../../_shared/settings.ts";

declare module "../core/context.ts" {
  interface Deps {
    /** The wallet master keys (`AGORA_WALLET_MASTER_KEY`); null when none is set (local mode only). */
    walletKeys: Promise<WalletKeyring> | null;
  }
}

export const SCHEME = "v1";

export interface MasterKey {
  id: string;
  key: CryptoKey;
}

/** The master keys a process holds: `current` seals; every key in `byId` opens. */
export interface WalletKeyring {
  current: MasterKey;
  byId: Map<string, MasterKey>;
}

/** What the database stores for a wallet (app_private.wallet_keys). */
export interface SealedKey {
  keyId: string;
  wrappedDataKey: Uint8Array;
  encryptedPrivateKey: Uint8Array;
}

const encoder = new TextEncoder();
const IV_BYTES = 12;

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The id of a master key: the first 16 hex digits of its SHA-256 (never the key itself). */
export async function masterKeyId(raw: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", raw as Uint8Array<ArrayBuffer>),
  );
  return hex(digest).slice(0, 16);
}

async function importAes(raw: Uint8Array, usages: KeyUsage[]): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    raw as Uint8Array<ArrayBuffer>,
    { name: "AES-GCM" },
    false,
    usages,
  );
}

async function masterKey(raw: Uint8Array): Promise<MasterKey> {
  return { id: await masterKeyId(raw), key: await importAes(raw, ["encrypt", "decrypt"]) };
}

/**
 * The keyring from raw master keys: `current` seals new wallets and rotations, `previous` keys
 * still open the data keys they sealed.
 */
export async function createKeyring(
  current: Uint8Array,
  previous: Uint8Array[] = [],
): Promise<WalletKeyring> {
  const sealing = await masterKey(current);
  const byId = new Map<string, MasterKey>([[sealing.id, sealing]]);
  for (const raw of previous) {
    const key = await masterKey(raw);
    if (!byId.has(key.id)) byId.set(key.id, key);
  }
  return { current: sealing, byId };
}

/** The keyring of the settings, or null when no master key is set (local mode without one). */
export function keyringFromSettings(settings: Settings): Promise<WalletKeyring> | null {
  if (!settings.walletMasterKey) return null;
  return createKeyring(settings.walletMasterKey, settings.walletPreviousMasterKeys);
}

const privateKeyAad = (walletId: string, address: string) =>
  encoder.encode(`agora-wallet:${SCHEME}:private-key:${walletId}:${address.toLowerCase()}`);
const dataKeyAad = (walletId: string, address: string, keyId: string) =>
  encoder.encode(`agora-wallet:${SCHEME}:data-key:${walletId}:${address.toLowerCase()}:${keyId}`);

async function seal(key: CryptoKey, plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: aad as Uint8Array<ArrayBuffer> },
      key,
      plaintext as Uint8Array<ArrayBuffer>,
    ),
  );
  const out = new Uint8Array(IV_BYTES + sealed.length);
  out.set(iv);
  out.set(sealed, IV_BYTES);
  return out;
}

async function open(key: CryptoKey, blob: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(
    await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: blob.slice(0, IV_BYTES),
        additionalData: aad as Uint8Array<ArrayBuffer>,
      },
      key,
      blob.slice(IV_BYTES),
    ),
  );
}

/**
 * A new secp256k1 private key from the CSPRNG (`crypto.getRandomValues`), drawn again in the
 * (astronomically unlikely) case it is not a valid scalar.
 */
export function newPrivateKey(): Uint8Array {
  for (;;) {
    const candidate = crypto.getRandomValues(new Uint8Array(32));
    const scalar = BigInt(toHex(candidate));
    if (scalar > 0n && scalar < SECP256K1_ORDER) return candidate;
    candidate.fill(0);
  }
}

/** The order of secp256k1's group: a private key is a number in [1, n - 1]. */
const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The EIP-55 address of a private key. */
export function addressOf(privateKey: Uint8Array): string {
  return privateKeyToAddress(toHex(privateKey));
}

/** Seals a private key for a wallet under a fresh data key, itself sealed by the current master key. */
export async function sealPrivateKey(
  ring: WalletKeyring,
  walletId: string,
  address: string,
  privateKey: Uint8Array,
): Promise<SealedKey> {
  const dataKeyBytes = crypto.getRandomValues(new Uint8Array(32));
  try {
    const dataKey = await importAes(dataKeyBytes, ["encrypt"]);
    const encryptedPrivateKey = await seal(dataKey, privateKey, privateKeyAad(walletId, address));
    const wrappedDataKey = await seal(
      ring.current.key,
      dataKeyBytes,
      dataKeyAad(walletId, address, ring.current.id),
    );
    return { keyId: ring.current.id, wrappedDataKey, encryptedPrivateKey };
  } finally {
    dataKeyBytes.fill(0);
  }
}

/** The wallet's data key, opened with the master key its seal names. */
async function openDataKey(
  ring: WalletKeyring,
  walletId: string,
  address: string,
  sealed: SealedKey,
): Promise<Uint8Array> {
  const master = ring.byId.get(sealed.keyId);
  if (!master) {
    throw new Error(
      `wallet ${walletId}: its data key is sealed by master key ${sealed.keyId}, which this ` +
        "process does not hold (AGORA_WALLET_PREVIOUS_MASTER_KEYS)",
    );
  }
  return await open(master.key, sealed.wrappedDataKey, dataKeyAad(walletId, address, sealed.keyId));
}

/**
 * Opens a wallet's private key. Throws (never returning anything) when a seal does not open:
 * another wallet's ciphertext, a tampered row, an unknown master key. The caller zeroes the bytes.
 */
export async function openPrivateKey(
  ring: WalletKeyring,
  walletId: string,
  address: string,
  sealed: SealedKey,
): Promise<Uint8Array> {
  const dataKeyBytes = await openDataKey(ring, walletId, address, sealed);
  try {
    const dataKey = await importAes(dataKeyBytes, ["decrypt"]);
    return await open(dataKey, sealed.encryptedPrivateKey, privateKeyAad(walletId, address));
  } finally {
    dataKeyBytes.fill(0);
  }
}

/**
 * The same private-key ciphertext with its data key sealed again under the current master key
 * (key rotation). The data key is opened with whichever key of the ring sealed it.
 */
export async function rewrapDataKey(
  ring: WalletKeyring,
  walletId: string,
  address: string,
  sealed: SealedKey,
): Promise<SealedKey> {
  const dataKeyBytes = await openDataKey(ring, walletId, address, sealed);
  try {
    const wrappedDataKey = await seal(
      ring.current.key,
      dataKeyBytes,
      dataKeyAad(walletId, address, ring.current.id),
    );
    return {
      keyId: ring.current.id,
      wrappedDataKey,
      encryptedPrivateKey: sealed.encryptedPrivateKey,
    };
  } finally {
    dataKeyBytes.fill(0);
  }
}

/**
 * Runs `fn` with the wallet's private key as the 0x hex viem takes, then zeroes the bytes. The
 * hex string cannot be wiped; it lives only for the call.
 */
export async function withPrivateKey<T>(
  ring: WalletKeyring,
  walletId: string,
  address: string,
  sealed: SealedKey,
  fn: (privateKey: Hex) => Promise<T> | T,
): Promise<T> {
  const bytes = await openPrivateKey(ring, walletId, address, sealed);
  try {
    if (addressOf(bytes) !== getAddress(address)) {
      throw new Error(`wallet ${walletId}: the opened key does not belong to its address`);
    }
    return await fn(toHex(bytes));
  } finally {
    bytes.fill(0);
  }
}
