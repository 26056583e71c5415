/** The brand, in the header and on the sign-in page: the white-label's logo (or initial), name. */
import { useState } from "preact/hooks";
import { config } from "../lib/config.ts";
import { useStore } from "../lib/store.ts";

export function Brand() {
  const cfg = useStore(config);
  const wl = cfg?.whiteLabel;
  const [logoFailed, setLogoFailed] = useState(false);
  return (
    <span class="brand">
      {wl?.logoUrl && !logoFailed
        ? (
          <img
            class="brand-logo"
            src={wl.logoUrl}
            alt=""
            width={28}
            height={28}
            onError={() => setLogoFailed(true)}
          />
        )
        : <span class="brand-mark" aria-hidden="true">{(wl?.brandName ?? "A").slice(0, 1)}</span>}
      <span class="brand-name" data-testid="brand-name">{wl?.brandName ?? "Agora"}</span>
    </span>
  );
}
