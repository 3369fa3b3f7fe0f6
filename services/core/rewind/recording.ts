// Turn recording: what a Turn changed in its workdir, kept in proportion to the change.
//
// Modes (config `workspace.recording`, per Session workdir):
// - "repository" (the default): inside a git repository, the files git would not ignore are
//   recorded by their stat data before and after each Turn (stat-scan.ts, no content read); a
//   path whose stat changed is read after the Turn, and its content before the Turn is the one
//   recorded for it earlier, a file tool's before-image, or git's index blob when the file was
//   clean (git-before.ts). Outside a repository, as "tools".
// - "tools": only files the Turn's own file tools (`write`, `edit`) touch: each tool write first
//   records the file's content (`beforeWrite`), Claude Code's checkpoints' way.
// - "off": nothing is recorded; a Turn has no patch and cannot be rewound.
// A file tool's before-image is kept in every mode but "off", ignored file or not: it is what the
// Turn itself changed. What nothing recorded (a dirty file a shell command changed, a file over
// MAX_SNAPSHOT_FILE_BYTES) is in the patch as `beforeRecorded: false`, and a rewind of it is
// refused naming it.
import { Buffer } from "node:buffer";
import { promises as fsp, realpathSync } from "node:fs";
import { relative, sep } from "node:path";
import type { StorageTransaction, TurnRow } from "../../storage/index.js";
import { turns as turnStore, workspace as store, type ManifestContent, type ManifestEntry, type RecordedMode, type StorageHandle, type TurnPatchRow } from "../../storage/index.js";
import { recordingRules, type RecordingRules } from "../../workspace/files/ignore-rules.js";
import { PRIVATE_ROOT_NAMES } from "../../workspace/files/path.js";
import { ListingCache, MAX_SNAPSHOT_FILE_BYTES, SnapshotTooLarge, entryOf, sameStat, sha256Hex, statScan, type SnapshotEntry } from "../../workspace/files/snapshot.js";
import { GitBefore } from "./git-before.js";
import { computePatch, type FileChange, type Side } from "./patch.js";
import { readCurrent } from "./restore.js";

export type RecordingMode = "off" | "tools" | RecordedMode;

/**
 * What Turn recording adds to a Turn's settlement: the empty patch's capture time (the settling
 * UPDATE records it on the Turn) and a rider of the settling transaction (writes no statement).
 */
export interface SettleWrite {
  readonly emptyPatchAt: number;
  readonly within: (tx: StorageTransaction) => Promise<void>;
}

type Env = Readonly<Record<string, string | undefined>>;

export interface RecorderOptions {
  readonly storage: StorageHandle;
  readonly now: () => number;
  /** The recording mode for a workdir (config `workspace.recording`); "repository" when absent. */
  readonly recording?: ((workdir: string) => RecordingMode | Promise<RecordingMode>) | undefined;
  /** Where git's global excludes are looked up (HOME, XDG_CONFIG_HOME). */
  readonly env?: Env | undefined;
}

/** Content read for one capture at most (beyond it, changed files are unrecorded). */
const MAX_CAPTURE_BYTES = 256 * 1024 * 1024;
const SETTLED = new Set(["completed", "cancelled", "failed"]);

export class Recorder {
  readonly #listings = new ListingCache();
  /** In-flight before-images, by Turn and path: a second write of the path waits for the first one's. */
  readonly #touching = new Map<string, Promise<void>>();
  /**
   * Turns whose before-state is the Session's "tools" manifest with nothing pending, left
   * unmarked (see `recordBefore`), by id: marked at their first file-tool write, or settled with
   * their empty patch in their settlement's transaction (`settleWrite`; `written` once it committed).
   */
  readonly #unmarked = new Map<string, { readonly turn: Pick<TurnRow, "id" | "sessionId" | "sequence">; marking?: Promise<void>; written?: boolean }>();

  constructor(private readonly options: RecorderOptions) {}

  async modeFor(workdir: string): Promise<RecordingMode> {
    return (await this.options.recording?.(workdir)) ?? "repository";
  }

  async #rules(workdir: string): Promise<RecordingRules | undefined> {
    return recordingRules(workdir, this.options.env ?? process.env);
  }

  async #scan(workdir: string, rules: RecordingRules, previous: readonly ManifestEntry[] | undefined): Promise<SnapshotEntry[] | undefined> {
    try {
      return await statScan(workdir, { rules, previous: new Map((previous ?? []).map((entry) => [entry[0], entry])), cache: this.#listings });
    } catch (error) {
      // Too many files to follow by stat: this Turn is recorded as "tools" (its tool writes only).
      if (error instanceof SnapshotTooLarge) return undefined;
      throw error;
    }
  }

  /**
   * Records the workdir as the state before `row` (what a rewind of it restores). In "tools" mode
   * with nothing pending (the manifest names no Turn and records no files) nothing is written: the
   * state before is that manifest, and the Turn is marked in it only when a file tool first writes
   * (`beforeWrite`); a Turn no tool wrote settles with its empty patch (`settleWrite`), and one lost
   * to a crash before it settled gets it from recovery (`repairLost`).
   */
  async recordBefore(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<void> {
    let previous = await store.readManifest(this.options.storage, row.sessionId);
    // The previous Turn settled but its capture has not run yet (this Turn was claimed first):
    // the workdir now is what it left, so capture it first.
    if (previous?.turnId && previous.turnId !== row.id) {
      const earlier = await turnStore.getTurnById(this.options.storage, previous.turnId);
      if (earlier && SETTLED.has(earlier.phase)) {
        await this.capture(earlier, workdir);
        previous = await store.readManifest(this.options.storage, row.sessionId);
      }
    }
    const mode = await this.modeFor(workdir);
    if (mode === "off") return;
    // realpath(3) synchronously, as the promise form does in the threadpool: on every Turn, the
    // round trip cost more CPU than the call (issue 21 §2).
    const canonical = realpathSync.native(workdir);
    const rules = mode === "repository" ? await this.#rules(canonical) : undefined;
    const files = rules ? await this.#scan(canonical, rules, previous?.mode === "repository" ? previous.files : undefined) : undefined;
    const content: ManifestContent = files ? { mode: "repository", files } : { mode: "tools", files: [] };
    if (previous && previous.turnId === null && content.mode === "tools" && previous.mode === "tools" && previous.files.length === 0) {
      this.#unmarked.set(row.id, { turn: { id: row.id, sessionId: row.sessionId, sequence: row.sequence } });
      return;
    }
    const now = this.options.now();
    if (previous && previous.mode === content.mode && sameEntries(previous.files, content.files)) await store.markManifest(this.options.storage, row.sessionId, row.id, now);
    else await store.writeManifest(this.options.storage, row.sessionId, row.id, content, now);
  }

  /** A file tool is about to write `path` (absolute, canonical) in this Turn: keep what it holds now. */
  beforeWrite(turn: { readonly id: string; readonly sessionId: string }, workdir: string, path: string): Promise<void> {
    const key = `${turn.id}\0${path}`;
    let pending = this.#touching.get(key);
    if (!pending) {
      pending = this.#touch(turn, workdir, path).finally(() => this.#touching.delete(key));
      this.#touching.set(key, pending);
    }
    return pending;
  }

  async #touch(turn: { readonly id: string; readonly sessionId: string }, workdir: string, path: string): Promise<void> {
    if ((await this.modeFor(workdir)) === "off") return;
    const canonical = await fsp.realpath(workdir);
    const inside = relative(canonical, path);
    if (inside === "" || inside.startsWith("..") || inside.startsWith(sep)) return;
    const rel = inside.split(sep).join("/");
    if (PRIVATE_ROOT_NAMES.includes(rel.split("/")[0]!)) return;
    const key = Buffer.from(rel, "utf8").toString("base64");
    await this.#mark(turn);
    if (await store.hasTouch(this.options.storage, turn.id, key)) return;
    const current = await readCurrent(canonical, Buffer.from(rel, "utf8"), MAX_SNAPSHOT_FILE_BYTES);
    const before =
      current === null || current === "unsafe"
        ? null
        : current === "too_large"
          ? { unrecorded: true as const, mode: 0o100644, size: MAX_SNAPSHOT_FILE_BYTES + 1 }
          : { sha256: current.sha256, bytes: current.bytes, mode: current.mode };
    await store.recordTouch(this.options.storage, { turnId: turn.id, sessionId: turn.sessionId, path: key, before });
  }

  /** Names an unmarked Turn in its Session's manifest (durably) before its first before-image is kept. */
  #mark(turn: { readonly id: string; readonly sessionId: string }): Promise<void> {
    const entry = this.#unmarked.get(turn.id);
    if (!entry) return Promise.resolve();
    entry.marking ??= store.markManifest(this.options.storage, turn.sessionId, turn.id, this.options.now()).then(
      () => void this.#unmarked.delete(turn.id),
      (error: unknown) => {
        entry.marking = undefined;
        throw error;
      },
    );
    return entry.marking;
  }

  /**
   * What a Turn's settlement records in its own transaction: the empty patch of an unmarked Turn
   * no file tool wrote, as the settling UPDATE's `empty_patch_at` (no statement of its own;
   * undefined otherwise, or while its before-state is still being recorded).
   */
  settleWrite(turnId: string): SettleWrite | undefined {
    const entry = this.#unmarked.get(turnId);
    if (!entry || entry.marking) return undefined;
    return {
      emptyPatchAt: this.options.now(),
      within: async () =>
        this.options.storage.afterCommit(() => {
          entry.written = true;
        }),
    };
  }

  /** After a Turn settled: its capture, unless its settlement wrote its patch already. */
  async afterTurn(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<void> {
    if (this.#unmarked.get(row.id)?.written) {
      this.#unmarked.delete(row.id);
      return;
    }
    await this.capture(row, workdir);
  }

  /** The write that repairs a Turn lost before it settled (in its recovery's settlement), unless the workdir is not recorded. */
  async repairLost(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<((tx: StorageTransaction) => Promise<void>) | undefined> {
    if ((await this.modeFor(workdir)) === "off") return undefined;
    return async (tx) => void (await store.repairUnmarkedPatch(tx, row, this.options.now()));
  }

  /**
   * Captures `row`'s patch against the state recorded before it: the stored patch when it has
   * one (the manifest no longer names it), undefined when no state was recorded before it.
   */
  async capture(row: Pick<TurnRow, "id" | "sessionId" | "sequence">, workdir: string): Promise<TurnPatchRow | undefined> {
    const storage = this.options.storage;
    const unmarked = this.#unmarked.get(row.id);
    if (unmarked) {
      // No file tool wrote: its patch is the empty one (written by its settlement, or now).
      this.#unmarked.delete(row.id);
      const empty = Buffer.alloc(0);
      if (!unmarked.written) return store.insertTurnPatch(storage, { turnId: row.id, sessionId: row.sessionId, turnSequence: row.sequence, files: [], patch: "", size: 0, sha256: sha256Hex(empty), capturedAt: this.options.now() });
    }
    const before = await store.readManifest(storage, row.sessionId);
    if (!before || before.turnId !== row.id) return store.getTurnPatch(storage, row.id);
    const canonical = await fsp.realpath(workdir).catch(() => workdir);
    const rules = before.mode === "repository" ? await this.#rules(canonical) : undefined;
    const after = rules ? ((await this.#scan(canonical, rules, before.files)) ?? []) : [];
    const beforeByPath = new Map(before.files.map((entry) => [entry[0], entry]));
    const afterByPath = new Map(after.map((entry) => [entry[0], entry]));
    const touches = new Map((await store.listTouches(storage, row.id)).map((touch) => [touch.path, touch.before]));
    const candidates = new Set<string>(touches.keys());
    if (rules) {
      for (const [path, entry] of beforeByPath) if (!afterByPath.has(path) || !sameStat(entry, afterByPath.get(path)!)) candidates.add(path);
      for (const path of afterByPath.keys()) if (!beforeByPath.has(path)) candidates.add(path);
    }
    const git = rules ? new GitBefore(rules.gitdir, rules.prefix) : undefined;
    const changes: FileChange[] = [];
    const contents: { sha256: string; bytes: Buffer }[] = [];
    let budget = MAX_CAPTURE_BYTES;
    try {
      for (const path of candidates) {
        const rel = Buffer.from(path, "base64");
        const current = budget > 0 ? await readCurrent(canonical, rel, Math.min(MAX_SNAPSHOT_FILE_BYTES, budget)) : "too_large";
        let afterSide: Side = null;
        if (current === "too_large") {
          const seen = afterByPath.get(path);
          afterSide = { unrecorded: true, mode: seen?.[2] ?? 0o100644, size: seen?.[3] ?? 0 };
        } else if (current !== null && current !== "unsafe") {
          budget -= current.bytes.length;
          afterSide = { sha256: current.sha256, mode: current.mode, bytes: current.bytes };
          const seen = afterByPath.get(path);
          // The manifest keeps the digest only for the very state the scan saw.
          if (seen && sameStat(seen, entryOf(path, "", current.stat))) seen[1] = current.sha256;
        }
        const beforeSide = await this.#beforeSide(path, touches, beforeByPath.get(path), git);
        if (beforeSide === null && afterSide === null) continue;
        if (beforeSide && afterSide && "sha256" in beforeSide && "sha256" in afterSide && beforeSide.sha256 === afterSide.sha256 && beforeSide.mode === afterSide.mode) continue;
        if (afterSide && "bytes" in afterSide) contents.push({ sha256: afterSide.sha256, bytes: afterSide.bytes });
        if (beforeSide && "bytes" in beforeSide) contents.push({ sha256: beforeSide.sha256, bytes: beforeSide.bytes });
        changes.push({ path, before: beforeSide, after: afterSide });
      }
    } finally {
      await git?.close();
    }
    const computed = computePatch(changes);
    const bytes = Buffer.from(computed.patch, "utf8");
    const capturedAt = this.options.now();
    return store.recordTurnPatch(
      storage,
      { turnId: row.id, sessionId: row.sessionId, turnSequence: row.sequence, files: computed.files, patch: computed.patch, size: bytes.length, sha256: sha256Hex(bytes), capturedAt },
      contents,
      changes.length === 0 && before.mode === (rules ? "repository" : "tools") && sameEntries(before.files, after)
        ? { unchanged: true, recordedAt: capturedAt }
        : { mode: rules ? "repository" : "tools", files: after, recordedAt: capturedAt },
    );
  }

  async #beforeSide(path: string, touches: ReadonlyMap<string, Awaited<ReturnType<typeof store.listTouches>>[number]["before"]>, recorded: SnapshotEntry | undefined, git: GitBefore | undefined): Promise<Side> {
    const storage = this.options.storage;
    if (touches.has(path)) {
      const touched = touches.get(path)!;
      if (touched === null) return null;
      if ("unrecorded" in touched) return touched;
      const bytes = await store.getBlob(storage, touched.sha256);
      return bytes ? { sha256: touched.sha256, mode: touched.mode, bytes } : { unrecorded: true, mode: touched.mode, size: touched.size };
    }
    if (!recorded) return null;
    if (recorded[1] !== "") {
      const bytes = await store.getBlob(storage, recorded[1]);
      if (bytes) return { sha256: recorded[1], mode: recorded[2], bytes };
    }
    const fromGit = await git?.content(Buffer.from(path, "base64").toString("utf8"), recorded);
    if (fromGit) return { sha256: sha256Hex(fromGit), mode: recorded[2], bytes: fromGit };
    return { unrecorded: true, mode: recorded[2], size: recorded[3] };
  }

  /** The workdir's state right after a rewind restored `restored` (path → digest, null: removed). */
  async stateAfterRewind(sessionId: string, workdir: string, restored: ReadonlyMap<string, string | null>): Promise<ManifestContent | undefined> {
    const previous = await store.readManifest(this.options.storage, sessionId);
    if (!previous) return undefined;
    if (previous.mode !== "repository") return { mode: previous.mode, files: [] };
    const canonical = await fsp.realpath(workdir);
    const rules = await this.#rules(canonical);
    const files = rules ? await this.#scan(canonical, rules, previous.files) : undefined;
    if (!files) return { mode: "tools", files: [] };
    for (const entry of files) {
      const digest = restored.get(entry[0]);
      if (digest) entry[1] = digest;
    }
    return { mode: "repository", files };
  }
}

function sameEntries(a: readonly ManifestEntry[], b: readonly ManifestEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const x = a[index]!;
    const y = b[index]!;
    if (x[0] !== y[0] || x[1] !== y[1] || !sameStat(x, y)) return false;
  }
  return true;
}
