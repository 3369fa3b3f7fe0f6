// Terminal streams read the way a client does: SSE bodies parsed block by block (every event
// checked against the contract), a settled terminal's display, and the original bytes of a run
// of output events.
import { expect } from "vitest";
import type { TerminalDisplayEvent, TerminalOutputEvent, TerminalStreamEvent } from "../../clients/index.js";
import { checkSseEvent } from "./contract.js";

/** Reads an SSE response until it ends or `stop` accepts an event; every event is checked against the contract. */
export async function readSse<T>(response: Response, pathname: string, stop: (event: T) => boolean = () => false): Promise<T[]> {
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: T[] = [];
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return events;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split("\n").find((line) => line.startsWith("data: "));
        if (!data) continue;
        const event = JSON.parse(data.slice(6)) as T;
        checkSseEvent("GET", pathname, event);
        events.push(event);
        if (stop(event)) return events;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The durable display of a settled terminal (`readTerminalDisplay`): begin, rows, end. */
export async function terminalDisplay(harness: { fetch: (request: Request) => Promise<Response> }, server: string, sessionId: string, terminalId: string): Promise<TerminalDisplayEvent[]> {
  const path = `/v1/servers/${server}/sessions/${sessionId}/terminals/${terminalId}/display`;
  return readSse<TerminalDisplayEvent>(await harness.fetch(new Request(`http://localhost${path}`)), path);
}

/** The original bytes of the `terminal.data` events among `events`, as UTF-8. */
export const terminalBytes = (events: readonly (TerminalStreamEvent | TerminalOutputEvent)[]): string =>
  Buffer.concat(events.flatMap((event) => (event.type === "terminal.data" ? [Buffer.from(event.dataBase64, "base64")] : []))).toString("utf8");
