// The typed client's resumable history watcher, in process: a connection cut right after the
// first rows reconnects and resumes after the last row it delivered (Last-Event-ID), so every row
// arrives exactly once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, watchHistory, type HistoryRow, type Reconnecting } from "../../clients/index.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { server } from "../turns/helpers.js";
import { appendEntry } from "../history/helpers.js";

let h: ModelHarness;
beforeAll(async () => {
  h = await startModelHarness();
});
afterAll(async () => {
  await h.close();
});

/** A fetch whose first history stream ends just after its first `history.rows` message. */
function cuttingFetch(inner: (request: Request) => Promise<Response>, seenIds: string[]) {
  let cut = false;
  return async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (request.headers.get("last-event-id")) seenIds.push(request.headers.get("last-event-id")!);
    const response = await inner(request);
    if (cut || !new URL(request.url).pathname.endsWith("/history/events")) return response;
    cut = true;
    const reader = response.body!.getReader();
    let text = "";
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        text += new TextDecoder().decode(value);
        // End the body once a whole rows message went through.
        if (/event: history\.rows\n[^]*?\n\n/.test(text)) {
          await reader.cancel();
          controller.close();
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

describe("watchHistory", () => {
  it("reconnects after a cut and resumes after the last row delivered", async () => {
    const sessionId = await h.createSession();
    await appendEntry(h, sessionId, "one");
    const resumedFrom: string[] = [];
    const client = createZeClient({ baseUrl: "http://localhost", fetch: cuttingFetch(h.fetch, resumedFrom) });
    const rows: HistoryRow[] = [];
    const reconnects: Reconnecting[] = [];
    const controller = new AbortController();
    let wanted!: () => void;
    const allThree = new Promise<void>((resolve) => (wanted = resolve));
    const watching = watchHistory(client, {
      server,
      sessionId,
      signal: controller.signal,
      retryDelayMs: 10,
      onReconnecting: (info) => {
        reconnects.push(info);
        // Written while the watch is away: the resumed connection must deliver them.
        void appendEntry(h, sessionId, "two").then(() => appendEntry(h, sessionId, "three"));
      },
      onEvent: (event) => {
        if (event.type === "history.rows") rows.push(...event.rows);
        if (rows.length >= 3) wanted();
      },
    });
    await allThree;
    controller.abort();
    expect(await watching).toEqual({ sourceSequence: 3, itemIndex: 0 });
    expect(reconnects).toHaveLength(1);
    expect(resumedFrom[0]).toBe("1.0");
    expect(rows.map((row) => row.body.text)).toEqual(["one", "two", "three"]);
  });
});
