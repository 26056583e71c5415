/**
 * Sign-In with Ethereum through a browser wallet (EIP-1193: the provider a wallet extension
 * injects as `window.ethereum`). Loaded only when someone presses the wallet button: it brings
 * viem's EIP-4361 message builder (which writes the address with its EIP-55 checksum). Imported
 * from `viem/siwe` alone: the package's root pulls in its whole client into the chunk.
 *
 * 1. `eth_requestAccounts` (the wallet asks the person), `eth_chainId`;
 * 2. a nonce from GET /api/auth/nonce;
 * 3. the EIP-4361 message for this site (domain and URI of the page's origin, the wallet's chain);
 * 4. `personal_sign` (EIP-191) by the wallet;
 * 5. POST /api/auth/signin { provider: "wallet", message, signature } (with `link` to attach the
 *    wallet to the signed-in account): the session comes back as httpOnly cookies.
 */
import { createSiweMessage } from "viem/siwe";
import { ApiError, client, data, FRESH } from "../../lib/client.ts";

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

/** The injected provider, if a wallet extension put one on the page. */
export function injectedProvider(): Eip1193Provider | null {
  const candidate = (globalThis as { ethereum?: Eip1193Provider }).ethereum;
  return candidate && typeof candidate.request === "function" ? candidate : null;
}

/** A sentence for what went wrong with the wallet (EIP-1193 error codes). */
export class WalletProblem extends Error {}

function walletError(err: unknown): Error {
  if (err instanceof ApiError || err instanceof WalletProblem) return err;
  const code = (err as { code?: number })?.code;
  if (code === 4001) return new WalletProblem("You declined the request in your wallet.");
  if (code === -32002) {
    return new WalletProblem("Your wallet already has a request open: finish it there first.");
  }
  if (code === 4100) return new WalletProblem("Your wallet did not allow this site: unlock it.");
  const message = (err as { message?: string })?.message;
  return new WalletProblem(`The wallet refused: ${message ?? String(err)}`);
}

function utf8Hex(text: string): string {
  return "0x" +
    Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Signs in (or, with `link`, links the wallet to the signed-in account). */
export async function signInWithWallet(opts: { link?: boolean } = {}): Promise<void> {
  const provider = injectedProvider();
  if (!provider) {
    throw new WalletProblem(
      "No browser wallet found on this page. Install or unlock a wallet extension, then reload.",
    );
  }
  let address: `0x${string}`;
  let chainId: number;
  try {
    const accounts = await provider.request({ method: "eth_requestAccounts" }) as string[];
    if (!accounts?.length) throw new WalletProblem("Your wallet shared no account.");
    if (!/^0x[0-9a-fA-F]{40}$/.test(accounts[0])) {
      throw new WalletProblem("Your wallet shared an account that is not an address.");
    }
    address = accounts[0] as `0x${string}`;
    chainId = Number(await provider.request({ method: "eth_chainId" }));
  } catch (err) {
    throw walletError(err);
  }
  const { nonce } = data(await client.GET("/api/auth/nonce", FRESH));
  const message = createSiweMessage({
    domain: location.host,
    address,
    statement: opts.link
      ? "Link this wallet to my account."
      : `Sign in to ${document.title.split(" · ").pop() ?? location.host}.`,
    uri: location.origin,
    version: "1",
    chainId,
    nonce,
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + 5 * 60_000),
  });
  let signature: string;
  try {
    signature = await provider.request({
      method: "personal_sign",
      params: [utf8Hex(message), address],
    }) as string;
  } catch (err) {
    throw walletError(err);
  }
  await client.POST("/api/auth/signin", {
    body: { provider: "wallet", message, signature, ...(opts.link ? { link: true } : {}) },
  });
}
