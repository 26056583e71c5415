/**
 * The FCM stand-in (tests/support/fcm-stand-in.ts) in a process of its own, for the
 * notifications benchmark: the drain's pushes then cross a real process boundary, and the
 * stand-in's work does not share the server's event loop. Prints one JSON line
 * `{ url, serviceAccountJson }` and serves until stdin closes or it is signalled.
 */
import { startFcmStandIn } from "../support/fcm-stand-in.ts";

const standIn = await startFcmStandIn("agora-bench");
console.log(JSON.stringify({ url: standIn.url, serviceAccountJson: standIn.serviceAccountJson }));
const stop = async () => {
  await standIn.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGTERM", () => void stop());
Deno.addSignalListener("SIGINT", () => void stop());
// The parent's end of stdin closes when it exits, however it ended.
for await (const _ of Deno.stdin.readable) {
  // nothing is read; the loop ends at EOF
}
await stop();
