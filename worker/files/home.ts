// The file home port: the synchronous primitives a `/workspace` file home provides, and the
// object-SQLite implementation of them (the Worker's own store). Harness reads and writes a home
// only through WorkspaceFileStore (store.ts), which canonicalises and confines every path to
// `/workspace`, enforces the WorkspaceFileError codes and builds glob, grep and chunked reads on
// these primitives: a home sees canonical absolute paths inside `/workspace` only, and its answers
// are checked, never trusted. An embedder provides its own home as `workspace.files`
// (worker/host-workspace.ts).
//
// SQLite home rules: a write creates missing parent directories in one synchronous transaction
// (`transactionSync`) with the file; a failure leaves the store as it was. Bytes are kept in
// 512 KiB chunks (the platform caps a row at 2 MB).
import { WorkspaceFileError } from "../../plugin/index.js";
import { WORKSPACE_ROOT } from "../workspace.js";
import { migrateWorkspaceFiles, type FilesStorageInput } from "./migrations.js";
import { isInside, nameOf, parentOf } from "./paths.js";

/** Bytes per stored chunk. */
export const CHUNK_BYTES = 512 * 1024;

/** What is at a path of a file home. */
export interface WorkspaceFileHomeEntry {
  readonly kind: "file" | "directory";
  /** Bytes (files); 0 for directories. */
  readonly size: number;
  /** Last modification, ms since the epoch; 0 when omitted. */
  readonly updatedAt?: number;
}

/** One entry directly in a directory of a file home. */
export interface WorkspaceFileHomeChild extends WorkspaceFileHomeEntry {
  /** One path segment (no `/`). */
  readonly name: string;
}

/**
 * A `/workspace` file home (synchronous, like Durable Object storage). Every path it receives
 * is canonical, absolute and inside `/workspace`; Harness has already checked what the codes
 * need (no parent of a written path is a file, the path is no directory, sizes fit). A primitive
 * may throw a `WorkspaceFileError` (its code is kept); any other throw is the code `io`.
 */
export interface WorkspaceFileHome {
  /** What is at `path`, or undefined. `/workspace` itself is a directory even when undefined. */
  stat(path: string): WorkspaceFileHomeEntry | undefined;
  /** The entries directly in the directory `path` (any order). */
  list(path: string): readonly WorkspaceFileHomeChild[];
  /** The whole file at `path`. */
  readBytes(path: string): Uint8Array;
  /**
   * Optional, for paged reads: the file's `index`-th piece (0-based, any size), undefined past
   * its end. Without it, a paged read reads the whole file (at most the store's `maxFileBytes`).
   */
  readChunk?(path: string, index: number): Uint8Array | undefined;
  /** Creates or replaces the file at `path`, creating missing parent directories. */
  writeBytes(path: string, bytes: Uint8Array): void;
  /** Removes the file at `path`. */
  remove(path: string): void;
  /**
   * Optional: calls `listener` with the path of every entry that any change created, replaced or
   * removed (also the ones Harness made through this home); returns the unsubscribe. Without it,
   * Harness reports only its own writes and removals (GET …/files/events).
   */
  onChange?(listener: (path: string) => void): () => void;
}

const fail = (code: WorkspaceFileError["code"]): WorkspaceFileError => new WorkspaceFileError({ code });

/** The file home in the server object's SQLite (`workspace_entry`, `workspace_chunk`). */
export class SqliteWorkspaceHome implements WorkspaceFileHome {
  readonly #storage: FilesStorageInput;
  readonly #now: () => number;
  readonly #listeners = new Set<(path: string) => void>();

  /** Opens the home, migrating its tables first (after the server migrations). */
  constructor(storage: FilesStorageInput, now: () => number = Date.now) {
    this.#storage = storage;
    this.#now = now;
    migrateWorkspaceFiles(storage);
  }

  /** A throwing listener is not the writer's failure. */
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

  stat(path: string): WorkspaceFileHomeEntry | undefined {
    const [row] = this.#rows("SELECT kind, size, updated_at FROM workspace_entry WHERE path = ?", path);
    return row === undefined ? undefined : { kind: row["kind"] as "file" | "directory", size: Number(row["size"]), updatedAt: Number(row["updated_at"]) };
  }

  /** In name order (SQLite's binary collation: UTF-8 byte order). */
  list(path: string): WorkspaceFileHomeChild[] {
    return this.#rows("SELECT name, kind, size, updated_at FROM workspace_entry WHERE parent = ? ORDER BY name", path).map((row) => ({
      name: String(row["name"]),
      kind: row["kind"] as "file" | "directory",
      size: Number(row["size"]),
      updatedAt: Number(row["updated_at"]),
    }));
  }

  readBytes(path: string): Uint8Array {
    const entry = this.stat(path);
    if (entry === undefined) throw fail("not_found");
    if (entry.kind !== "file") throw fail("not_file");
    const out = new Uint8Array(entry.size);
    let at = 0;
    for (const row of this.#rows("SELECT bytes FROM workspace_chunk WHERE path = ? ORDER BY seq", path)) {
      const chunk = new Uint8Array(row["bytes"] as ArrayBuffer);
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }

  /** One stored chunk: only what a paged read asks for is read. */
  readChunk(path: string, index: number): Uint8Array | undefined {
    const [row] = this.#rows("SELECT bytes FROM workspace_chunk WHERE path = ? AND seq = ?", path, index);
    return row === undefined ? undefined : new Uint8Array(row["bytes"] as ArrayBuffer);
  }

  writeBytes(path: string, bytes: Uint8Array): void {
    const created: string[] = [];
    this.#storage.transactionSync(() => {
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
      if (this.stat(path)?.kind === "directory") throw fail("not_file");
      this.#storage.sql.exec(
        `INSERT INTO workspace_entry (path, parent, name, kind, size, updated_at) VALUES (?, ?, ?, 'file', ?, ?)
         ON CONFLICT (path) DO UPDATE SET size = excluded.size, updated_at = excluded.updated_at`,
        path, parentOf(path), nameOf(path), bytes.length, now,
      );
      this.#storage.sql.exec("DELETE FROM workspace_chunk WHERE path = ?", path);
      for (let seq = 0; seq * CHUNK_BYTES < bytes.length; seq++) {
        this.#storage.sql.exec("INSERT INTO workspace_chunk (path, seq, bytes) VALUES (?, ?, ?)", path, seq, bytes.slice(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES).buffer);
      }
    });
    this.#changed([...created, path]);
  }

  remove(path: string): void {
    this.#storage.transactionSync(() => {
      this.#storage.sql.exec("DELETE FROM workspace_chunk WHERE path = ?", path);
      this.#storage.sql.exec("DELETE FROM workspace_entry WHERE path = ?", path);
    });
    this.#changed([path]);
  }
}

/** Why a `workspace.files` option cannot be used as a file home. */
export function fileHomeProblem(files: unknown): string | undefined {
  if (typeof files !== "object" || files === null) return "files must be an object ({ stat, list, readBytes, writeBytes, remove, readChunk?, onChange? })";
  for (const name of ["stat", "list", "readBytes", "writeBytes", "remove"] as const) {
    if (typeof (files as Record<string, unknown>)[name] !== "function") return `files must have a ${name} function`;
  }
  const onChange = (files as { onChange?: unknown }).onChange;
  if (onChange !== undefined && typeof onChange !== "function") return "files.onChange must be a function when given";
  const readChunk = (files as { readChunk?: unknown }).readChunk;
  if (readChunk !== undefined && typeof readChunk !== "function") return "files.readChunk must be a function when given";
  return undefined;
}
