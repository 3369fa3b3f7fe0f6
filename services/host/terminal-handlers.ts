// Binds the contract's terminal operations to the host's TerminalHost: JSON reads and writes,
// the live output stream (`terminal.ready`, then every item after the cursor through
// `terminal.closed`) and the settled display stream (begin, row batches, end).
import type { SseMessage, Handlers } from "../../generated/server/routes.js";
import type { TerminalDisplayEvent, TerminalDisplayRow, TerminalStreamEvent } from "../../generated/client/types.gen.js";
import { validationFailure } from "../contract/failure.js";
import type { RequestContext } from "../http/handler.js";
import { OUTPUT_PAGE_ITEMS, type TerminalHost } from "./terminals.js";

type TerminalOperations = Pick<
  Handlers<RequestContext>,
  | "openTerminal"
  | "listTerminals"
  | "getTerminal"
  | "writeTerminalInput"
  | "resizeTerminal"
  | "closeTerminal"
  | "readTerminalOutput"
  | "watchTerminalOutput"
  | "readTerminalDisplay"
>;

/** Display rows per `terminal.display.rows` event, bounded well under the 1 MiB SSE event limit. */
const DISPLAY_BATCH_BYTES = 256 * 1024;

function sequenceOf(value: string | undefined, name: string): number {
  if (value === undefined) return 0;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value)) throw validationFailure(`Invalid request: ${name} must be a non-negative integer`);
  return Number(value);
}

const rowCost = (row: TerminalDisplayRow): number => 48 + row.cells.reduce((total, cell) => total + 28 + cell.text.length, 0);

export function terminalHandlers(terminals: TerminalHost): TerminalOperations {
  return {
    openTerminal: async ({ path, body }) => ({ status: 200, body: { terminal: await terminals.open(path.server, path.sessionId, path.terminalId, body) } }),
    listTerminals: async ({ path }) => ({ status: 200, body: { terminals: await terminals.list(path.server, path.sessionId) } }),
    getTerminal: async ({ path }) => ({ status: 200, body: { terminal: await terminals.get(path.server, path.sessionId, path.terminalId) } }),
    writeTerminalInput: async ({ path, body }) => ({ status: 200, body: { terminal: await terminals.write(path.server, path.sessionId, path.terminalId, body) } }),
    resizeTerminal: async ({ path, body }) => ({ status: 200, body: { terminal: await terminals.resize(path.server, path.sessionId, path.terminalId, body) } }),
    closeTerminal: async ({ path, body }) => ({ status: 200, body: { terminal: await terminals.close(path.server, path.sessionId, path.terminalId, body.signal) } }),
    readTerminalOutput: async ({ path, query }) => ({ status: 200, body: await terminals.page(path.server, path.sessionId, path.terminalId, sequenceOf(query?.after, "after")) }),
    watchTerminalOutput: async ({ path, query, headers }, context) => {
      const lastEventId = headers?.["last-event-id"];
      const after = sequenceOf(lastEventId ?? query?.after, lastEventId !== undefined ? "Last-Event-ID" : "after");
      const { terminal, log } = await terminals.output(path.server, path.sessionId, path.terminalId);
      async function* stream(): AsyncGenerator<SseMessage<TerminalStreamEvent>> {
        yield { id: String(after), event: "terminal.ready", data: { type: "terminal.ready", sequence: after, terminal } };
        let cursor = after;
        for (;;) {
          let wake: (() => void) | undefined;
          const appended = new Promise<void>((resolve) => (wake = resolve));
          const unsubscribe = log.subscribe(() => wake?.());
          const onAbort = () => wake?.();
          context.signal.addEventListener("abort", onAbort, { once: true });
          try {
            const items = log.itemsAfter(cursor, OUTPUT_PAGE_ITEMS);
            for (const item of items) {
              cursor = item.sequence;
              yield { id: String(item.sequence), event: item.type, data: item };
              if (item.type === "terminal.closed") return;
            }
            if (context.signal.aborted) return;
            if (items.length === 0) await appended;
          } finally {
            unsubscribe();
            context.signal.removeEventListener("abort", onAbort);
          }
        }
      }
      return { status: 200, stream: stream() };
    },
    readTerminalDisplay: async ({ path }) => {
      const display = await terminals.display(path.server, path.sessionId, path.terminalId);
      async function* stream(): AsyncGenerator<SseMessage<TerminalDisplayEvent>> {
        const { rows, ...meta } = display;
        yield {
          event: "terminal.display.begin",
          data: {
            type: "terminal.display.begin",
            terminalId: path.terminalId,
            revision: 1,
            size: meta.size,
            cursor: meta.cursor,
            palette: [...meta.palette],
            styles: [...meta.styles],
            modes: meta.modes,
            rowCount: rows.length,
            truncated: meta.truncated,
          },
        };
        let batch: TerminalDisplayRow[] = [];
        let size = 0;
        for (const row of rows) {
          const cost = rowCost(row);
          if (batch.length > 0 && size + cost > DISPLAY_BATCH_BYTES) {
            yield { event: "terminal.display.rows", data: { type: "terminal.display.rows", rows: batch } };
            batch = [];
            size = 0;
          }
          batch.push(row);
          size += cost;
        }
        if (batch.length > 0) yield { event: "terminal.display.rows", data: { type: "terminal.display.rows", rows: batch } };
        yield { event: "terminal.display.end", data: { type: "terminal.display.end", revision: 1, rowCount: rows.length } };
      }
      return { status: 200, stream: stream() };
    },
  };
}
