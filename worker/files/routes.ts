// The workspace file routes of a Worker server (spec/workspace-files.tsp `listFiles`, `readFile`,
// `watchFiles`) over the `/workspace` store, with the Node host's shapes and rules
// (services/workspace/files/list.ts, read.ts, watch.ts; services/host/workspace-files-handlers.ts):
//
// - Paths are `WorkspacePath`s relative to the Session workdir, decoded and refused exactly as on
//   Node (`decodeWorkspacePath`: canonical Base64, no `.`/`..`/empty segments, not absolute, no
//   NUL, 4,096 bytes, 255 per name), and private state (`.git` anywhere, `.ze-harness` at the
//   workdir root) is a 403, never listed or read. So nothing outside the workdir can be named.
// - A workdir nothing was written to yet is an empty directory (the store makes directories as
//   files are written into them); a file in its place is Node's 503 ("The Session workdir no
//   longer exists"); a directory missing on the way 404 (listing) or `file.absent` (read); a file
//   on the way 400.
// - Listing: at most 128 entries a page, aiming at 512 KiB, sorted by name bytes (the store's
//   binary collation), cursor = directory identity + last name (a stale one 409). Directories in
//   the store are never removed or replaced (only files are), so a directory's identity is a
//   digest of its path and a cursor goes stale only by naming another directory.
// - Reading: `file.begin`, chunks of at most 32 KiB (text ends at UTF-8 boundaries), `file.end`
//   with version, size and SHA-256; or `file.absent`, `file.changed` (not `expectedVersion`),
//   `file.binary`, `file.unsupported` (`directory`). The version binds the bytes and the path (the
//   store has no inodes). A configured `read` deny (HARNESS_PERMISSIONS, then the Session's rules)
//   refuses the read with 403, as on Node.
// - Watching: `files.ready`, then `files.changed` when the store changes an entry directly in the
//   directory (the store tells its listeners of every write and removal: no polling), a heartbeat
//   at least every 15 s; directories are never removed here, so `files.unavailable` cannot occur.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import type { FileReadEvent, FilesStreamEvent, PermissionRule, WorkspaceEntry, WorkspaceListPage } from "../../generated/client/types.gen.js";
import type { Handlers, SseMessage } from "../../generated/server/routes.js";
import { isWorkspaceFileError } from "../../plugin/index.js";
import { absoluteWorkdir } from "../../services/contract/paths.js";
import { Failure, conflict, forbidden, validationFailure } from "../../services/contract/failure.js";
import { evaluateConfigured } from "../../services/core/permissions/index.js";
import type { SessionService } from "../../services/core/sessions.js";
import type { RequestContext } from "../../services/http/handler.js";
import { compareBytes, decodeWorkspacePath, encodePath, isPrivatePath, PRIVATE_ROOT_NAMES, utf8OrUndefined, type DecodedPath } from "../../services/workspace/files/path.js";
import { contentItems, MAX_READ_FILE_BYTES } from "../../services/workspace/files/content.js";
import { decodeListCursor, encodeListCursor } from "../../services/workspace/files/cursor.js";
import { WORKSPACE_ROOT } from "../workspace.js";
import { parentOf, workspacePath } from "./paths.js";
import type { StoredEntry, WorkspaceFileStore } from "./store.js";

export const MAX_LIST_ENTRIES = 128;
export const LIST_TARGET_BYTES = 512 * 1024;
export const WATCH_HEARTBEAT_MS = 15_000;

type ReadItem = FileReadEvent extends infer E ? (E extends { sequence: number } ? Omit<E, "sequence"> : never) : never;
type WatchItem = FilesStreamEvent extends infer E ? (E extends { sequence: number } ? Omit<E, "sequence"> : never) : never;

export interface WorkspaceFileRoutesInput {
  readonly sessions: SessionService;
  readonly store: WorkspaceFileStore;
  /** The Server permission scope (HARNESS_PERMISSIONS): a `read` deny there refuses a file read. */
  readonly serverRules?: readonly PermissionRule[] | undefined;
  /** Heartbeat interval of a watch (default 15 s). */
  readonly heartbeatMs?: number;
}

type FileOperations = Pick<Handlers<RequestContext>, "listFiles" | "readFile" | "watchFiles">;

const workdirGone = (): Failure => new Failure({ _tag: "UnavailableError", message: "The Session workdir no longer exists", reason: "service_unavailable" });
const notFoundPath = (message: string): Failure => new Failure({ _tag: "NotFoundError", message });

/** Decodes a path parameter and refuses private state, as Node's `decodeRequestPath`. */
function requestPath(value: string, field = "path"): DecodedPath {
  const decoded = decodeWorkspacePath(value, field);
  if (isPrivatePath(decoded)) throw forbidden(`${field} names private state (.git or .ze-harness), which is never listed or read`);
  return decoded;
}

/** What the store holds at `path` (absolute); undefined when nothing can be there (too long for the store). */
function entryAt(store: WorkspaceFileStore, path: string): StoredEntry | undefined {
  try {
    return store.stat(workspacePath(path));
  } catch (error) {
    if (isWorkspaceFileError(error)) return undefined;
    throw error;
  }
}

/**
 * The store path of the directory `segments` name below the workdir, each step checked as Node
 * opens them: undefined when one is missing (or its bytes are not UTF-8: no store name is), a 400
 * when one is a file. The workdir itself must exist.
 */
function walkDirectories(store: WorkspaceFileStore, workdir: string, segments: readonly Uint8Array[]): string | undefined {
  // The store makes directories as files are written into them, so a workdir nothing was written
  // to yet is an empty directory, not a missing one; only a file in its place is Node's 503.
  const root = entryAt(store, workdir);
  if (root?.kind === "file") throw workdirGone();
  if (root === undefined) return segments.length === 0 ? workdir : undefined;
  let directory = workdir;
  for (const segment of segments) {
    const name = utf8OrUndefined(segment);
    if (name === undefined) return undefined;
    const next = `${directory}/${name}`;
    const entry = entryAt(store, next);
    if (entry === undefined) return undefined;
    if (entry.kind !== "directory") throw validationFailure("path passes through something that is not a directory");
    directory = next;
  }
  return directory;
}

const identityOf = (directory: string): string => `ws-${createHash("sha256").update(directory).digest("hex").slice(0, 32)}`;

/** One page of a directory's direct children (Node's `listFiles` over the store). */
export function listStoredFiles(store: WorkspaceFileStore, workdir: string, pathValue: string | undefined, cursorValue: string | undefined): WorkspaceListPage {
  const path = pathValue === undefined ? null : requestPath(pathValue);
  const directory = walkDirectories(store, workdir, path?.segments ?? []);
  if (directory === undefined) throw notFoundPath("No directory exists at path");
  const identity = identityOf(directory);
  const cursor = cursorValue === undefined ? undefined : decodeListCursor(cursorValue);
  if (cursor && cursor.directory !== identity) throw conflict("The directory was replaced since this cursor was made: reread from the first page");
  const atRoot = path === null;
  const children = (entryAt(store, directory) === undefined ? [] : store.list(directory))
    .map((child) => ({ ...child, bytes: Buffer.from(child.name) }))
    .filter((child) => child.name !== ".git" && !(atRoot && PRIVATE_ROOT_NAMES.includes(child.name)))
    .filter((child) => !cursor || compareBytes(child.bytes, cursor.after) > 0)
    .sort((a, b) => compareBytes(a.bytes, b.bytes));
  const prefix = path ? Buffer.concat([path.bytes, Buffer.from("/")]) : Buffer.alloc(0);
  const entries: WorkspaceEntry[] = [];
  let bytes = 0;
  let last: Buffer | undefined;
  let index = 0;
  for (; index < children.length && entries.length < MAX_LIST_ENTRIES; index++) {
    const child = children[index]!;
    const entry: WorkspaceEntry = {
      path: encodePath(Buffer.concat([prefix, child.bytes])),
      kind: child.kind,
      ...(child.kind === "file" ? { size: child.size } : {}),
      modifiedAt: child.updatedAt,
    };
    const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (entries.length > 0 && bytes + size > LIST_TARGET_BYTES) break;
    entries.push(entry);
    bytes += size;
    last = child.bytes;
  }
  const more = index < children.length && last !== undefined;
  return {
    path: path ? encodePath(path.bytes) : null,
    directoryIdentity: identity,
    entries,
    ...(more ? { next: encodeListCursor({ directory: identity, after: last! }) } : {}),
  };
}

function versionOf(content: Uint8Array, path: Uint8Array): string {
  const hash = createHash("sha256");
  hash.update(createHash("sha256").update(content).digest());
  hash.update("workspace-store/");
  hash.update(path);
  return `v1-${hash.digest("base64url")}`;
}

/** The items of one file read (Node's `captureFile` over the store). */
export function captureStoredFile(store: WorkspaceFileStore, workdir: string, path: DecodedPath, expectedVersion: string | undefined): ReadItem[] {
  if (expectedVersion !== undefined && (expectedVersion.length === 0 || expectedVersion.length > 256)) throw validationFailure("expectedVersion must be a version this host returned");
  const parent = walkDirectories(store, workdir, path.segments.slice(0, -1));
  const name = utf8OrUndefined(path.segments.at(-1)!);
  if (parent === undefined || name === undefined) return [{ type: "file.absent" }];
  const entry = entryAt(store, `${parent}/${name}`);
  if (entry === undefined) return [{ type: "file.absent" }];
  if (entry.kind === "directory") return [{ type: "file.unsupported", kind: "directory" }];
  if (entry.size > MAX_READ_FILE_BYTES) return [{ type: "file.unsupported", kind: "too_large" }];
  const content = Buffer.from(store.readBytes(entry.path));
  const version = versionOf(content, path.bytes);
  if (expectedVersion !== undefined && expectedVersion !== version) return [{ type: "file.changed", version }];
  return contentItems(content, version);
}

/** Numbers a finite or endless item sequence as SSE messages (`id:` = `sequence`), as on Node. */
async function* sequenced<T extends { type: string }>(items: AsyncIterable<T> | Iterable<T>): AsyncGenerator<SseMessage<T & { sequence: number }>> {
  let sequence = 0;
  for await (const item of items) {
    sequence += 1;
    yield { id: String(sequence), event: item.type, data: { ...item, sequence } };
  }
}

/** A watch of `directory`: ready, then a change whenever the store changes one of its direct entries. */
async function* watchStored(store: WorkspaceFileStore, directory: string, signal: AbortSignal | undefined, heartbeatMs: number): AsyncGenerator<WatchItem> {
  let dirty = false;
  let wake: (() => void) | undefined;
  const stop = store.onChange((path) => {
    // An entry directly in the directory was created, replaced or removed (a write reports the
    // parent directories it created too).
    if (parentOf(path) !== directory) return;
    dirty = true;
    wake?.();
  });
  const onAbort = (): void => wake?.();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    yield { type: "files.ready", directoryIdentity: identityOf(directory) };
    while (!signal?.aborted) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (dirty) resolve();
        timer = setTimeout(resolve, heartbeatMs);
      });
      clearTimeout(timer);
      wake = undefined;
      if (signal?.aborted) break;
      if (dirty) {
        dirty = false;
        yield { type: "files.changed" };
      } else {
        yield { type: "files.heartbeat" };
      }
    }
  } finally {
    stop();
    signal?.removeEventListener("abort", onAbort);
  }
}

export function workspaceFileRoutes({ sessions, store, serverRules, heartbeatMs }: WorkspaceFileRoutesInput): FileOperations {
  const workdirOf = async (server: string, sessionId: string) => {
    const session = await sessions.get(server, sessionId);
    return { session, workdir: absoluteWorkdir(WORKSPACE_ROOT, session.workdir) };
  };
  return {
    listFiles: async ({ path, query }) => {
      const { workdir } = await workdirOf(path.server, path.sessionId);
      return { status: 200 as const, body: listStoredFiles(store, workdir, query?.path, query?.cursor) };
    },
    readFile: async ({ path, query }) => {
      const { session, workdir } = await workdirOf(path.server, path.sessionId);
      const decoded = requestPath(query.path);
      // The Session's permission boundary: a configured `read` deny on the path refuses it.
      const resource = Buffer.from(decoded.bytes).toString("utf8");
      const decision = evaluateConfigured({ action: "read", resource }, { server: serverRules, session: session.configuration.permissions });
      if (decision.effect === "deny") throw forbidden("Reading this path is denied by the Session's permission rules");
      return { status: 200, stream: sequenced(captureStoredFile(store, workdir, decoded, query.expectedVersion)) };
    },
    watchFiles: async ({ path, query }, context) => {
      const { workdir } = await workdirOf(path.server, path.sessionId);
      const decoded = query?.path === undefined ? null : requestPath(query.path);
      const directory = walkDirectories(store, workdir, decoded?.segments ?? []);
      if (directory === undefined) throw notFoundPath("No directory exists at path");
      return { status: 200, stream: sequenced(watchStored(store, directory, context.signal, heartbeatMs ?? WATCH_HEARTBEAT_MS)) };
    },
  };
}
