/**
 * The store benchmark's load generator, in a process of its own (store.ts starts it, so its CPU
 * is not the server's): concurrent buyers checking out in a closed loop (POST /api/store/orders,
 * wait for the answer, post again), each with its own token and keep-alive connection, warm-up
 * first, then a measured window. Reads its `LoadConfig` as JSON on stdin and writes its
 * `LoadResult` as JSON on stdout: statuses and the latency of each measured 201.
 */

export interface LoadConfig {
  base: string;
  tokens: string[];
  productIds: string[];
  warmupSeconds: number;
  seconds: number;
  /** Hot products: the first `hot` get half of the picks, so they sell out. */
  hot: number;
}

export interface LoadResult {
  counts: Record<string, number>;
  latencies: number[];
  measuredSeconds: number;
  /** Up to five unexpected answers, for the report. */
  samples: string[];
}

/** A checkout's items: 1 to 3 distinct products, 1 or 2 of each; half the picks among the hot. */
export function pickItems(productIds: string[], hot: number, random = Math.random) {
  const count = 1 + Math.floor(random() * 3);
  const chosen = new Set<string>();
  while (chosen.size < count) {
    const pool = random() < 0.5 ? hot : productIds.length;
    chosen.add(productIds[Math.floor(random() * pool)]);
  }
  return [...chosen].map((productId) => ({ productId, quantity: 1 + Math.floor(random() * 2) }));
}

async function run(config: LoadConfig): Promise<LoadResult> {
  const counts: Record<string, number> = {};
  const latencies: number[] = [];
  const samples: string[] = [];
  const start = performance.now();
  const measureFrom = start + config.warmupSeconds * 1000;
  const stopAt = measureFrom + config.seconds * 1000;
  await Promise.all(config.tokens.map(async (token) => {
    const client = Deno.createHttpClient({ poolMaxIdlePerHost: 1 });
    try {
      while (performance.now() < stopAt) {
        const sentAt = performance.now();
        const response = await fetch(`${config.base}/api/store/orders`, {
          method: "POST",
          client,
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ items: pickItems(config.productIds, config.hot) }),
        });
        const text = await response.text();
        const done = performance.now();
        if (sentAt < measureFrom || done > stopAt) continue;
        const key = response.status === 422 && text.includes("insufficient_stock")
          ? "422 insufficient_stock"
          : String(response.status);
        counts[key] = (counts[key] ?? 0) + 1;
        if (response.status === 201) latencies.push(done - sentAt);
        else if (key !== "422 insufficient_stock" && samples.length < 5) {
          samples.push(`${response.status} ${text.slice(0, 200)}`);
        }
      }
    } finally {
      client.close();
    }
  }));
  return { counts, latencies, measuredSeconds: config.seconds, samples };
}

if (import.meta.main) {
  const config = JSON.parse(await new Response(Deno.stdin.readable).text()) as LoadConfig;
  console.log(JSON.stringify(await run(config)));
}
