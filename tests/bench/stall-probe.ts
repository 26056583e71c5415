/**
 * A process that does nothing but watch its own timer, to tell the machine's stalls from the
 * server's. On a shared virtual machine the host sometimes stops every process of the guest for
 * milliseconds at a time; a timer in the server's own event loop cannot tell that from its own
 * work or its garbage collector, an idle process can: when it is late, so was everyone.
 *
 * Reads its `StallProbeConfig` as JSON on stdin, watches every `everyMs` from `skipSeconds` for
 * `seconds`, and writes its `StallProbeResult` as JSON on stdout.
 */

export interface StallProbeConfig {
  /** Not watched first (the load's warm-up). */
  skipSeconds: number;
  seconds: number;
  everyMs: number;
  /** Lateness counted as a stall, in milliseconds. */
  stallMs: number;
}

export interface StallProbeResult {
  /** How late the timer was, in milliseconds, each time it was late by more than `stallMs`. */
  stalls: number[];
}

if (import.meta.main) {
  const config: StallProbeConfig = JSON.parse(await new Response(Deno.stdin.readable).text());
  await new Promise((resolve) => setTimeout(resolve, config.skipSeconds * 1000));
  const stalls: number[] = [];
  const end = performance.now() + config.seconds * 1000;
  let tick = performance.now();
  await new Promise<void>((resolve) => {
    const id = setInterval(() => {
      const now = performance.now();
      const late = now - tick - config.everyMs;
      if (late > config.stallMs) stalls.push(late);
      tick = now;
      if (now >= end) {
        clearInterval(id);
        resolve();
      }
    }, config.everyMs);
  });
  const result: StallProbeResult = { stalls };
  console.log(JSON.stringify(result));
}
