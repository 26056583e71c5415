/**
 * The ERC-1271 contract wallet that wallet sign-in tests use: viem's `verifyMessage`, `verifyHash`
 * and `verifySiweMessage` accept its owner's signature and refuse another signer's, a tampered
 * message and a malformed signature; the contract answers the magic value only for its owner.
 */
import assert from "node:assert/strict";
import { type Address, hashMessage, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage, generateSiweNonce, verifySiweMessage } from "viem/siwe";
import { compileContracts } from "../../stack/chain/compile.ts";
import { deployOwnerWallet } from "../../stack/chain/deploy.ts";
import { test } from "../support/helpers.ts";
import { publicClient, testRpcUrl } from "./support.ts";

const owner = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
let deployed: Promise<Address> | null = null;
const contractWallet = () =>
  deployed ??= deployOwnerWallet({ rpcUrl: testRpcUrl(), owner: owner.address });

test("[chain] ERC-1271: viem verifies the owner's signature for the contract wallet and refuses others", async () => {
  const wallet = await contractWallet();
  const client = publicClient();
  const message = "Sign in to Agora";
  const signed = await owner.signMessage({ message });
  const forged = await stranger.signMessage({ message });

  assert.equal(await client.verifyMessage({ address: wallet, message, signature: signed }), true);
  assert.equal(await client.verifyMessage({ address: wallet, message, signature: forged }), false);
  assert.equal(
    await client.verifyMessage({
      address: wallet,
      message: "Sign in to Agora!",
      signature: signed,
    }),
    false,
    "a signature of another message",
  );
  const hash = hashMessage(message);
  assert.equal(await client.verifyHash({ address: wallet, hash, signature: signed }), true);
  assert.equal(await client.verifyHash({ address: wallet, hash, signature: forged }), false);
  assert.equal(
    await client.verifyHash({ address: wallet, hash, signature: signed.slice(0, 130) as Hex }),
    false,
    "a truncated signature",
  );
  // The owner's own address still verifies as an EOA: the contract wallet is a separate account.
  assert.equal(
    await client.verifyMessage({ address: owner.address, message, signature: signed }),
    true,
  );
});

test("[chain] ERC-1271: isValidSignature answers the magic value for the owner only, and never reverts on bad input", async () => {
  const wallet = await contractWallet();
  const client = publicClient();
  const { abi } = (await compileContracts()).artifacts.contracts.OwnerWallet;
  const hash = hashMessage("hello");
  const check = (signature: Hex) =>
    client.readContract({
      address: wallet,
      abi,
      functionName: "isValidSignature",
      args: [hash, signature],
    });
  assert.equal(await check(await owner.signMessage({ message: "hello" })), "0x1626ba7e");
  assert.equal(await check(await stranger.signMessage({ message: "hello" })), "0xffffffff");
  assert.equal(await check("0x"), "0xffffffff");
  assert.equal(await check(`0x${"00".repeat(65)}`), "0xffffffff");
  assert.equal(
    await client.readContract({ address: wallet, abi, functionName: "owner" }),
    owner.address,
  );
});

test("[chain] ERC-1271: a Sign-In with Ethereum message from the contract wallet verifies through viem", async () => {
  const wallet = await contractWallet();
  const client = publicClient();
  const nonce = generateSiweNonce();
  const message = createSiweMessage({
    address: wallet,
    chainId: 31337,
    domain: "localhost:54321",
    nonce,
    uri: "http://localhost:54321",
    version: "1",
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + 5 * 60_000),
  });
  const signature = await owner.signMessage({ message });
  const verify = (sig: Hex, extra: { domain?: string; nonce?: string } = {}) =>
    verifySiweMessage(client, {
      message,
      signature: sig,
      domain: extra.domain ?? "localhost:54321",
      nonce: extra.nonce ?? nonce,
    });
  assert.equal(await verify(signature), true);
  assert.equal(await verify(await stranger.signMessage({ message })), false, "wrong signer");
  assert.equal(await verify(signature, { domain: "evil.example" }), false, "wrong domain");
  assert.equal(await verify(signature, { nonce: generateSiweNonce() }), false, "wrong nonce");
});
