// Literal search of published history rows: one Session in history order, or every Session of a
// server newest first. Matching: the query's exact code points (caseSensitive) or Unicode simple
// case folding of both sides without normalization; wholeWord refuses a match touched by a Unicode
// word character (letter, mark, decimal digit, connector punctuation, join control). The FTS5
// trigram index (`history_fts`) proposes candidate rows — raw or folded text contains the
// (folded) query — and every candidate is verified here; queries under three code points scan the
// rows instead. A page looks at a bounded number of candidate rows, so it can end without hits and
// still continue; `nextAfter` names the field and byte where the next page resumes.
import type {
  HistoryField,
  SearchCursor,
  SearchData,
  SearchHit,
  SearchPage,
  SearchServerData,
  ServerSearchCursor,
  ServerSearchHit,
  ServerSearchPage,
} from "../../../generated/client/types.gen.js";
import { notFound, validationFailure } from "../../contract/failure.js";
import { codePointBefore, foldCase, getSession, historyRows, isWordCodePoint, type HistoryRowRecord, type StorageHandle } from "../../storage/index.js";
import { pageLimit, parseCount } from "./query.js";
import { FIELDS, fieldText, indexAtByte, parseField, parseThrough, positionOf } from "./rows.js";

/** Candidate rows one page verifies at most. */
export const SCAN_BUDGET = 256;
/** Rows a continuation page scans by position before it asks the index. */
export const DIRECT_SCAN = 64;
/** Characters of context either side of a hit's preview. */
const PREVIEW_CHARS = 80;
export const MAX_QUERY_CHARS = 1024;

export interface SearchOptions {
  readonly query: string;
  readonly caseSensitive: boolean;
  readonly wholeWord: boolean;
}

const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
/** True when UTF-16 index `index` falls between the halves of a surrogate pair. */
const splitsPair = (text: string, index: number): boolean => index > 0 && index < text.length && isLowSurrogate(text.charCodeAt(index)) && isHighSurrogate(text.charCodeAt(index - 1));

/** Every match of `options.query` in `text` from UTF-16 index `from`, as [start, end) UTF-16 ranges, left to right, non-overlapping. */
export function* literalMatches(text: string, options: SearchOptions, from = 0): Generator<[number, number]> {
  const needle = options.caseSensitive ? options.query : foldCase(options.query);
  const haystack = options.caseSensitive ? text : foldCase(text);
  if (needle.length === 0) return;
  let index = from;
  for (;;) {
    const at = haystack.indexOf(needle, index);
    if (at < 0) return;
    const end = at + needle.length;
    if (splitsPair(text, at) || splitsPair(text, end)) {
      index = at + 1;
      continue;
    }
    if (options.wholeWord) {
      const before = codePointBefore(text, at);
      const after = end < text.length ? text.codePointAt(end) : undefined;
      if ((before !== undefined && isWordCodePoint(before)) || (after !== undefined && isWordCodePoint(after))) {
        index = at + 1;
        continue;
      }
    }
    yield [at, end];
    index = end;
  }
}

function preview(text: string, start: number, end: number): string {
  let from = Math.max(0, start - PREVIEW_CHARS);
  let to = Math.min(text.length, end + PREVIEW_CHARS);
  if (splitsPair(text, from)) from -= 1;
  if (splitsPair(text, to)) to += 1;
  return text.slice(from, to);
}

export function parseSearchOptions(query: { query: string; caseSensitive: string; wholeWord: string }): SearchOptions {
  const flag = (value: string, name: string): boolean => {
    if (value !== "true" && value !== "false") throw validationFailure(`Invalid request: query.${name}: must be true or false`);
    return value === "true";
  };
  if (typeof query.query !== "string" || query.query.length === 0) throw validationFailure("Invalid request: query.query: must not be empty");
  if ([...query.query].length > MAX_QUERY_CHARS) throw validationFailure(`Invalid request: query.query: at most ${MAX_QUERY_CHARS} characters`);
  return { query: query.query, caseSensitive: flag(query.caseSensitive, "caseSensitive"), wholeWord: flag(query.wholeWord, "wholeWord") };
}

interface ParsedCursor {
  readonly position: [number, number];
  readonly field: HistoryField;
  readonly byteOffset: number;
}

function parseCursor(query: { afterSourceSequence?: string; afterItemIndex?: string; afterField?: string; afterByte?: string }): ParsedCursor | undefined {
  const sequence = parseCount(query.afterSourceSequence, "afterSourceSequence", 1);
  const index = parseCount(query.afterItemIndex, "afterItemIndex", 0);
  const field = parseField(query.afterField, "afterField");
  const byte = parseCount(query.afterByte, "afterByte", 0);
  if (sequence === undefined && index === undefined && field === undefined && byte === undefined) return undefined;
  if (sequence === undefined || index === undefined || field === undefined) {
    throw validationFailure("Invalid request: query.afterSourceSequence: a search cursor needs afterSourceSequence, afterItemIndex and afterField (and afterByte) together");
  }
  return { position: [sequence, index], field, byteOffset: byte ?? 0 };
}

/** The hits of one row, from `cursor` on when the row is the cursor's; `room` hits at most. */
function scanRow(row: HistoryRowRecord, options: SearchOptions, cursor: ParsedCursor | undefined, room: number): { hits: SearchHit[]; resume?: { field: HistoryField; byteOffset: number } } {
  const hits: SearchHit[] = [];
  const startField = cursor ? FIELDS.indexOf(cursor.field) : 0;
  for (const field of FIELDS.slice(startField)) {
    const text = fieldText(row, field);
    if (text === undefined) {
      if (cursor && field === cursor.field && cursor.byteOffset > 0) throw validationFailure(`Invalid request: query.afterField: row ${row.sourceSequence}.${row.itemIndex} has no ${field} field`);
      continue;
    }
    const from = cursor && field === cursor.field ? indexAtByte(text, cursor.byteOffset, "afterByte") : 0;
    let bytesAt = 0;
    let indexAt = 0;
    for (const [start, end] of literalMatches(text, options, from)) {
      bytesAt += Buffer.byteLength(text.slice(indexAt, start), "utf8");
      indexAt = start;
      if (hits.length >= room) return { hits, resume: { field, byteOffset: bytesAt } };
      const hit: SearchHit = {
        position: positionOf(row),
        field,
        byteOffset: bytesAt,
        byteLength: Buffer.byteLength(text.slice(start, end), "utf8"),
        role: row.role,
        kind: row.kind,
        preview: preview(text, start, end),
      };
      if (row.turnId !== null) hit.turnId = row.turnId;
      if (row.entryId !== null) hit.entryId = row.entryId;
      hits.push(hit);
    }
    cursor = undefined;
  }
  return { hits };
}

/** The cursor that resumes after every field of `row`. */
function endOf(row: HistoryRowRecord): { field: HistoryField; byteOffset: number } {
  const field = [...FIELDS].reverse().find((name) => fieldText(row, name) !== undefined)!;
  return { field, byteOffset: Buffer.byteLength(fieldText(row, field)!, "utf8") };
}

export class HistorySearch {
  constructor(private readonly storage: StorageHandle) {}

  async search(server: string, sessionId: string, query: SearchData["query"]): Promise<SearchPage> {
    const options = parseSearchOptions(query);
    const limit = pageLimit(query.limit);
    const cursor = parseCursor(query);
    if (!(await getSession(this.storage, server, sessionId))) throw notFound("session", `Session ${sessionId} does not exist`);
    const sql = this.storage.reader().sql;
    const through = parseThrough(query.through, await historyRows.latestSequence(sql, sessionId));
    let fromId = 0;
    if (cursor) {
      if (cursor.position[0] > through) throw validationFailure(`Invalid request: query.afterSourceSequence: ${cursor.position[0]} is past the fence ${through}`);
      const row = await historyRows.getRow(sql, sessionId, cursor.position);
      if (!row) throw validationFailure(`Invalid request: query.afterSourceSequence: the Session has no row ${cursor.position[0]}.${cursor.position[1]}`);
      fromId = row.id;
    }
    const match = historyRows.indexable(options.query) ? historyRows.matchExpression(options.query, options.caseSensitive) : undefined;
    // FTS5 (SQLite 3.45) walks a phrase's doclists from their start up to a rowid bound, so an
    // index read from a cursor deep in a long history costs what the matches before it cost. A
    // continuation therefore first scans a few rows at the cursor by position (flat): a query
    // that is common there fills its page without the index; a sparse one goes on by the index.
    let candidates: HistoryRowRecord[] = [];
    /** True when the candidates reach the end of what the search can find. */
    let exhausted: boolean;
    if (cursor && match !== undefined) {
      candidates = await historyRows.sessionCandidates(sql, sessionId, { match: undefined, fromId, fromPosition: cursor.position, limit: DIRECT_SCAN });
      let found = 0;
      for (const row of candidates) {
        if (row.sourceSequence > through) break;
        found += scanRow(row, options, row.id === fromId ? cursor : undefined, limit).hits.length;
        if (found >= limit) break;
      }
      exhausted = candidates.length < DIRECT_SCAN;
      if (found < limit && !exhausted) {
        const after = await historyRows.sessionCandidates(sql, sessionId, { match, fromId: candidates.at(-1)!.id + 1, limit: SCAN_BUDGET });
        candidates = [...candidates, ...after];
        exhausted = after.length < SCAN_BUDGET;
      }
    } else {
      candidates = await historyRows.sessionCandidates(sql, sessionId, { match, fromId, ...(cursor ? { fromPosition: cursor.position } : {}), limit: SCAN_BUDGET });
      exhausted = candidates.length < SCAN_BUDGET;
    }
    const hits: SearchHit[] = [];
    for (const row of candidates) {
      if (row.sourceSequence > through) return { sessionId, through, hits, nextAfter: null };
      const own = cursor && row.sourceSequence === cursor.position[0] && row.itemIndex === cursor.position[1] ? cursor : undefined;
      const scanned = scanRow(row, options, own, limit - hits.length);
      hits.push(...scanned.hits);
      if (scanned.resume) return { sessionId, through, hits, nextAfter: { position: positionOf(row), ...scanned.resume } };
      if (hits.length >= limit && row !== candidates.at(-1)) {
        return { sessionId, through, hits, nextAfter: { position: positionOf(row), ...endOf(row) } };
      }
    }
    const last = candidates.at(-1);
    const nextAfter: SearchCursor | null = !exhausted && last ? { position: positionOf(last), ...endOf(last) } : null;
    return { sessionId, through, hits, nextAfter };
  }

  async searchServer(server: string, query: SearchServerData["query"]): Promise<ServerSearchPage> {
    const options = parseSearchOptions(query);
    const limit = pageLimit(query.limit);
    const cursor = parseCursor(query);
    if (cursor && query.afterSessionId === undefined) throw validationFailure("Invalid request: query.afterSessionId: required with a search cursor");
    if (!cursor && query.afterSessionId !== undefined) throw validationFailure("Invalid request: query.afterSessionId: requires afterSourceSequence, afterItemIndex and afterField");
    const sql = this.storage.reader().sql;
    const through = parseThrough(query.through, await historyRows.latestRowId(sql), "the server's latest history row");
    let toId = through;
    if (cursor) {
      const session = await getSession(this.storage, server, query.afterSessionId!);
      const row = session ? await historyRows.getRow(sql, session.id, cursor.position) : undefined;
      if (!row || row.id > through) throw validationFailure(`Invalid request: query.afterSessionId: no row ${cursor.position[0]}.${cursor.position[1]} of that Session under the fence`);
      toId = row.id;
    }
    const match = historyRows.indexable(options.query) ? historyRows.matchExpression(options.query, options.caseSensitive) : undefined;
    const candidates = await historyRows.serverCandidates(sql, server, { match, toId, limit: SCAN_BUDGET });
    const hits: ServerSearchHit[] = [];
    const cursorOf = (row: HistoryRowRecord, at: { field: HistoryField; byteOffset: number }): ServerSearchCursor => ({ sessionId: row.sessionId, position: positionOf(row), ...at });
    for (const row of candidates) {
      const own = cursor && row.id === toId ? cursor : undefined;
      const scanned = scanRow(row, options, own, limit - hits.length);
      hits.push(...scanned.hits.map((hit) => ({ sessionId: row.sessionId, ...hit })));
      if (scanned.resume) return { through, hits, nextAfter: cursorOf(row, scanned.resume) };
      if (hits.length >= limit && row !== candidates.at(-1)) return { through, hits, nextAfter: cursorOf(row, endOf(row)) };
    }
    const last = candidates.at(-1);
    return { through, hits, nextAfter: candidates.length === SCAN_BUDGET && last ? cursorOf(last, endOf(last)) : null };
  }
}
