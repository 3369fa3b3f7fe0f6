// Turn patches and rewind. Each Turn's workdir changes are recorded around it (`observer`,
// called by the Turn runner) by the Recorder (recording.ts: what is recorded in each
// `workspace.recording` mode, and what it costs), and file tools record a file's content before
// they write it (`observer.beforeWrite`). The Session's last recorded state is durable
// (`workspace_manifest`), so a Turn lost to a crash is captured on demand.
//
// `rewind` restores every file the Turn and the later Turns changed to its state before the
// Turn — refused, naming the files, when any of them is not what the last of those Turns left
// (changed outside the harness since, `reason: "changed"`) or its earlier content was not
// recorded (`reason: "not_recorded"`) — and, unless `filesOnly`, hides those Turns from later
// work (their ids join every later Turn's `excludedTurnIds`). What only the rewound Turns needed
// is freed.
import { Buffer } from "node:buffer";
import type { RewindConflictReason, TurnPatch, TurnPatchPage, TurnRewind } from "../../../generated/client/types.gen.js";
import { conflict, Failure, notFound, validationFailure } from "../../contract/failure.js";
import { sessions as sessionStore, turns as turnStore, workspace as store, type StorageHandle, type StorageTransaction, type StoredPatchFile, type TurnPatchRow, type TurnRow } from "../../storage/index.js";
import { compareBytes } from "../../workspace/files/path.js";
import { sha256Hex } from "../../workspace/files/snapshot.js";
import { KeyedSerial } from "../../contract/serial.js";
import { isPathChanged } from "../../workspace/files/verified.js";
import { Recorder, type RecordingMode, type SettleWrite } from "./recording.js";
import { currentDigest, restore } from "./restore.js";

export type { RecordingMode } from "./recording.js";

export const MAX_PATCH_PAGE_BYTES = 256 * 1024;

/** What the runner calls around each Turn it runs, and the file tools before each write. */
export interface TurnWorkspaceObserver {
  before(row: TurnRow, workdir: string): Promise<void>;
  after(row: TurnRow, workdir: string): Promise<void>;
  /** Turns rewinds took out of the Session's conversation. */
  hiddenTurns(sessionId: string): Promise<readonly string[]>;
  /** A file tool is about to write `path` (absolute, canonical) in this Turn. */
  beforeWrite(turn: { readonly id: string; readonly sessionId: string }, workdir: string, path: string): Promise<void>;
  /** What the Turn's settlement writes in its own transaction (its patch, when that is known without a capture). */
  settleWrite(turnId: string): SettleWrite | undefined;
  /** What the settlement of a Turn lost to a crash writes in its transaction (a patch the crash kept from being written). */
  repairLost(row: TurnRow, workdir: string): Promise<((tx: StorageTransaction) => Promise<void>) | undefined>;
}

export interface RewindServiceOptions {
  readonly storage: StorageHandle;
  readonly now?: () => number;
  /** Capture failures (a workdir too large to record): logged by the host; the Turn is unaffected. */
  readonly onError?: (error: unknown) => void;
  /** The recording mode for a Session workdir (config `workspace.recording`; default "repository"). */
  readonly recording?: (workdir: string) => RecordingMode | Promise<RecordingMode>;
  /** The host's environment: where git's global excludes file is found. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A conflict naming files: the contract's 409 `RewindConflictError`. */
export class RewindConflict extends Error {
  constructor(
    message: string,
    readonly files: readonly string[],
    readonly reason: RewindConflictReason = "changed",
  ) {
    super(message);
    this.name = "RewindConflictError";
  }
  get body() {
    return { _tag: "RewindConflictError" as const, message: this.message, reason: this.reason, files: this.files.map((bytesBase64) => ({ bytesBase64 })) };
  }
}

const SETTLED = new Set(["completed", "cancelled", "failed"]);

function toWire(row: TurnPatchRow): TurnPatch {
  return {
    sessionId: row.sessionId,
    turnId: row.turnId,
    capturedAt: row.capturedAt,
    files: row.files.map((file) => ({
      path: { bytesBase64: file.path },
      change: file.change,
      content: file.content,
      ...(file.beforeSha256 !== undefined ? { beforeSha256: file.beforeSha256 } : {}),
      ...(file.beforeSize !== undefined ? { beforeSize: file.beforeSize } : {}),
      ...(file.beforeRecorded === false ? { beforeRecorded: false } : {}),
      ...(file.afterSha256 !== undefined ? { afterSha256: file.afterSha256 } : {}),
      ...(file.afterSize !== undefined ? { afterSize: file.afterSize } : {}),
    })),
    size: row.size,
    sha256: row.sha256,
  };
}

export class RewindService {
  private readonly storage: StorageHandle;
  private readonly now: () => number;
  readonly recorder: Recorder;

  constructor(private readonly options: RewindServiceOptions) {
    this.storage = options.storage;
    this.now = options.now ?? Date.now;
    this.recorder = new Recorder({ storage: this.storage, now: this.now, recording: options.recording, env: options.env });
  }

  /**
   * One chain per Session: a Turn's capture, the next Turn's recording (claimed as soon as the
   * previous one settled, while its capture may still scan), snapshots and rewinds take turns.
   */
  private readonly chains = new KeyedSerial();

  private serial<T>(sessionId: string, fn: () => Promise<T>): Promise<T> {
    return this.chains.run(sessionId, fn);
  }

  readonly observer: TurnWorkspaceObserver = {
    before: (row, workdir) => this.serial(row.sessionId, () => this.guard(row.sessionId, () => this.recorder.recordBefore(row, workdir))),
    after: (row, workdir) => this.serial(row.sessionId, () => this.guard(row.sessionId, () => this.recorder.afterTurn(row, workdir))),
    hiddenTurns: (sessionId) => store.hiddenTurnIds(this.storage, sessionId),
    // A before-image that cannot be taken never stops the write: the file is then unrecorded.
    beforeWrite: (turn, workdir, path) => this.guard(turn.sessionId, () => this.recorder.beforeWrite(turn, workdir, path)),
    settleWrite: (turnId) => this.recorder.settleWrite(turnId),
    repairLost: (row, workdir) => this.recorder.repairLost(row, workdir),
  };

  private async guard(sessionId: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      // A Session deleted while its Turn's workdir was being scanned took its manifest and patches
      // with it (ON DELETE CASCADE): the write that then fails (a foreign key) recorded nothing that
      // anyone could read. Only a failure for a Session that still exists is worth reporting.
      const exists = await sessionStore.getSessionById(this.storage, sessionId).then(
        (row) => row !== undefined,
        () => true,
      );
      if (exists) this.options.onError?.(error);
    }
  }

  /** Records the workdir as the state before `row` (what a rewind of it restores). */
  recordBefore(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<void> {
    return this.recorder.recordBefore(row, workdir);
  }

  capture(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<TurnPatchRow | undefined> {
    return this.recorder.capture(row, workdir);
  }

  private async turnOf(sessionId: string, turnId: string): Promise<TurnRow> {
    const row = await turnStore.getTurnById(this.storage, turnId);
    if (!row || row.sessionId !== sessionId) throw notFound("turn", `Turn ${turnId} does not exist in this Session`);
    return row;
  }

  /** The Turn's recorded patch, captured now when it was not at settle; refused while it runs. */
  async snapshotPatch(sessionId: string, turnId: string, workdir: string): Promise<TurnPatch> {
    const row = await this.turnOf(sessionId, turnId);
    return toWire(await this.serial(sessionId, () => this.patchOf(row, workdir)));
  }

  private async patchOf(row: TurnRow, workdir: string): Promise<TurnPatchRow> {
    if (!SETTLED.has(row.phase)) throw conflict(`Turn ${row.id} has not settled: its patch is captured once it has`);
    const existing = await this.recorder.capture(row, workdir);
    if (existing) return existing;
    if (row.startedAt === null) {
      // It never ran: it changed nothing.
      const empty = Buffer.alloc(0);
      return store.insertTurnPatch(this.storage, { turnId: row.id, sessionId: row.sessionId, turnSequence: row.sequence, files: [], patch: "", size: 0, sha256: sha256Hex(empty), capturedAt: this.now() });
    }
    const off = (await this.recorder.modeFor(workdir).catch(() => undefined)) === "off" ? ' (workspace.recording is "off")' : "";
    throw conflict(`No workdir state was recorded before Turn ${row.id} ran, so its changes are unknown${off}`);
  }

  async readPatch(sessionId: string, turnId: string, query: { offset?: string | undefined; limit?: string | undefined }): Promise<TurnPatchPage> {
    const row = await this.turnOf(sessionId, turnId);
    const patch = await store.getTurnPatch(this.storage, row.id);
    if (!patch) throw new Failure({ _tag: "NotFoundError", message: `Turn ${turnId} has no recorded patch (snapshotPatch captures one)` });
    const offset = parseCount(query.offset, "offset", 0);
    const limit = Math.min(parseCount(query.limit, "limit", MAX_PATCH_PAGE_BYTES), MAX_PATCH_PAGE_BYTES);
    if (limit < 4) throw validationFailure("limit must be at least 4 bytes");
    const bytes = Buffer.from(patch.patch, "utf8");
    if (offset > bytes.length) throw validationFailure(`offset is past the end of the patch (${bytes.length} bytes)`);
    if (offset < bytes.length && (bytes[offset]! & 0xc0) === 0x80) throw validationFailure("offset is inside a UTF-8 sequence: pass a nextOffset this host returned");
    let end = Math.min(offset + limit, bytes.length);
    while (end < bytes.length && end > offset && (bytes[end]! & 0xc0) === 0x80) end--;
    return { patch: toWire(patch), offset, text: bytes.subarray(offset, end).toString("utf8"), ...(end < bytes.length ? { nextOffset: end } : {}) };
  }

  rewind(sessionId: string, turnId: string, workdir: string, filesOnly: boolean): Promise<TurnRewind> {
    return this.serial(sessionId, () => this.rewindNow(sessionId, turnId, workdir, filesOnly));
  }

  private async rewindNow(sessionId: string, turnId: string, workdir: string, filesOnly: boolean): Promise<TurnRewind> {
    const target = await this.turnOf(sessionId, turnId);
    const range = await store.turnsFrom(this.storage, sessionId, target.sequence);
    const unsettled = range.filter((turn) => !SETTLED.has(turn.phase));
    if (unsettled.length > 0) throw conflict(`Turn ${unsettled[0]!.id} has not settled: a rewind needs this Turn and every later one settled`);
    const patches: TurnPatchRow[] = [];
    for (const turn of range) {
      const patch = await this.patchOf(turn.id === target.id ? target : (await turnStore.getTurnById(this.storage, turn.id))!, workdir);
      if (patch.rewoundAt !== null) {
        if (turn.id === target.id) throw conflict(`Turn ${turnId} was already rewound`);
        continue;
      }
      patches.push(patch);
    }
    // Per path: the state before the first rewound Turn that touched it, and what the last one left.
    const first = new Map<string, StoredPatchFile>();
    const last = new Map<string, StoredPatchFile>();
    for (const patch of patches) {
      for (const file of patch.files) {
        if (!first.has(file.path)) first.set(file.path, file);
        last.set(file.path, file);
      }
    }
    const paths = [...first.keys()].sort((a, b) => compareBytes(Buffer.from(a, "base64"), Buffer.from(b, "base64")));
    const changed: string[] = [];
    const notRecorded = paths.filter((path) => first.get(path)!.beforeRecorded === false);
    if (notRecorded.length > 0) throw unrecorded(notRecorded);
    for (const path of paths) {
      const expected = last.get(path)!;
      const current = await currentDigest(workdir, Buffer.from(path, "base64"));
      // A file whose content after the Turn was not recorded cannot be shown unchanged.
      const left = expected.afterSha256 ?? (expected.change === "deleted" ? null : undefined);
      if (current === "unsafe" || left === undefined || current !== left) changed.push(path);
    }
    if (changed.length > 0) {
      const names = changed.map((path) => Buffer.from(path, "base64").toString("utf8"));
      throw new RewindConflict(`These files changed outside the harness since the rewound Turns: ${names.join(", ")}`.slice(0, 4096), changed);
    }
    const missing: string[] = [];
    const contents = new Map<string, Buffer>();
    for (const path of paths) {
      const sha = first.get(path)!.beforeSha256;
      if (sha === undefined) continue;
      const bytes = await store.getBlob(this.storage, sha);
      if (!bytes) missing.push(path);
      else contents.set(path, bytes);
    }
    if (missing.length > 0) throw unrecorded(missing);
    for (const path of paths) {
      const before = first.get(path)!;
      try {
        await restore(workdir, Buffer.from(path, "base64"), before.beforeSha256 === undefined ? undefined : { bytes: contents.get(path)!, mode: before.beforeMode ?? 0o100644 });
      } catch (error) {
        // A directory on the way was replaced (by a symlink or a file) since the check: never written through.
        if (isPathChanged(error)) throw new RewindConflict(`${Buffer.from(path, "base64").toString("utf8")} changed while the rewind restored it`.slice(0, 4096), [path]);
        throw error;
      }
    }
    const rewoundAt = this.now();
    const turnIds = patches.map((patch) => patch.turnId);
    // The restored workdir is the baseline of the next Turn; what only the rewound Turns needed is freed.
    const restoredDigests = new Map(paths.map((path) => [path, first.get(path)!.beforeSha256 ?? null]));
    const after = await this.recorder.stateAfterRewind(sessionId, workdir, restoredDigests);
    await store.recordRewind(this.storage, { sessionId, turnId, turnIds, restored: paths, filesOnly, rewoundAt }, after);
    const hidden = filesOnly ? undefined : await store.hiddenTurnIds(this.storage, sessionId);
    return {
      sessionId,
      turnId,
      turnIds,
      restored: paths.map((bytesBase64) => ({ bytesBase64 })),
      ...(hidden ? { visibility: { excludedTurnIds: hidden } } : {}),
      rewoundAt,
    };
  }
}

function unrecorded(paths: readonly string[]): RewindConflict {
  const names = paths.map((path) => Buffer.from(path, "base64").toString("utf8"));
  return new RewindConflict(`The content of these files before the rewound Turns was not recorded (see workspace.recording): ${names.join(", ")}`.slice(0, 4096), paths, "not_recorded");
}

function parseCount(value: string | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,15}$/.test(value)) throw validationFailure(`${field} must be a non-negative integer`);
  return Number(value);
}
