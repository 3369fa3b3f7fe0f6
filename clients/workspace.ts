// Watchers for the workspace streams (spec/workspace-files.tsp), over the shared reconnect loop
// of watch.ts. Neither stream replays: `watchWorkspaceFiles` reconnects with a new watch, whose
// `files.ready` means "discard the cursor and list again" (a dropped connection may have missed
// a change); `readWorkspaceFile` drains one read, checks contiguous offsets, size and the
// SHA-256 of the whole content against `file.end`, and after a dropped connection reads again
// pinned to the version it had begun (`expectedVersion`), so it never mixes two versions.
import * as sdk from "../generated/client/sdk.gen.js";
import type { FileReadEvent, FilesStreamEvent, WorkspacePath } from "../generated/client/types.gen.js";
import { ZeClientError, type ZeClient } from "./client.js";
import { follow, type Reconnecting, type WatchOptions } from "./watch.js";

export type WorkspaceFilesLifecycle =
  | ({ readonly type: "files.reconnecting" } & Reconnecting)
  /** A new watch is open after a reconnect; its `files.ready` follows. */
  | { readonly type: "files.resumed" };

export interface WatchWorkspaceFilesOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  /** The directory (absent: the workdir). */
  readonly path?: WorkspacePath | undefined;
  /** Every event but heartbeats. Not awaited. */
  readonly onEvent: (event: Exclude<FilesStreamEvent, { type: "files.heartbeat" }>) => void;
  readonly onLifecycle?: ((event: WorkspaceFilesLifecycle) => void) | undefined;
}

/** Why a files watch ended by itself. */
export interface WorkspaceFilesEnded {
  readonly reason: "deleted" | "replaced";
}

/**
 * Follows a directory until it is deleted or replaced (resolves with the reason), or until
 * `signal` aborts (resolves undefined); rejects on `files.error` or a final failure.
 */
export async function watchWorkspaceFiles(client: ZeClient, options: WatchWorkspaceFilesOptions): Promise<WorkspaceFilesEnded | undefined> {
  let ended: WorkspaceFilesEnded | undefined;
  let resuming = false;
  const done = await follow<FilesStreamEvent>(client, options, {
    cursor: () => undefined,
    open: () => (extra) =>
      sdk.watchFiles({
        client: client.client,
        path: { server: options.server, sessionId: options.sessionId },
        ...(options.path ? { query: { path: options.path.bytesBase64 } } : {}),
        ...extra,
      }),
    onConnected: () => {
      if (!resuming) return;
      resuming = false;
      options.onLifecycle?.({ type: "files.resumed" });
    },
    onReconnecting: (info) => {
      resuming = true;
      options.onLifecycle?.({ type: "files.reconnecting", ...info });
    },
    onEvent: (event) => {
      if (event.type === "files.heartbeat") return false;
      if (event.type === "files.error") throw new ZeClientError(0, { _tag: "WorkspaceWatchFailed", message: event.message });
      options.onEvent(event);
      if (event.type === "files.unavailable") {
        ended = { reason: event.reason };
        return true;
      }
      return false;
    },
  });
  return done ? ended : undefined;
}

export interface ReadWorkspaceFileOptions extends WatchOptions {
  readonly server: string;
  readonly sessionId: string;
  readonly path: WorkspacePath;
  /** Read only this version; another one answers `changed`. */
  readonly expectedVersion?: string | undefined;
}

/** A completely delivered and verified file, or what was found instead. */
export type WorkspaceFileRead =
  | { readonly kind: "text" | "image"; readonly mimeType: string; readonly version: string; readonly size: number; readonly sha256: string; readonly bytes: Uint8Array }
  | { readonly kind: "absent" }
  | { readonly kind: "changed"; readonly version: string }
  | { readonly kind: "binary"; readonly version: string; readonly size: number }
  | { readonly kind: "unsupported"; readonly reason: "directory" | "symlink" | "special" | "too_large" };

function fromBase64(value: string): Uint8Array {
  const binary = atob(value);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

const invalid = (message: string): ZeClientError => new ZeClientError(0, { _tag: "InvalidResponse", message });

/** Reads one file to a verified result; rejects when the delivery does not check out. */
export async function readWorkspaceFile(client: ZeClient, options: ReadWorkspaceFileOptions): Promise<WorkspaceFileRead> {
  let pinned = options.expectedVersion;
  let result: WorkspaceFileRead | undefined;
  let begin: Extract<FileReadEvent, { type: "file.begin" }> | undefined;
  let chunks: Uint8Array[] = [];
  let received = 0;
  const finished = await follow<FileReadEvent>(client, options, {
    cursor: () => undefined,
    open: () => (extra) => {
      // Each connection is a new read: whatever a dropped one delivered is discarded.
      begin = undefined;
      chunks = [];
      received = 0;
      return sdk.readFile({
        client: client.client,
        path: { server: options.server, sessionId: options.sessionId },
        query: { path: options.path.bytesBase64, ...(pinned !== undefined ? { expectedVersion: pinned } : {}) },
        ...extra,
      });
    },
    onEvent: async (event) => {
      switch (event.type) {
        case "file.begin":
          begin = event;
          pinned ??= event.version;
          return false;
        case "file.chunk": {
          if (!begin) throw invalid("file.chunk before file.begin");
          if (event.offset !== received) throw invalid(`file.chunk at offset ${event.offset}, expected ${received}`);
          const bytes = fromBase64(event.bytesBase64);
          chunks.push(bytes);
          received += bytes.length;
          return false;
        }
        case "file.end": {
          if (!begin) throw invalid("file.end before file.begin");
          if (event.version !== begin.version || event.size !== begin.size || received !== event.size) throw invalid("file.end does not match the delivered content");
          const bytes = new Uint8Array(received);
          let offset = 0;
          for (const chunk of chunks) {
            bytes.set(chunk, offset);
            offset += chunk.length;
          }
          if ((await sha256Hex(bytes)) !== event.sha256) throw invalid("The delivered content does not match its SHA-256");
          result = { kind: begin.content, mimeType: begin.mimeType, version: event.version, size: event.size, sha256: event.sha256, bytes };
          return true;
        }
        case "file.absent":
          result = { kind: "absent" };
          return true;
        case "file.changed":
          result = { kind: "changed", version: event.version };
          return true;
        case "file.binary":
          result = { kind: "binary", version: event.version, size: event.size };
          return true;
        case "file.unsupported":
          result = { kind: "unsupported", reason: event.kind };
          return true;
      }
    },
  });
  if (!finished || !result) throw options.signal?.reason instanceof Error ? options.signal.reason : new DOMException("The read was aborted", "AbortError");
  return result;
}
