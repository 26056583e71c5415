/**
 * A paced (open-loop) load generator, in a process of its own so that its CPU is not the
 * server's: `users` send GET requests at a fixed total rate, whatever the server answers, and
 * each request's latency counts from when it was due to start, not from when it was sent.
 *
 * wrk's closed loop (send, wait, send again) measures the server at saturation: there, by
 * Little's law, the mean latency is the connections divided by the throughput, so latency only
 * restates throughput. This measures what a user sees at a given load. Request k is due at
 * start + k / rate and goes to user k mod users, each user on a keep-alive connection of its own
 * with one request at a time, as a client would; a request due while its user still waits for
 * the previous answer goes as soon as that answer arrives, and its wait counts (no coordinated
 * omission: a stall shows in every request it delayed).
 *
 * Reads its `PacedLoadConfig` as JSON on stdin, writes its `PacedLoadResult` as JSON on stdout.
 */

export interface PacedLoadConfig {
  url: string;
  /** One bearer token per user. */
  tokens: string[];
  /** Requests per second, all users together. */
  rate: number;
  warmupSeconds: number;
  seconds: number;
}

export interface PacedLoadResult {
  /** Measured answers by status. */
  counts: Record<string, number>;
  /** Milliseconds from when each measured request was due to its last byte. */
  latencies: number[];
  /**
   * Milliseconds from when each measured request was due to when it was sent: this process
   * late (a timer, its own share of the CPU) or the user still waiting for its previous answer.
   */
  sendDelays: number[];
  /** Measured requests per second actually completed. */
  achievedRate: number;
  /** Up to five unexpected answers, for the report. */
  samples: string[];
}

/**
 * One user's keep-alive HTTP/1.1 connection, written by hand: a GET formatted once, answers read
 * by their Content-Length. With `fetch` this process used twice the CPU (39% of a core against
 * 18% at 2,000 requests per second), taken from the same two cores the server runs on.
 */
class Connection {
  #conn: Deno.TcpConn | null = null;
  #buffer = new Uint8Array(1 << 20);
  #request: Uint8Array;
  constructor(private url: URL, token: string) {
    this.#request = new TextEncoder().encode(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Authorization: Bearer ${token}\r\n\r\n`,
    );
  }

  /** Sends the GET and reads its answer: the status and, when it is not 200, the body. */
  async get(): Promise<{ status: number; body: string }> {
    this.#conn ??= await Deno.connect({ hostname: this.url.hostname, port: Number(this.url.port) });
    for (let sent = 0; sent < this.#request.length;) {
      sent += await this.#conn.write(this.#request.subarray(sent));
    }
    let filled = 0;
    let headEnd = -1;
    let total = -1;
    while (total < 0 || filled < total) {
      const n = await this.#conn.read(this.#buffer.subarray(filled));
      if (n === null) throw new Error("the server closed the connection");
      filled += n;
      if (headEnd < 0) {
        headEnd = indexOfBlankLine(this.#buffer, filled);
        if (headEnd < 0) continue;
        const head = new TextDecoder().decode(this.#buffer.subarray(0, headEnd));
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        if (!length) throw new Error(`an answer without Content-Length: ${head}`);
        total = headEnd + 4 + Number(length[1]);
        if (total > this.#buffer.length) throw new Error(`an answer of ${total} bytes`);
      }
    }
    const status = Number(new TextDecoder().decode(this.#buffer.subarray(9, 12)));
    const body = status === 200
      ? ""
      : new TextDecoder().decode(this.#buffer.subarray(headEnd + 4, total));
    return { status, body };
  }

  close() {
    this.#conn?.close();
  }
}

/** Where the header block ends ("\r\n\r\n"), or -1. */
function indexOfBlankLine(bytes: Uint8Array, length: number): number {
  for (let i = 3; i < length; i++) {
    if (bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13) {
      return i - 3;
    }
  }
  return -1;
}

async function run(config: PacedLoadConfig): Promise<PacedLoadResult> {
  const counts: Record<string, number> = {};
  const latencies: number[] = [];
  const sendDelays: number[] = [];
  const samples: string[] = [];
  const users = config.tokens.length;
  const interval = 1000 / config.rate;
  const url = new URL(config.url);
  const start = performance.now() + 100;
  const measureFrom = start + config.warmupSeconds * 1000;
  const stopAt = measureFrom + config.seconds * 1000;
  let measured = 0;
  await Promise.all(config.tokens.map(async (token, user) => {
    const connection = new Connection(url, token);
    try {
      // This user's requests are k = user, user + users, user + 2 users, …
      for (let k = user;; k += users) {
        const due = start + k * interval;
        if (due >= stopAt) break;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const sent = performance.now();
        const { status, body } = await connection.get();
        const done = performance.now();
        if (due < measureFrom) continue;
        measured++;
        counts[status] = (counts[status] ?? 0) + 1;
        latencies.push(done - due);
        sendDelays.push(sent - due);
        if (status !== 200 && samples.length < 5) samples.push(`${status} ${body.slice(0, 200)}`);
      }
    } finally {
      connection.close();
    }
  }));
  const lastDone = performance.now();
  return {
    counts,
    latencies,
    sendDelays,
    achievedRate: measured / ((Math.max(lastDone, stopAt) - measureFrom) / 1000),
    samples,
  };
}

if (import.meta.main) {
  const config = JSON.parse(await new Response(Deno.stdin.readable).text()) as PacedLoadConfig;
  console.log(JSON.stringify(await run(config)));
}
