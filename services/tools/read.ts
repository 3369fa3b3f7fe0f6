// `read`: a text file as numbered lines, or one page of a directory listing.
//
// Files: lines `offset`..`offset+limit-1` (1-based; default 1 and DEFAULT_READ_LINES), each as
// `<n>\t<text>` (the line number right-aligned to 6 columns, like `cat -n`), lines longer than
// MAX_READ_LINE_CHARS cut with a marker. The whole text, hints included, stays within
// MAX_FILE_READ_BYTES; the file is streamed, so large files are readable page by page and only
// the bytes up to the page end are read. A closing hint names the next `offset` when lines
// remain, or the line count at end of file. Content must be UTF-8 (checked on the bytes read).
//
// Directories: entries sorted by name, `offset`/`limit` paging (default/cap
// MAX_DIRECTORY_ENTRIES), as a JSON result `{ kind: "directory", path, entries, offset,
// totalEntries, truncated, nextOffset? }` where directory names end in `/`. A file result is text,
// which counts as `kind: "file"` for workspace instruction discovery.
//
// Session resources (read-resources.ts): `artifact` (an archived tool result of this Session, by
// id or path), `attachment` (a text attachment, by name) and `next` (a page's continuation) read
// in exact byte pages. A `filePath` inside the artifacts directory is read the same way, as an
// archived tool result of this Session only.
import { realpathSync } from "node:fs";
import { readdir, stat, type FileHandle } from "node:fs/promises";
import { basename, join } from "node:path";
import { insideRoot } from "../contract/paths.js";
import { directoryPath } from "../workspace/files/verified.js";
import { fileFailure, fileProjections, openTarget, resolveFileTarget } from "./paths.js";
import { NEXT_SCHEMA, findArchive, readArchivePage, readAttachmentPage, readNext, type ReadNext } from "./read-resources.js";
import {
  DEFAULT_READ_LINES,
  MAX_DIRECTORY_ENTRIES,
  MAX_FILE_READ_BYTES,
  MAX_READ_LINE_CHARS,
  ToolFailure,
  byteLength,
  jsonResult,
  textResult,
  throwIfAborted,
  type PermissionProjection,
  type ToolContext,
  type ToolDefinition,
  type ToolOutput,
} from "./tool.js";

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

/** Which of the exclusive addresses `input` names (a ToolFailure unless exactly one). */
function addressOf(input: ReadInput): "filePath" | "artifact" | "attachment" | "next" {
  const given = (["filePath", "artifact", "attachment", "next"] as const).filter((key) => input[key] !== undefined);
  if (given.length !== 1) throw new ToolFailure("invalid_input", "Give exactly one of filePath, artifact, attachment and next.");
  const address = given[0]!;
  if (address !== "filePath" && (input.offset !== undefined || input.limit !== undefined)) {
    throw new ToolFailure("invalid_input", "offset and limit page workspace files; an artifact or attachment continues with its next object.");
  }
  return address;
}

/** The permission resource of a Session resource read (allowed by Ze's defaults; rules may match `session:*`). */
const sessionResource = (kind: "artifact" | "attachment", reference: string): PermissionProjection[] => {
  const resource = `session:${kind}/${reference}`;
  return [{ action: "read", resources: [resource], save: [resource] }];
};

/** Whether `path` lies inside the call's artifacts directory (where archived tool results live). */
function insideArtifacts(ctx: ToolContext, path: string): boolean {
  let root: string;
  try {
    root = realpathSync(ctx.artifactsDirectory);
  } catch {
    return false;
  }
  const relative = insideRoot(root, path);
  return relative !== undefined && relative !== ".";
}

/** Bytes reserved for the closing hint. */
const HINT_RESERVE = 256;
const CHUNK_BYTES = 64 * 1024;

const formatLine = (n: number, text: string): string => {
  const cut = text.length > MAX_READ_LINE_CHARS ? `${text.slice(0, MAX_READ_LINE_CHARS)}… (line truncated)` : text;
  return `${String(n).padStart(6)}\t${cut}`;
};

async function readFileLines(handle: FileHandle, resource: string, offset: number, limit: number, signal: AbortSignal): Promise<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const buffer = Buffer.alloc(CHUNK_BYTES);
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
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null).catch((error: unknown) => {
      throw fileFailure(error, resource);
    });
    let text: string;
    try {
      text = bytesRead === 0 ? decoder.decode() : decoder.decode(buffer.subarray(0, bytesRead), { stream: true });
    } catch {
      throw new ToolFailure("invalid_utf8", `${JSON.stringify(resource)} is not UTF-8 text.`);
    }
    if (bytesRead === 0) eof = true;
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

type EntryKind = "file" | "directory" | "other";

async function entryKind(dir: string, entry: { name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): Promise<EntryKind> {
  if (entry.isSymbolicLink()) {
    try {
      const s = await stat(join(dir, entry.name));
      return s.isDirectory() ? "directory" : s.isFile() ? "file" : "other";
    } catch {
      return "other";
    }
  }
  return entry.isDirectory() ? "directory" : entry.isFile() ? "file" : "other";
}

async function readDirectoryPage(path: string, resource: string, offset: number, limit: number, signal: AbortSignal): Promise<ToolOutput> {
  const all = await readdir(path, { withFileTypes: true }).catch((error: unknown) => {
    throw fileFailure(error, resource);
  });
  throwIfAborted(signal);
  all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const page = all.slice(offset - 1, offset - 1 + limit);
  const entries: string[] = [];
  for (const entry of page) entries.push((await entryKind(path, entry)) === "directory" ? `${entry.name}/` : entry.name);
  const truncated = offset - 1 + page.length < all.length;
  return jsonResult({
    kind: "directory",
    path: resource,
    entries,
    offset,
    totalEntries: all.length,
    truncated,
    ...(truncated && { nextOffset: offset + page.length }),
  });
}

export const readTool: ToolDefinition<ReadInput> = {
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
  discoversWorkspaceInstructions: true,
  permissions(input, ctx) {
    const address = addressOf(input);
    if (address === "filePath") return fileProjections("read", resolveFileTarget(ctx.workdir, input.filePath!));
    if (address === "artifact") return sessionResource("artifact", input.artifact!);
    if (address === "attachment") return sessionResource("attachment", input.attachment!);
    const next = input.next!;
    return sessionResource(next.kind, String(next.kind === "artifact" ? next.id : next.name));
  },
  async execute(input, ctx) {
    const address = addressOf(input);
    throwIfAborted(ctx.signal);
    if (address === "artifact") return readArchivePage(ctx, await findArchive(ctx, input.artifact!));
    if (address === "attachment") return readAttachmentPage(ctx, input.attachment!);
    if (address === "next") return readNext(ctx, input.next!);
    const { target, opened } = await openTarget(ctx, "read", input.filePath!);
    try {
      const info = opened.stat;
      // An archived tool result is read as one (byte pages with next), and only this Session's.
      if (ctx.sessionResources && info.isFile() && insideArtifacts(ctx, target.canonicalPath)) {
        // Archives are named `<artifact id>.log`: look the id up (another name is no archive of this Session).
        const archive = await findArchive(ctx, basename(target.canonicalPath).replace(/\.log$/, ""));
        if (canonical(archive.absolutePath) !== target.canonicalPath) throw new ToolFailure("resource_not_in_session", `No archived tool result ${JSON.stringify(target.resource)} belongs to this Session.`);
        return await readArchivePage(ctx, archive);
      }
      const offset = input.offset ?? 1;
      if (info.isDirectory()) {
        // Listed through the verified descriptor: exactly the directory that was checked.
        const listing = await readDirectoryPage(directoryPath(opened).toString(), target.resource, offset, Math.min(input.limit ?? MAX_DIRECTORY_ENTRIES, MAX_DIRECTORY_ENTRIES), ctx.signal);
        return { ...listing, instructionTarget: { path: target.canonicalPath, isDirectory: true } };
      }
      if (!info.isFile()) throw new ToolFailure("not_file", `${JSON.stringify(target.resource)} is not a regular file.`);
      const text = textResult(await readFileLines(opened.handle, target.resource, offset, input.limit ?? DEFAULT_READ_LINES, ctx.signal));
      return { ...text, instructionTarget: { path: target.canonicalPath, isDirectory: false } };
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  },
};

const canonical = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};
