/**
 * One wallet's writes, one at a time in this process. A wallet's transfers are serialized in
 * Postgres anyway (the wallet row lock of `create_wallet_transfer`, the nonce row of
 * `allocate_wallet_nonce`), which stays the rule across processes; but a request waiting there
 * holds one of the pool's few connections while it waits, and ten confirms of one wallet could
 * take every connection from the other wallets' requests. Queued here first, they wait without a
 * connection, and the other wallets go on.
 */
const tails = new Map<string, Promise<void>>();

/** Runs `fn` once the earlier calls for `walletKey` in this process have finished. */
export async function inWalletQueue<T>(walletKey: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(walletKey) ?? Promise.resolve();
  const run = previous.then(fn);
  const tail = run.then(() => {}, () => {});
  tails.set(walletKey, tail);
  try {
    return await run;
  } finally {
    if (tails.get(walletKey) === tail) tails.delete(walletKey);
  }
}
