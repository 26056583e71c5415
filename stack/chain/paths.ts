/** Where the chain's files live in the checkout (kept here so the chain modules need no stack import). */
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CONTRACTS_DIR = join(ROOT, "contracts");
export const NODE_MODULES = join(ROOT, "node_modules");
export const ANVIL_BIN = join(NODE_MODULES, "@foundry-rs", "anvil-linux-amd64", "bin", "anvil");
