// A terminal's output log: every native PTY read and every resize is one record with its own
// sequence (1, 2, …), kept for the terminal's lifetime (no tail eviction). Reads combine adjacent
// data records into items of at most 64 KiB of Base64 (48 KiB raw), each carrying the sequence of
// the last record it holds; a resize is always its own item. `after: N` selects exactly the
// records after N, so a cursor inside a delivered batch still yields its exact suffix.
import type { TerminalOutputEvent, TerminalSize } from "../../../generated/client/types.gen.js";

/** Raw bytes per combined data item: 48 KiB encodes to exactly 64 KiB of Base64. */
export const MAX_DATA_ITEM_BYTES = 48 * 1024;

export type OutputRecord =
  | { readonly sequence: number; readonly kind: "data"; readonly bytes: Buffer }
  | { readonly sequence: number; readonly kind: "resize"; readonly size: TerminalSize }
  | { readonly sequence: number; readonly kind: "closed"; readonly exitCode?: number; readonly signal?: string };

export type OutputListener = () => void;

export class OutputLog {
  readonly #records: OutputRecord[] = [];
  readonly #listeners = new Set<OutputListener>();
  #bytes = 0;

  get last(): number {
    return this.#records.length;
  }

  get closed(): boolean {
    return this.#records.at(-1)?.kind === "closed";
  }

  /** Total raw bytes of data records. */
  get bytes(): number {
    return this.#bytes;
  }

  appendData(bytes: Buffer): void {
    if (this.closed || bytes.byteLength === 0) return;
    this.#bytes += bytes.byteLength;
    // A native read larger than one item (node-pty reads up to 64 KiB) becomes several records.
    for (let offset = 0; offset < bytes.byteLength; offset += MAX_DATA_ITEM_BYTES) {
      this.#push({ sequence: this.#records.length + 1, kind: "data", bytes: bytes.subarray(offset, offset + MAX_DATA_ITEM_BYTES) });
    }
  }

  appendResize(size: TerminalSize): void {
    if (this.closed) return;
    this.#push({ sequence: this.#records.length + 1, kind: "resize", size });
  }

  appendClosed(exit: { readonly exitCode?: number; readonly signal?: string }): void {
    if (this.closed) return;
    this.#push({ sequence: this.#records.length + 1, kind: "closed", ...exit });
  }

  #push(record: OutputRecord): void {
    this.#records.push(record);
    for (const listener of [...this.#listeners]) listener();
  }

  /** Calls `listener` after every appended record until the returned function is called. */
  subscribe(listener: OutputListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Up to `maxItems` items after sequence `after` (0 = from the start). */
  itemsAfter(after: number, maxItems: number): TerminalOutputEvent[] {
    const items: TerminalOutputEvent[] = [];
    let index = Math.max(0, after);
    while (index < this.#records.length && items.length < maxItems) {
      const record = this.#records[index]!;
      if (record.kind === "data") {
        // Combine adjacent data records while the item stays within its budget (appendData keeps
        // every record within it, so a first record always fits).
        const parts: Buffer[] = [];
        let size = 0;
        let sequence = record.sequence;
        while (index < this.#records.length) {
          const next = this.#records[index]!;
          if (next.kind !== "data" || size + next.bytes.byteLength > MAX_DATA_ITEM_BYTES) break;
          parts.push(next.bytes);
          size += next.bytes.byteLength;
          sequence = next.sequence;
          index += 1;
        }
        items.push({ type: "terminal.data", sequence, dataBase64: Buffer.concat(parts, size).toString("base64") });
      } else if (record.kind === "resize") {
        items.push({ type: "terminal.resize", sequence: record.sequence, size: record.size });
        index += 1;
      } else {
        items.push({
          type: "terminal.closed",
          sequence: record.sequence,
          ...(record.exitCode !== undefined ? { exitCode: record.exitCode } : {}),
          ...(record.signal !== undefined ? { signal: record.signal } : {}),
        });
        index += 1;
      }
    }
    return items;
  }
}
