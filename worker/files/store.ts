// The Worker's `/workspace`: files and directories in the server object's SQLite (the reference's
// "one SQLite-backed Computer Workspace" per server; no container here). Every Session of the
// server shares it. It is the plugin API's `WorkspaceFiles` (resolvePath, readText, writeText,
// removeFile, readDirectory, with the reference's `WorkspaceFileError` codes) plus what the file
// tools and the instruction loaders need: whole bytes, chunked reads, listings, glob and grep.
//
// Rules: paths are canonical and confined to `/workspace` (paths.ts); a write creates missing
// parent directories, refuses a parent that is a file (`not_file`) and a directory at the path
// (`not_file`); a file holds at most `maxFileBytes` (default MAX_WORKSPACE_FILE_BYTES, 10 MiB, what
// `edit` can load) — a larger write is `too_large` and changes nothing. Each mutation is one
// synchronous transaction (`transactionSync`): a failure leaves the store as it was. Bytes are
// kept in 512 KiB chunks (the platform caps a row at 2 MB). Failures carry only a code, never a
// path. Concurrent writers are last-writer-wins, as on the container the reference describes.
import { WorkspaceFileError, type WorkspaceDirectoryEntry, type WorkspaceFileTarget, type WorkspaceFiles } from "../../plugin/index.js";
import { MAX_DIRECTORY_ENTRIES, MAX_EDIT_FILE_BYTES, MAX_FILE_READ_BYTES } from "../../services/tools/tool.js";
import { WORKSPACE_ROOT } from "../workspace.js";
import { migrateWorkspaceFiles, type FilesStorageInput } from "./migrations.js";
import { isInside, nameOf, parentOf, relativeTo, workspacePath } from "./paths.js";

/** Largest file the store holds: what `edit` can load and rewrite (10 MiB). */
export const MAX_WORKSPACE_FILE_BYTES = MAX_EDIT_FILE_BYTES;
/** Bytes per stored chunk. */
export const CHUNK_BYTES = 512 * 1024;
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

/** One step of a glob: a literal character, `?`, `*` (within one name), `**` (anything), `**` then `/` (whole names, also none). */
type GlobToken = { readonly kind: "char"; readonly char: string } | { readonly kind: "one" | "name" | "any" | "names" };

function globTokens(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "*" && pattern[index + 1] === "*") {
      const slash = pattern[index + 2] === "/";
      tokens.push({ kind: slash ? "names" : "any" });
      index += slash ? 2 : 1;
      // Repeats add nothing but work: `**` then `/` again and again is one, `**` then more `*` is `**`.
      if (slash) while (pattern.startsWith("**/", index + 1)) index += 3;
      else while (pattern[index + 1] === "*") index += 1;
    } else if (char === "*") tokens.push({ kind: "name" });
    else if (char === "?") tokens.push({ kind: "one" });
    else tokens.push({ kind: "char", char });
  }
  return tokens;
}

/**
 * Glob syntax: `**` any depth (also none), `*` within one name, `?` one character; the rest
 * literal. Matched by simulating the pattern as a set of positions — time linear in the path
 * times the pattern, never the backtracking a regular expression of many `*` takes (a model's
 * `*a*a*a*a*a*a*b` over a long name would hold the whole server object).
 */
function globMatcher(pattern: string): (path: string) => boolean {
  const tokens = globTokens(pattern);
  const size = tokens.length;
  const close = (states: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> => {
    for (let state = 0; state < size; state++) {
      if (states[state] === 1 && tokens[state]!.kind !== "char" && tokens[state]!.kind !== "one") states[state + 1] = 1;
    }
    return states;
  };
  return (path) => {
    let current = new Uint8Array(size + 1);
    current[0] = 1;
    close(current);
    for (const char of path) {
      const next = new Uint8Array(size + 1);
      let alive = false;
      for (let state = 0; state < size; state++) {
        if (current[state] !== 1) continue;
        const token = tokens[state]!;
        if (token.kind === "char") {
          if (token.char === char) next[state + 1] = 1;
        } else if (token.kind === "one") {
          if (char !== "/") next[state + 1] = 1;
        } else if (token.kind === "name") {
          if (char !== "/") next[state] = 1;
        } else if (token.kind === "any") next[state] = 1;
        else {
          next[state] = 1;
          if (char === "/") next[state + 1] = 1;
        }
      }
      for (let state = 0; state <= size; state++) if (next[state] === 1) alive = true;
      if (!alive) return false;
      current = close(next);
    }
    return current[size] === 1;
  };
}

export class WorkspaceFileStore implements WorkspaceFiles {
  readonly #storage: FilesStorageInput;
  readonly #now: () => number;
  readonly #listeners = new Set<(path: string) => void>();
  readonly maxFileBytes: number;

  /** Opens the store, migrating its tables first (after the server migrations). */
  constructor(storage: FilesStorageInput, options: WorkspaceFileStoreOptions = {}) {
    const max = options.maxFileBytes ?? MAX_WORKSPACE_FILE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1 || max > MAX_WORKSPACE_FILE_BYTES) throw new RangeError(`maxFileBytes must be an integer from 1 to ${MAX_WORKSPACE_FILE_BYTES}`);
    this.#storage = storage;
    this.#now = options.now ?? Date.now;
    this.maxFileBytes = max;
    migrateWorkspaceFiles(storage);
  }

  /**
   * Calls `listener` with the path of every entry a committed mutation created, replaced or
   * removed (a write's new parent directories too); returns the unsubscribe. A throwing listener
   * is not the writer's failure.
   */
  onChange(listener: (path: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(paths: readonly string[]): void {
    for (const listener of this.#listeners) {
      for (const path of paths) {
        try {
          listener(path);
        } catch {
          // a watcher's problem, not the write's
        }
      }
    }
  }

  #rows(query: string, ...bindings: unknown[]): Record<string, unknown>[] {
    return this.#storage.sql.exec(query, ...bindings).toArray();
  }

  /** What is at `path` (absolute; normalised and confined like every path here), or undefined. */
  stat(path: string): StoredEntry | undefined {
    path = workspacePath(path);
    const [row] = this.#rows("SELECT kind, size FROM workspace_entry WHERE path = ?", path);
    return row === undefined ? undefined : { path, kind: row["kind"] as EntryKind, size: Number(row["size"]) };
  }

  /** The file at the canonical `path`. */
  #file(path: string): StoredEntry {
    const entry = this.stat(path);
    if (entry === undefined) {
      // A parent that is a file is `not_file`, as ENOTDIR is on Node.
      for (let parent = parentOf(path); isInside(WORKSPACE_ROOT, parent); parent = parentOf(parent)) {
        if (this.stat(parent)?.kind === "file") throw fail("not_file");
      }
      throw fail("not_found");
    }
    if (entry.kind !== "file") throw fail("not_file");
    return entry;
  }

  /** The file's bytes in stored order, one chunk per call (for paged reads: only what is asked for is read). */
  chunks(path: string): () => Promise<Uint8Array | undefined> {
    path = workspacePath(path);
    this.#file(path);
    let seq = 0;
    return async () => {
      const [row] = this.#rows("SELECT bytes FROM workspace_chunk WHERE path = ? AND seq = ?", path, seq);
      seq += 1;
      return row === undefined ? undefined : new Uint8Array(row["bytes"] as ArrayBuffer);
    };
  }

  /** The whole file (at most `maxFileBytes`, checked before anything is read). */
  readBytes(path: string, maxBytes: number = this.maxFileBytes): Uint8Array {
    path = workspacePath(path);
    const entry = this.#file(path);
    if (entry.size > maxBytes) throw fail("too_large");
    const out = new Uint8Array(entry.size);
    let at = 0;
    for (const row of this.#rows("SELECT bytes FROM workspace_chunk WHERE path = ? ORDER BY seq", path)) {
      const chunk = new Uint8Array(row["bytes"] as ArrayBuffer);
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }

  /**
   * Creates or replaces the file at `path` (absolute), creating missing parents, in one
   * transaction. Refused, with nothing changed: larger than `maxFileBytes` (`too_large`), a
   * directory at the path or a file on the way (`not_file`).
   */
  writeBytes(path: string, bytes: Uint8Array): { readonly replaced: boolean } {
    path = workspacePath(path);
    if (path === WORKSPACE_ROOT) throw fail("not_file");
    if (bytes.length > this.maxFileBytes) throw fail("too_large");
    const created: string[] = [];
    const result = this.#storage.transactionSync(() => {
      const now = this.#now();
      const chain: string[] = [];
      for (let parent = parentOf(path); parent !== WORKSPACE_ROOT && isInside(WORKSPACE_ROOT, parent); parent = parentOf(parent)) chain.unshift(parent);
      for (const directory of chain) {
        const existing = this.stat(directory);
        if (existing?.kind === "file") throw fail("not_file");
        if (existing === undefined) {
          this.#storage.sql.exec(
            "INSERT INTO workspace_entry (path, parent, name, kind, size, updated_at) VALUES (?, ?, ?, 'directory', 0, ?)",
            directory, parentOf(directory), nameOf(directory), now,
          );
          created.push(directory);
        }
      }
      const existing = this.stat(path);
      if (existing?.kind === "directory") throw fail("not_file");
      this.#storage.sql.exec(
        `INSERT INTO workspace_entry (path, parent, name, kind, size, updated_at) VALUES (?, ?, ?, 'file', ?, ?)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at`,
        path, parentOf(path), nameOf(path), bytes.length, now,
      );
      this.#storage.sql.exec("DELETE FROM workspace_chunk WHERE path = ?", path);
      for (let seq = 0; seq * CHUNK_BYTES < bytes.length; seq++) {
        this.#storage.sql.exec("INSERT INTO workspace_chunk (path, seq, bytes) VALUES (?, ?, ?)", path, seq, bytes.slice(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES).buffer);
      }
      return { replaced: existing !== undefined };
    });
    this.#changed([...created, path]);
    return result;
  }

  /**
   * The entries directly in `directory` (absolute), in name order (SQLite's binary collation:
   * UTF-8 byte order), with their sizes and last modification (ms): `not_found`, or `not_file`
   * when it is a file.
   */
  list(directory: string): { readonly name: string; readonly kind: EntryKind; readonly size: number; readonly updatedAt: number }[] {
    directory = workspacePath(directory);
    const entry = this.stat(directory);
    if (entry === undefined) throw fail("not_found");
    if (entry.kind !== "directory") throw fail("not_file");
    return this.#rows("SELECT name, kind, size, updated_at FROM workspace_entry WHERE parent = ? ORDER BY name", directory).map((row) => ({
      name: String(row["name"]),
      kind: row["kind"] as EntryKind,
      size: Number(row["size"]),
      updatedAt: Number(row["updated_at"]),
    }));
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
    for (const row of this.#rows("SELECT path FROM workspace_entry WHERE kind = 'file' AND (path = ? OR substr(path, 1, ?) = ?) ORDER BY path", prefix, prefix.length + 1, `${prefix}/`)) {
      const path = String(row["path"]);
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
    this.#storage.transactionSync(() => {
      this.#storage.sql.exec("DELETE FROM workspace_chunk WHERE path = ?", path);
      this.#storage.sql.exec("DELETE FROM workspace_entry WHERE path = ?", path);
    });
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
