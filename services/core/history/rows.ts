// The wire form of published history rows and the byte arithmetic of their fields: a field's
// first 16 KiB inline (cut at a UTF-8 character boundary), the rest by source reads.
import type { HistoryField, HistoryPosition, HistoryRow, HistoryText } from "../../../generated/client/types.gen.js";
import type { HistoryRowRecord } from "../../storage/index.js";
import { validationFailure } from "../../contract/failure.js";
import { parseCount } from "./query.js";

/** Bytes of each field a page carries inline. */
export const INLINE_FIELD_BYTES = 16 * 1024;

export const FIELDS: readonly HistoryField[] = ["body", "thinking", "toolInput"];

export const positionOf = (row: Pick<HistoryRowRecord, "sourceSequence" | "itemIndex">): HistoryPosition => ({ sourceSequence: row.sourceSequence, itemIndex: row.itemIndex });

/** The field's text on a row, or undefined when the row has no such field. */
export function fieldText(row: HistoryRowRecord, field: HistoryField): string | undefined {
  if (field === "body") return row.body;
  if (field === "thinking") return row.thinking ?? undefined;
  return row.toolInput ?? undefined;
}

/** The longest prefix of `bytes` (from `start`) of at most `budget` bytes that ends at a character boundary. */
export function boundaryEnd(bytes: Buffer, start: number, budget: number): number {
  let end = Math.min(bytes.length, start + budget);
  while (end > start && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return end;
}

export function inlineText(text: string): HistoryText {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= INLINE_FIELD_BYTES) return { text, byteLength: bytes.length, complete: true };
  return { text: bytes.subarray(0, boundaryEnd(bytes, 0, INLINE_FIELD_BYTES)).toString("utf8"), byteLength: bytes.length, complete: false };
}

export function toHistoryRow(row: HistoryRowRecord): HistoryRow {
  const out: HistoryRow = { position: positionOf(row), role: row.role, kind: row.kind, body: inlineText(row.body), createdAt: row.createdAt };
  if (row.turnId !== null) out.turnId = row.turnId;
  if (row.entryId !== null) out.entryId = row.entryId;
  if (row.partId !== null) out.partId = row.partId;
  if (row.thinking !== null) out.thinking = inlineText(row.thinking);
  if (row.toolInput !== null) out.toolInput = inlineText(row.toolInput);
  if (row.tool !== null) out.tool = { toolId: row.tool.toolId, toolCallId: row.tool.toolCallId, state: row.tool.state as NonNullable<HistoryRow["tool"]>["state"], internal: row.tool.internal };
  return out;
}

export function parseField(value: string | undefined, name: string): HistoryField | undefined {
  if (value === undefined) return undefined;
  if (!(FIELDS as readonly string[]).includes(value)) throw validationFailure(`Invalid request: query.${name}: must be one of ${FIELDS.join(", ")}`);
  return value as HistoryField;
}

/** `through`: at most the latest history event; the latest when absent. */
export function parseThrough(value: string | undefined, latest: number, what = "the Session's latest history event"): number {
  const through = parseCount(value, "through", 0);
  if (through === undefined) return latest;
  if (through > latest) throw validationFailure(`Invalid request: query.through: ${through} is past ${what} (${latest})`);
  return through;
}

/** The UTF-16 index of UTF-8 byte offset `byte` of `text`; a byte inside a character is refused. */
export function indexAtByte(text: string, byte: number, name: string): number {
  let bytes = 0;
  let index = 0;
  while (bytes < byte && index < text.length) {
    const cp = text.codePointAt(index)!;
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    index += cp > 0xffff ? 2 : 1;
  }
  if (bytes !== byte) throw validationFailure(`Invalid request: query.${name}: ${byte} is ${bytes < byte ? "past the end of the field" : "inside a character"}`);
  return index;
}
