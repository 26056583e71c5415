/**
 * A small indicator of how live events reach the page: over the WebSocket, or the fallbacks
 * (SSE, long-polling) the transport moved to when the one above kept failing.
 */
import { liveStatus } from "../lib/live.ts";
import { useStore } from "../lib/store.ts";

const LABELS: Record<string, { short: string; long: string }> = {
  websocket: { short: "Live", long: "Live over WebSocket" },
  sse: { short: "Live (SSE)", long: "Live over Server-Sent Events (WebSocket unavailable)" },
  poll: { short: "Live (polling)", long: "Live over long-polling (WebSocket and SSE unavailable)" },
  connecting: { short: "Connecting…", long: "Connecting to live updates" },
  off: { short: "Offline", long: "Live updates are off" },
};

export function LiveIndicator() {
  const status = useStore(liveStatus);
  const label = LABELS[status.kind];
  return (
    <span
      class={`live live-${status.kind}`}
      role="status"
      data-testid="live-status"
      data-transport={status.kind}
      title={status.error ? `${label.long}. ${status.error}` : label.long}
    >
      <span class="live-dot" aria-hidden="true" />
      <span class="visually-hidden">{label.long}</span>
      <span aria-hidden="true">{label.short}</span>
    </span>
  );
}
