/**
 * A bare Phoenix-protocol client for tests that need to see the frames themselves (protocol
 * versions, refs, binary frames, errors): no reconnects, no heartbeats unless sent explicitly.
 */
export interface RawFrame {
  joinRef: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
  binary?: Uint8Array;
}

export class RawClient {
  private frames: RawFrame[] = [];
  private waiters: (() => void)[] = [];
  closed = false;
  closeCode?: number;
  private constructor(readonly ws: WebSocket, readonly vsn: "1.0.0" | "2.0.0") {}

  static open(url: string, vsn: "1.0.0" | "2.0.0"): Promise<RawClient> {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    const client = new RawClient(ws, vsn);
    ws.onmessage = (e) => client.receive(e.data);
    ws.onclose = (e) => {
      client.closed = true;
      client.closeCode = e.code;
      client.wake();
    };
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(client);
      ws.onerror = () => reject(new Error(`websocket to ${url} failed`));
    });
  }

  private wake() {
    this.waiters.splice(0).forEach((w) => w());
  }

  private receive(data: string | ArrayBuffer) {
    if (typeof data !== "string") {
      const bytes = new Uint8Array(data);
      const [kind, topicLen, eventLen, metaLen, encoding] = bytes;
      const decoder = new TextDecoder();
      let offset = 5;
      const topic = decoder.decode(bytes.subarray(offset, offset += topicLen));
      const event = decoder.decode(bytes.subarray(offset, offset += eventLen));
      const meta = metaLen
        ? JSON.parse(decoder.decode(bytes.subarray(offset, offset += metaLen)))
        : undefined;
      const body = bytes.slice(offset);
      const payload = encoding === 1 ? JSON.parse(decoder.decode(body)) : null;
      this.frames.push({
        joinRef: null,
        ref: null,
        topic,
        event: "broadcast",
        payload: { type: "broadcast", event, payload, ...(meta ? { meta } : {}), kind },
        binary: encoding === 0 ? body : undefined,
      });
    } else if (this.vsn === "2.0.0") {
      const [joinRef, ref, topic, event, payload] = JSON.parse(data);
      this.frames.push({ joinRef, ref, topic, event, payload });
    } else {
      const m = JSON.parse(data);
      this.frames.push({
        joinRef: m.join_ref ?? null,
        ref: m.ref,
        topic: m.topic,
        event: m.event,
        payload: m.payload,
      });
    }
    this.wake();
  }

  send(joinRef: string | null, ref: string | null, topic: string, event: string, payload: unknown) {
    this.ws.send(
      this.vsn === "2.0.0"
        ? JSON.stringify([joinRef, ref, topic, event, payload])
        : JSON.stringify({ join_ref: joinRef, ref, topic, event, payload }),
    );
  }

  sendBinary(bytes: Uint8Array) {
    this.ws.send(bytes);
  }

  /** The next frame matching `match`, or null after `ms`; frames before it are discarded. */
  async next(match: (f: RawFrame) => boolean = () => true, ms = 2_000): Promise<RawFrame | null> {
    const deadline = Date.now() + ms;
    while (true) {
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(0, index + 1)[index];
      const remaining = deadline - Date.now();
      if (remaining <= 0 || this.closed) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Like next(), but takes only the matching frame: the frames received before it stay. */
  async take(match: (f: RawFrame) => boolean, ms = 2_000): Promise<RawFrame | null> {
    const deadline = Date.now() + ms;
    while (true) {
      const index = this.frames.findIndex(match);
      if (index >= 0) return this.frames.splice(index, 1)[0];
      const remaining = deadline - Date.now();
      if (remaining <= 0 || this.closed) return null;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The frames received and not yet taken, without waiting or consuming them. */
  pending(): RawFrame[] {
    return [...this.frames];
  }

  reply(ref: string, ms?: number) {
    return this.next((f) => f.event === "phx_reply" && f.ref === ref, ms);
  }

  async join(topic: string, ref: string, payload: Record<string, unknown>) {
    this.send(ref, ref, topic, "phx_join", payload);
    return await this.reply(ref);
  }

  close() {
    if (!this.closed) this.ws.close();
  }
}
