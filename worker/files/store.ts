// The Worker's `/workspace`: files and directories in a file home (home.ts) — the server object's
// SQLite by default (the reference's "one SQLite-backed Computer Workspace" per server; no
// container here), or the embedder's `workspace.files` on WorkerHarnessHost. Every Session of the
// server shares it. It is the plugin API's `WorkspaceFiles` (resolvePath, readText, writeText,
// removeFile, readDirectory, with the reference's `WorkspaceFileError` codes) plus what the file
// tools and the instruction loaders need: whole bytes, chunked reads, listings, glob and grep,
// all built here on the home's primitives.
//
// Rules, enforced here around any home: paths are canonical and confined to `/workspace`
// (paths.ts) before a home sees them; a write creates missing parent directories, refuses a
// parent that is a file (`not_file`) and a directory at the path (`not_file`); a file holds at
// most `maxFileBytes` (default MAX_WORKSPACE_FILE_BYTES, 10 MiB, what `edit` can load) — a larger
// write is `too_large` and changes nothing, a larger read is `too_large`. A home's answers are
// checked (unusable ones are `io`); its failures keep only their code. On the SQLite home each
// mutation is one synchronous transaction: a failure leaves the store as it was. Failures carry
// only a code, never a path. Concurrent writers are last-writer-wins, as on the container the
// reference describes.
import { WorkspaceFileError, isWorkspaceFileError, type WorkspaceDirectoryEntry, type WorkspaceFileTarget, type WorkspaceFiles } from "../../plugin/index.js";
import { MAX_DIRECTORY_ENTRIES, MAX_EDIT_FILE_BYTES, MAX_FILE_READ_BYTES } from "../../services/tools/tool.js";
import { WORKSPACE_ROOT } from "../workspace.js";
import { globMatcher } from "./glob.js";
import { CHUNK_BYTES, SqliteWorkspaceHome, type WorkspaceFileHome } from "./home.js";
import type { FilesStorageInput } from "./migrations.js";
import { MAX_NAME_BYTES, isInside, parentOf, relativeTo, utf8Length, workspacePath } from "./paths.js";

export { CHUNK_BYTES };

/** Largest file the store holds: what `edit` can load and rewrite (10 MiB). */
export const MAX_WORKSPACE_FILE_BYTES = MAX_EDIT_FILE_BYTES;
/** Most paths one glob returns; most matches one grep returns. */
export const MAX_GLOB_RESULTS = MAX_DIRECTORY_ENTRIES;
export const MAX_GREP_MATCHES = 500;

export type EntryKind = "file" | "directory";

export interface StoredEntry {
  readonly path: string;
  readonly kind: EntryKind;
  readonly size: number;
}

export interface WorkspaceFileStoreOptions {
  /** Largest file in bytes (1 … MAX_WORKSPACE_FILE_BYTES); default MAX_WORKSPACE_FILE_BYTES. */
  readonly maxFileBytes?: number;
  readonly now?: () => number;
}

/** The codes a home's WorkspaceFileError may carry through. */
const WORKSPACE_FILE_CODES: ReadonlySet<string> = new Set(["invalid_path", "not_found", "not_file", "too_large", "max_bytes_exceeded", "invalid_utf8", "io"]);

const fail = (code: WorkspaceFileError["code"]): WorkspaceFileError => new WorkspaceFileError({ code });

/** A decoder that refuses bytes that are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw fail("invalid_utf8");
  }
}

const encoder = new TextEncoder();

/** UTF-8 byte order (SQLite's binary collation), for listings and glob results from any home. */
function byUtf8<T>(items: readonly T[], key: (item: T) => string): T[] {
  const keyed = items.map((item) => ({ item, bytes: encoder.encode(key(item)) }));
  keyed.sort((a, b) => {
    const length = Math.min(a.bytes.length, b.bytes.length);
    for (let index = 0; index < length; index++) if (a.bytes[index] !== b.bytes[index]) return a.bytes[index]! - b.bytes[index]!;
    return a.bytes.length - b.bytes.length;
  });
  return keyed.map(({ item }) => item);
}

/** A name a home may list: one segment, neither `.` nor `..`. */
const validName = (name: unknown): name is string =>
  typeof name === "string" && name !== "" && name !== "." && name !== ".." && !name.includes("/") && !name.includes("\0") && utf8Length(name) <= MAX_NAME_BYTES;

const validKind = (kind: unknown): kind is EntryKind => kind === "file" || kind === "directory";
const validCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

export class WorkspaceFileStore implements WorkspaceFiles {
  readonly #home: WorkspaceFileHome;
  readonly #listeners = new Set<(path: string) => void>();
  readonly maxFileBytes: number;

  /**
   * The store over the object's SQLite (its tables migrated first, after the server migrations)
   * or over an embedder's file home (`workspace.files`).
   */
  constructor(source: FilesStorageInput | WorkspaceFileHome, options: WorkspaceFileStoreOptions = {}) {
    const max = options.maxFileBytes ?? MAX_WORKSPACE_FILE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1 || max > MAX_WORKSPACE_FILE_BYTES) throw new RangeError(`maxFileBytes must be an integer from 1 to ${MAX_WORKSPACE_FILE_BYTES}`);
    this.#home = "sql" in source && "transactionSync" in source ? new SqliteWorkspaceHome(source, options.now) : source;
    this.maxFileBytes = max;
  }

  /** Runs a home primitive: its WorkspaceFileError keeps its code (never its message), any other throw is `io`. */
  #call<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw isWorkspaceFileError(error) && WORKSPACE_FILE_CODES.has(error.code) ? fail(error.code) : fail("io");
    }
  }

  /**
   * Calls `listener` with the path of every entry a committed mutation created, replaced or
   * removed (a write's new parent directories too); returns the unsubscribe. A throwing listener
   * is not the writer's failure. With a home that reports changes, its reports (paths outside
   * `/workspace` or not canonical are dropped); else this store's own writes and removals.
   */
  onChange(listener: (path: string) => void): () => void {
    const safe = (path: string): void => {
      try {
        listener(path);
      } catch {
        // a watcher's problem, not the write's
      }
    };
    const reported = this.#home.onChange;
    if (reported !== undefined) {
      const stop = reported.call(this.#home, (path: unknown) => {
        if (typeof path !== "string") return;
        let canonical: string;
        try {
          canonical = workspacePath(path);
        } catch {
          return;
        }
        if (canonical === path) safe(path);
      });
      return typeof stop === "function" ? () => void stop() : () => undefined;
    }
    this.#listeners.add(safe);
    return () => this.#listeners.delete(safe);
  }

  #changed(paths: readonly string[]): void {
    if (this.#home.onChange !== undefined) return;
    for (const listener of this.#listeners) for (const path of paths) listener(path);
  }

  /** What is at `path` (absolute; normalised and confined like every path here), or undefined. */
  stat(path: string): StoredEntry | undefined {
    path = workspacePath(path);
    return this.#entry(path);
  }

  /** The home's answer for the canonical `path`, checked. */
  #entry(path: string): (StoredEntry & { readonly updatedAt: number }) | undefined {
    const entry: unknown = this.#call(() => this.#home.stat(path));
    if (entry === undefined || entry === null) return path === WORKSPACE_ROOT ? { path, kind: "directory", size: 0, updatedAt: 0 } : undefined;
    if (typeof entry !== "object") throw fail("io");
    const { kind, size, updatedAt } = entry as { kind?: unknown; size?: unknown; updatedAt?: unknown };
    if (!validKind(kind) || (kind === "file" && !validCount(size))) throw fail("io");
    // The root is a directory whatever a home says.
    if (path === WORKSPACE_ROOT && kind !== "directory") throw fail("io");
    return { path, kind, size: kind === "file" ? (size as number) : 0, updatedAt: validCount(updatedAt) ? updatedAt : 0 };
  }

  /** The file at the canonical `path`. */
  #file(path: string): StoredEntry {
    const entry = this.#entry(path);
    if (entry === undefined) {
      // A parent that is a file is `not_file`, as ENOTDIR is on Node.
      for (let parent = parentOf(path); isInside(WORKSPACE_ROOT, parent); parent = parentOf(parent)) {
        if (this.#entry(parent)?.kind === "file") throw fail("not_file");
      }
      throw fail("not_found");
    }
    if (entry.kind !== "file") throw fail("not_file");
    return entry;
  }

  /**
   * The file's bytes in stored order, one piece per call: the home's own pieces when it has
   * `readChunk` (only what is asked for is read), else CHUNK_BYTES slices of the whole file (at
   * most `maxFileBytes`, read at the first call).
   */
  chunks(path: string): () => Promise<Uint8Array | undefined> {
    path = workspacePath(path);
    const entry = this.#file(path);
    let seq = 0;
    const home = this.#home;
    if (home.readChunk !== undefined) {
      // Never more than the size the home stated, and an empty piece ends the file: a home cannot keep a read going.
      let remaining = entry.size;
      return async () => {
        if (remaining <= 0) return undefined;
        const index = seq;
        seq += 1;
        const chunk: unknown = this.#call(() => home.readChunk!(path, index));
        if (chunk === undefined) return undefined;
        if (!(chunk instanceof Uint8Array)) throw fail("io");
        if (chunk.length === 0) return undefined;
        const piece = chunk.length > remaining ? chunk.subarray(0, remaining) : chunk;
        remaining -= piece.length;
        return piece;
      };
    }
    let bytes: Uint8Array | undefined;
    return async () => {
      bytes ??= this.readBytes(path);
      const at = seq * CHUNK_BYTES;
      seq += 1;
      return at < bytes.length ? bytes.subarray(at, at + CHUNK_BYTES) : undefined;
    };
  }

  /** The whole file (at most `maxFileBytes`, checked before anything is read and again on what the home answers). */
  readBytes(path: string, maxBytes: number = this.maxFileBytes): Uint8Array {
    path = workspacePath(path);
    const entry = this.#file(path);
    if (entry.size > maxBytes) throw fail("too_large");
    const bytes: unknown = this.#call(() => this.#home.readBytes(path));
    if (!(bytes instanceof Uint8Array)) throw fail("io");
    if (bytes.length > maxBytes) throw fail("too_large");
    return bytes;
  }

  /**
   * Creates or replaces the file at `path` (absolute), creating missing parents. Refused, with
   * nothing changed: larger than `maxFileBytes` (`too_large`), a directory at the path or a file
   * on the way (`not_file`).
   */
  writeBytes(path: string, bytes: Uint8Array): { readonly replaced: boolean } {
    path = workspacePath(path);
    if (path === WORKSPACE_ROOT) throw fail("not_file");
    if (bytes.length > this.maxFileBytes) throw fail("too_large");
    const created: string[] = [];
    for (let parent = parentOf(path); parent !== WORKSPACE_ROOT && isInside(WORKSPACE_ROOT, parent); parent = parentOf(parent)) {
      const existing = this.#entry(parent);
      if (existing?.kind === "file") throw fail("not_file");
      if (existing === undefined) created.unshift(parent);
    }
    const existing = this.#entry(path);
    if (existing?.kind === "directory") throw fail("not_file");
    this.#call(() => this.#home.writeBytes(path, bytes));
    this.#changed([...created, path]);
    return { replaced: existing !== undefined };
  }

  /**
   * The entries directly in `directory` (absolute), in name order (UTF-8 byte order), with their
   * sizes and last modification (ms): `not_found`, or `not_file` when it is a file. Entries a
   * home answers with an unusable name or kind are left out.
   */
  list(directory: string): { readonly name: string; readonly kind: EntryKind; readonly size: number; readonly updatedAt: number }[] {
    directory = workspacePath(directory);
    const entry = this.#entry(directory);
    if (entry === undefined) throw fail("not_found");
    if (entry.kind !== "directory") throw fail("not_file");
    const answered: unknown = this.#call(() => this.#home.list(directory));
    if (!Array.isArray(answered)) throw fail("io");
    const seen = new Set<string>();
    const children: { name: string; kind: EntryKind; size: number; updatedAt: number }[] = [];
    for (const child of answered as unknown[]) {
      if (typeof child !== "object" || child === null) continue;
      const { name, kind, size, updatedAt } = child as { name?: unknown; kind?: unknown; size?: unknown; updatedAt?: unknown };
      if (!validName(name) || !validKind(kind) || (kind === "file" && !validCount(size)) || seen.has(name)) continue;
      seen.add(name);
      children.push({ name, kind, size: kind === "file" ? (size as number) : 0, updatedAt: validCount(updatedAt) ? updatedAt : 0 });
    }
    return byUtf8(children, (child) => child.name);
  }

  /** Every file at or under the canonical `prefix`. */
  #files(prefix: string): string[] {
    const entry = this.#entry(prefix);
    if (entry === undefined) return [];
    if (entry.kind === "file") return [prefix];
    const out: string[] = [];
    const pending = [prefix];
    while (pending.length > 0) {
      const directory = pending.pop()!;
      for (const child of this.list(directory)) {
        const path = directory === "/" ? `/${child.name}` : `${directory}/${child.name}`;
        if (child.kind === "file") out.push(path);
        else pending.push(path);
      }
    }
    return byUtf8(out, (path) => path);
  }

  /**
   * Files matching `pattern` (relative to `cwd`, default the root, or absolute), as canonical
   * paths in order, at most MAX_GLOB_RESULTS (`truncated` when more matched).
   */
  glob(pattern: string, cwd: string = WORKSPACE_ROOT): { readonly paths: string[]; readonly truncated: boolean } {
    if (pattern.length === 0 || pattern.includes("\0")) throw fail("invalid_path");
    const base = workspacePath(cwd);
    const absolute = pattern.startsWith("/") ? pattern : `${base}/${pattern}`;
    const wildcard = absolute.search(/[*?]/);
    // Everything up to the last `/` before the first wildcard is a literal directory: narrow the scan to it.
    const literal = wildcard === -1 ? absolute : absolute.slice(0, absolute.lastIndexOf("/", wildcard));
    const prefix = workspacePath(literal === "" ? "/" : literal);
    const matcher = globMatcher(wildcard === -1 ? prefix : `${prefix}${absolute.slice(literal.length)}`);
    const paths: string[] = [];
    let truncated = false;
    for (const path of this.#files(prefix)) {
      if (!matcher(path)) continue;
      if (paths.length === MAX_GLOB_RESULTS) {
        truncated = true;
        break;
      }
      paths.push(path);
    }
    return { paths, truncated };
  }

  /**
   * Lines matching `pattern` (a regular expression) in the UTF-8 files `glob` selects (default
   * every file under `cwd`), at most MAX_GREP_MATCHES; files that are not UTF-8 are skipped.
   */
  grep(pattern: string, options: { readonly cwd?: string; readonly glob?: string } = {}): { readonly matches: { path: string; line: number; text: string }[]; readonly truncated: boolean } {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, "u");
    } catch {
      throw new RangeError("grep: the pattern is not a valid regular expression");
    }
    const matches: { path: string; line: number; text: string }[] = [];
    const files = this.glob(options.glob ?? "**", options.cwd);
    for (const path of files.paths) {
      let text: string;
      try {
        text = decodeUtf8(this.readBytes(path));
      } catch {
        continue;
      }
      const lines = text.split("\n");
      for (let index = 0; index < lines.length; index++) {
        if (!regex.test(lines[index]!)) continue;
        if (matches.length === MAX_GREP_MATCHES) return { matches, truncated: true };
        matches.push({ path, line: index + 1, text: lines[index]! });
      }
    }
    return { matches, truncated: files.truncated };
  }

  // -------------------------------------------------------------------------------------------
  // WorkspaceFiles (the plugin API): relative paths resolve against `/workspace`.

  async resolvePath(input: { readonly filePath: string; readonly cwd?: string | undefined }): Promise<WorkspaceFileTarget> {
    const cwd = workspacePath(input.cwd ?? WORKSPACE_ROOT);
    const canonicalPath = workspacePath(input.filePath, cwd);
    const relative = relativeTo(cwd, canonicalPath);
    if (relative !== undefined) return { canonicalPath, resource: relative };
    const directory = this.stat(canonicalPath)?.kind === "directory" ? canonicalPath : parentOf(canonicalPath);
    const pattern = `${directory}/*`;
    return { canonicalPath, resource: canonicalPath, externalDirectory: { resource: pattern, save: pattern } };
  }

  async readText(input: { readonly filePath: string; readonly maxBytes?: number | undefined; readonly signal: AbortSignal }): Promise<{ filePath: string; content: string; byteLength: number }> {
    input.signal.throwIfAborted();
    const { maxBytes } = input;
    if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 1)) throw fail("max_bytes_exceeded");
    const path = workspacePath(input.filePath);
    const entry = this.#file(path);
    if (maxBytes !== undefined && maxBytes <= MAX_FILE_READ_BYTES && entry.size > maxBytes) throw fail("max_bytes_exceeded");
    if (entry.size > MAX_FILE_READ_BYTES) throw fail("too_large");
    const bytes = this.readBytes(path);
    return { filePath: input.filePath, content: decodeUtf8(bytes), byteLength: bytes.length };
  }

  async writeText(input: { readonly filePath: string; readonly content: string; readonly signal: AbortSignal }): Promise<{ filePath: string; byteLength: number }> {
    input.signal.throwIfAborted();
    const bytes = encoder.encode(input.content);
    this.writeBytes(workspacePath(input.filePath), bytes);
    return { filePath: input.filePath, byteLength: bytes.length };
  }

  async removeFile(input: { readonly filePath: string; readonly signal: AbortSignal }): Promise<{ filePath: string }> {
    input.signal.throwIfAborted();
    const path = workspacePath(input.filePath);
    this.#file(path);
    this.#call(() => this.#home.remove(path));
    this.#changed([path]);
    return { filePath: input.filePath };
  }

  async readDirectory(input: { readonly dirPath: string; readonly offset?: number | undefined; readonly limit?: number | undefined; readonly signal: AbortSignal }): Promise<{
    dirPath: string;
    entries: WorkspaceDirectoryEntry[];
    offset: number;
    totalEntries: number;
    truncated: boolean;
  }> {
    input.signal.throwIfAborted();
    const offset = input.offset ?? 1;
    const limit = Math.min(input.limit ?? MAX_DIRECTORY_ENTRIES, MAX_DIRECTORY_ENTRIES);
    if (!Number.isSafeInteger(offset) || offset < 1 || !Number.isSafeInteger(limit) || limit < 1) throw fail("invalid_path");
    const all = this.list(workspacePath(input.dirPath));
    const entries = all.slice(offset - 1, offset - 1 + limit).map(({ name, kind }): WorkspaceDirectoryEntry => ({ name, kind }));
    return { dirPath: input.dirPath, entries, offset, totalEntries: all.length, truncated: offset - 1 + entries.length < all.length };
  }
}
