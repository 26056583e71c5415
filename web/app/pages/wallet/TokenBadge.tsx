/** The mark on a custom token that looks like a platform token (same symbol or same name). */
import { useStore } from "../../lib/store.ts";
import { config } from "../../lib/config.ts";
import { Pill } from "../../components/Pill.tsx";
import { lookAlike } from "./network.ts";
import type { Token } from "./types.ts";

export function LookAlikeBadge({ token, all }: { token: Token; all: Token[] }) {
  const brand = useStore(config)?.whiteLabel.brandName ?? "Agora";
  const like = lookAlike(token, all);
  if (!like) return null;
  return (
    <>
      {" "}
      <Pill tone="bad" testId="custom-token-badge">Custom token — not issued by {brand}</Pill>
      {like.symbol && (
        <span class="small warning-text block" role="note" data-testid="custom-token-warning">
          {`Not the ${brand} token ${like.token.symbol}: it only shares its symbol. ` +
            "Check the contract address before trusting it."}
        </span>
      )}
    </>
  );
}
