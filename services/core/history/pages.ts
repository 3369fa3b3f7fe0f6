// History pages and field source reads under one fixed `through` fence. A page is one indexed
// range read (`history_row_position_idx`), so its cost does not depend on how long the history is.
import type { HistoryData, HistoryPage, HistorySourceChunk, ReadHistorySourceData } from "../../../generated/client/types.gen.js";
import { notFound, validationFailure } from "../../contract/failure.js";
import { getSession, historyRows, type StorageHandle } from "../../storage/index.js";
import { pageLimit, parseCount, parsePosition } from "./query.js";
import { boundaryEnd, fieldText, parseField, parseThrough, positionOf, toHistoryRow } from "./rows.js";

/** Bytes one source read returns at most. */
export const SOURCE_CHUNK_BYTES = 64 * 1024;

export class HistoryPages {
  constructor(private readonly storage: StorageHandle) {}

  private async requireSession(server: string, sessionId: string): Promise<void> {
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
  }

  async page(server: string, sessionId: string, query: HistoryData["query"]): Promise<HistoryPage> {
    const limit = pageLimit(query?.limit);
    const after = parsePosition(query, "afterSourceSequence", "afterItemIndex", Number.MAX_SAFE_INTEGER);
    const row = parsePosition(query, "rowSourceSequence", "rowItemIndex", -1);
    const rowField = parseField(query?.rowField, "rowField");
    const event = parseCount(query?.eventSequence, "eventSequence", 1);
    if (row && row[1] === -1) throw validationFailure("Invalid request: query.rowItemIndex: required with query.rowSourceSequence");
    if (rowField !== undefined && !row) throw validationFailure("Invalid request: query.rowField: requires query.rowSourceSequence and query.rowItemIndex");
    const modes = [after, row, event].filter((mode) => mode !== undefined).length;
    if (modes > 1) throw validationFailure("Invalid request: query: give at most one of afterSourceSequence, rowSourceSequence and eventSequence");
    await this.requireSession(server, sessionId);
    const sql = this.storage.reader().sql;
    const through = parseThrough(query?.through, await historyRows.latestSequence(sql, sessionId));
    let rows;
    if (row) {
      if (row[0] > through) throw validationFailure(`Invalid request: query.rowSourceSequence: ${row[0]} is past the fence ${through}`);
      const target = await historyRows.getRow(sql, sessionId, row);
      if (!target) throw validationFailure(`Invalid request: query.rowSourceSequence: the Session has no row ${row[0]}.${row[1]}`);
      if (rowField !== undefined && fieldText(target, rowField) === undefined) throw validationFailure(`Invalid request: query.rowField: row ${row[0]}.${row[1]} has no ${rowField} field`);
      rows = await historyRows.listRows(sql, sessionId, { after: row, inclusive: true, reveal: row, through, limit: limit + 1 });
    } else if (event !== undefined) {
      if (event > through) throw validationFailure(`Invalid request: query.eventSequence: ${event} is past the fence ${through}`);
      rows = await historyRows.listRows(sql, sessionId, { after: [event, 0], inclusive: true, through, limit: limit + 1 });
    } else {
      rows = await historyRows.listRows(sql, sessionId, { after: after ?? [0, 0], inclusive: after === undefined, through, limit: limit + 1 });
    }
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { sessionId, through, rows: page.map(toHistoryRow), nextAfter: rows.length > limit && last ? positionOf(last) : null };
  }

  async source(server: string, sessionId: string, query: ReadHistorySourceData["query"]): Promise<HistorySourceChunk> {
    const sourceSequence = parseCount(query.sourceSequence, "sourceSequence", 1)!;
    const itemIndex = parseCount(query.itemIndex, "itemIndex", 0)!;
    const field = parseField(query.field, "field")!;
    const afterByte = parseCount(query.afterByte, "afterByte", 0) ?? 0;
    await this.requireSession(server, sessionId);
    const sql = this.storage.reader().sql;
    const through = parseThrough(query.through, await historyRows.latestSequence(sql, sessionId));
    if (sourceSequence > through) throw validationFailure(`Invalid request: query.sourceSequence: ${sourceSequence} is past the fence ${through}`);
    const row = await historyRows.getRow(sql, sessionId, [sourceSequence, itemIndex]);
    if (!row) throw validationFailure(`Invalid request: query.sourceSequence: the Session has no row ${sourceSequence}.${itemIndex}`);
    const text = fieldText(row, field);
    if (text === undefined) throw validationFailure(`Invalid request: query.field: row ${sourceSequence}.${itemIndex} has no ${field} field`);
    const bytes = Buffer.from(text, "utf8");
    if (afterByte > bytes.length) throw validationFailure(`Invalid request: query.afterByte: ${afterByte} is past the end of the field (${bytes.length} bytes)`);
    if (afterByte < bytes.length && (bytes[afterByte]! & 0xc0) === 0x80) throw validationFailure(`Invalid request: query.afterByte: ${afterByte} is inside a character`);
    let end = boundaryEnd(bytes, afterByte, SOURCE_CHUNK_BYTES);
    if (end === afterByte && afterByte < bytes.length) end = Math.min(bytes.length, afterByte + 4);
    return {
      sessionId,
      through,
      position: positionOf(row),
      field,
      byteLength: bytes.length,
      byteOffset: afterByte,
      text: bytes.subarray(afterByte, end).toString("utf8"),
      nextByte: end < bytes.length ? end : null,
    };
  }
}
