// The file tools' contract without a filesystem: ids, descriptions and input schemas of `read`,
// `write` and `edit`, their input types, and the pure parts of their results (numbered line pages
// with their hints, directory pages, exact-string edits, the result sentences). The Node tools
// (read.ts, write.ts, edit.ts) and the Worker's tools over its `/workspace` store
// (worker/files/tools.ts) are both built from it, so the model sees one tool whichever host runs
// it. Imports nothing of Node: the Worker bundle takes this file without `node:fs`.
import {
  DEFAULT_READ_LINES,
  MAX_DIRECTORY_ENTRIES,
  MAX_FILE_READ_BYTES,
  MAX_READ_LINE_CHARS,
  ToolFailure,
  byteLength,
  jsonResult,
  throwIfAborted,
  type JsonSchema,
  type PermissionProjection,
  type ToolOutput,
} from "./tool.js";

/** The continuation a Session-resource page returns; passed back unchanged. */
export type ReadNext =
  | { readonly kind: "artifact"; readonly id: string; readonly afterByte: number; readonly totalBytes: number }
  | { readonly kind: "attachment"; readonly name: string; readonly digest: string; readonly afterByte: number; readonly totalBytes: number };

/** The JSON Schema of `next` (the tool's input). */
export const NEXT_SCHEMA = {
  type: "object",
  description: "A previous page's `next`, unchanged.",
  properties: {
    kind: { type: "string", enum: ["artifact", "attachment"] },
    id: { type: "string", minLength: 1 },
    name: { type: "string", minLength: 1 },
    digest: { type: "string", minLength: 1 },
    afterByte: { type: "integer", minimum: 0 },
    totalBytes: { type: "integer", minimum: 0 },
  },
  required: ["kind", "afterByte", "totalBytes"],
  additionalProperties: false,
} as const;

export interface ReadInput {
  /** A workspace file or directory. Exactly one of filePath, artifact, attachment and next. */
  readonly filePath?: string;
  /** An archived tool result of this Session: its artifact id or path. */
  readonly artifact?: string;
  /** A text attachment of this Session, by name. */
  readonly attachment?: string;
  /** The continuation a page of an artifact or attachment returned. */
  readonly next?: ReadNext;
  readonly offset?: number;
  readonly limit?: number;
}

export interface WriteInput {
  readonly filePath: string;
  readonly content: string;
}

export interface EditInput {
  readonly filePath: string;
  readonly oldString: string;
  readonly newString: string;
  readonly replaceAll?: boolean;
}

/** What a file tool is to the model: the same on every host. */
export interface FileToolSpec {
  readonly id: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

export const READ_SPEC: FileToolSpec = {
  id: "read",
  description:
    "Read a UTF-8 text file (numbered lines, paged with offset/limit, at most 50 KiB per call) or list a directory " +
    "(paged with offset/limit). Paths are relative to the Session workdir or absolute. Instead of filePath, " +
    "`artifact` (a tool result's full-output file: id or path) or `attachment` (a text attachment's name) reads " +
    "this Session's resources in byte pages; pass a page's `next` back as `read({ next })` until it is null.",
  inputSchema: {
    type: "object",
    properties: {
      filePath: { type: "string", minLength: 1, description: "File or directory to read." },
      artifact: { type: "string", minLength: 1, description: "A tool result's full-output file (id or path)." },
      attachment: { type: "string", minLength: 1, description: "A text attachment's name." },
      next: NEXT_SCHEMA,
      offset: { type: "integer", minimum: 1, description: "1-based first line (file) or entry (directory)." },
      limit: { type: "integer", minimum: 1, description: `Most lines (default ${DEFAULT_READ_LINES}) or entries (default and max ${MAX_DIRECTORY_ENTRIES}).` },
    },
    // One of filePath, artifact, attachment and next (checked in `permissions`; providers refuse a top-level oneOf).
    minProperties: 1,
    additionalProperties: false,
  },
};

export const WRITE_SPEC: FileToolSpec = {
  id: "write",
  description:
    "Create or replace a text file with the given content, creating missing parent directories. " +
    "Paths are relative to the Session workdir or absolute.",
  inputSchema: {
    type: "object",
    properties: {
      filePath: { type: "string", minLength: 1, description: "File to write." },
      content: { type: "string", description: "The complete new content." },
    },
    required: ["filePath", "content"],
    additionalProperties: false,
  },
};

export const EDIT_SPEC: FileToolSpec = {
  id: "edit",
  description:
    "Replace an exact string in a text file. oldString must match the file exactly (whitespace included) and occur " +
    "once; set replaceAll to replace every occurrence. Read the file first.",
  inputSchema: {
    type: "object",
    properties: {
      filePath: { type: "string", minLength: 1, description: "File to edit." },
      oldString: { type: "string", minLength: 1, description: "Exact text to replace." },
      newString: { type: "string", description: "Replacement text." },
      replaceAll: { type: "boolean", description: "Replace every occurrence instead of exactly one." },
    },
    required: ["filePath", "oldString", "newString"],
    additionalProperties: false,
  },
};

/** Which of `read`'s exclusive addresses `input` names (a ToolFailure unless exactly one). */
export function readAddress(input: ReadInput): "filePath" | "artifact" | "attachment" | "next" {
  const given = (["filePath", "artifact", "attachment", "next"] as const).filter((key) => input[key] !== undefined);
  if (given.length !== 1) throw new ToolFailure("invalid_input", "Give exactly one of filePath, artifact, attachment and next.");
  const address = given[0]!;
  if (address !== "filePath" && (input.offset !== undefined || input.limit !== undefined)) {
    throw new ToolFailure("invalid_input", "offset and limit page workspace files; an artifact or attachment continues with its next object.");
  }
  return address;
}

/** The permission resource of a Session resource read (allowed by Ze's defaults; rules may match `session:*`). */
export const sessionResourceProjection = (kind: "artifact" | "attachment", reference: string): PermissionProjection[] => {
  const resource = `session:${kind}/${reference}`;
  return [{ action: "read", resources: [resource], save: [resource] }];
};

/** `read`'s Session-resource projections (the non-`filePath` addresses). */
export function readResourceProjections(input: ReadInput, address: "artifact" | "attachment" | "next"): PermissionProjection[] {
  if (address === "artifact") return sessionResourceProjection("artifact", input.artifact!);
  if (address === "attachment") return sessionResourceProjection("attachment", input.attachment!);
  const next = input.next!;
  return sessionResourceProjection(next.kind, String(next.kind === "artifact" ? next.id : next.name));
}

/** Bytes reserved for the closing hint. */
const HINT_RESERVE = 256;

const formatLine = (n: number, text: string): string => {
  const cut = text.length > MAX_READ_LINE_CHARS ? `${text.slice(0, MAX_READ_LINE_CHARS)}… (line truncated)` : text;
  return `${String(n).padStart(6)}\t${cut}`;
};

/**
 * One page of a text file as `read` returns it: lines `offset`..`offset+limit-1` numbered like
 * `cat -n`, long lines cut, the whole within MAX_FILE_READ_BYTES with its closing hint. `chunk`
 * gives the file's bytes in order (undefined at the end); only the bytes up to the page's end are
 * asked for. Content must be UTF-8 (checked on the bytes read).
 */
export async function pageLines(chunk: () => Promise<Uint8Array | undefined>, resource: string, offset: number, limit: number, signal: AbortSignal): Promise<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const out: string[] = [];
  let outBytes = 0;
  let lineNo = 0; // lines completed so far
  let partial = "";
  let eof = false;
  let stop: "limit" | "bytes" | undefined;
  let lastShown = offset - 1;

  // Returns false once the page is full.
  const take = (line: string): boolean => {
    lineNo++;
    if (lineNo < offset) return true;
    if (lineNo >= offset + limit) {
      stop = "limit";
      return false;
    }
    const formatted = formatLine(lineNo, line.endsWith("\r") ? line.slice(0, -1) : line);
    const cost = byteLength(formatted) + 1;
    if (outBytes + cost > MAX_FILE_READ_BYTES - HINT_RESERVE) {
      stop = "bytes";
      return false;
    }
    out.push(formatted);
    outBytes += cost;
    lastShown = lineNo;
    return true;
  };

  reading: while (!eof) {
    throwIfAborted(signal);
    const bytes = await chunk();
    let text: string;
    try {
      text = bytes === undefined || bytes.length === 0 ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch {
      throw new ToolFailure("invalid_utf8", `${JSON.stringify(resource)} is not UTF-8 text.`);
    }
    if (bytes === undefined || bytes.length === 0) eof = true;
    partial += text;
    let start = 0;
    let newline: number;
    while ((newline = partial.indexOf("\n", start)) !== -1) {
      const line = partial.slice(start, newline);
      start = newline + 1;
      if (!take(line)) break reading;
    }
    partial = partial.slice(start);
    if (eof && partial.length > 0) {
      const line = partial;
      partial = "";
      if (!take(line)) break;
    }
  }

  if (stop === undefined && lineNo < offset && !(lineNo === 0 && offset === 1)) {
    throw new ToolFailure("invalid_offset", `offset ${offset} is past the end of the file (${lineNo} lines).`);
  }
  let hint: string;
  if (stop === "bytes") {
    hint = `(Output capped at ${MAX_FILE_READ_BYTES / 1024} KiB. Showing lines ${offset}-${lastShown}. Use offset=${lastShown + 1} to continue.)`;
  } else if (stop === "limit") {
    hint = `(Showing lines ${offset}-${lastShown}; more lines follow. Use offset=${lastShown + 1} to continue.)`;
  } else if (lineNo === 0) {
    hint = "(Empty file.)";
  } else {
    hint = `(End of file: ${lineNo} lines.)`;
  }
  return out.length > 0 ? `${out.join("\n")}\n\n${hint}` : hint;
}

/** What a directory entry is: `other` for anything but a regular file or a directory. */
export type EntryKind = "file" | "directory" | "other";

/**
 * One page of a directory listing as `read` returns it: `names` sorted (by UTF-16 code units, as
 * Node's listing is), paged 1-based, directory names ending in `/`. `kindOf` is asked only about
 * the page's entries.
 */
export async function directoryPage(names: readonly string[], kindOf: (name: string) => EntryKind | Promise<EntryKind>, resource: string, offset: number, limit: number): Promise<ToolOutput> {
  const sorted = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const page = sorted.slice(offset - 1, offset - 1 + limit);
  const entries: string[] = [];
  for (const name of page) entries.push((await kindOf(name)) === "directory" ? `${name}/` : name);
  const truncated = offset - 1 + page.length < sorted.length;
  return jsonResult({
    kind: "directory",
    path: resource,
    entries,
    offset,
    totalEntries: sorted.length,
    truncated,
    ...(truncated && { nextOffset: offset + page.length }),
  });
}

function countOccurrences(text: string, search: string): number {
  let count = 0;
  for (let at = text.indexOf(search); at !== -1; at = text.indexOf(search, at + search.length)) count++;
  return count;
}

/** Refuses an edit that cannot change anything (before the file is touched). */
export function checkEditChanges(input: EditInput): void {
  if (input.oldString === input.newString) throw new ToolFailure("no_change", "oldString and newString are identical; nothing to change.");
}

/**
 * `edit`'s replacement on a file's text: `oldString` exactly once (or every occurrence with
 * `replaceAll`); no match and an ambiguous match are ToolFailures. `name` is the quoted resource.
 */
export function applyEdit(text: string, input: EditInput, name: string): { readonly updated: string; readonly count: number } {
  const count = countOccurrences(text, input.oldString);
  if (count === 0) throw new ToolFailure("no_match", `oldString was not found in ${name}.`);
  if (count > 1 && input.replaceAll !== true) {
    throw new ToolFailure("ambiguous_match", `oldString occurs ${count} times in ${name}; add surrounding context to make it unique, or set replaceAll.`);
  }
  const updated = input.replaceAll === true ? text.split(input.oldString).join(input.newString) : text.replace(input.oldString, () => input.newString);
  return { updated, count };
}

export const editResultText = (resource: string, count: number): string => `Edited ${resource}: replaced ${count} occurrence${count === 1 ? "" : "s"}.`;

export const writeResultText = (resource: string, replaced: boolean, bytes: number): string => `${replaced ? "Replaced" : "Created"} ${resource} (${bytes} bytes).`;
