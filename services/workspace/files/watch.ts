// watchFiles: tells when a directory needs rereading. `files.ready` (with the directory
// identity) follows the initial scan; `fs.watch` notifications are coalesced into
// `files.changed`; the directory's identity is checked on every notification and at least once
// a second, and its deletion or replacement ends the watch with `files.unavailable`. The watch is
// set through the directory's verified descriptor (`/proc/self/fd/<fd>`), so it observes the
// resolved directory itself. A heartbeat goes out at least every 15 s. Nothing is replayable: a
// new watch starts afresh. Closing the stream (the iterator's return) closes the watcher and its
// timers.
import { watch, type FSWatcher, promises as fsp } from "node:fs";
import type { FilesStreamEvent } from "../../../generated/client/types.gen.js";
import { identityOf, identityText, lstatOrUndefined, sameIdentity, type ResolvedDirectory } from "./resolve.js";
import { closeDirectory, directoryPath, isPathChanged, openVerifiedDirectory, type VerifiedDirectory } from "./verified.js";

type Item = FilesStreamEvent extends infer E ? (E extends { sequence: number } ? Omit<E, "sequence"> : never) : never;

export interface WatchTiming {
  /** Identity re-check interval (default 1 s). */
  readonly checkMs?: number;
  /** Heartbeat interval (default 15 s). */
  readonly heartbeatMs?: number;
  /** Coalescing window for notifications (default 50 ms). */
  readonly coalesceMs?: number;
}

export async function* watchDirectory(directory: ResolvedDirectory, signal: AbortSignal | undefined, timing: WatchTiming = {}): AsyncGenerator<Item> {
  const queue: Item[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const push = (item: Item): void => {
    if (ended) return;
    queue.push(item);
    if (item.type === "files.unavailable" || item.type === "files.error") ended = true;
    wake?.();
  };
  let pending: ReturnType<typeof setTimeout> | undefined;
  let checking = false;
  const check = async (changed: boolean): Promise<void> => {
    if (checking || ended) return;
    checking = true;
    try {
      const stat = await lstatOrUndefined(directory.absolute);
      if (!stat) push({ type: "files.unavailable", reason: "deleted" });
      else if (!stat.isDirectory() || !sameIdentity(identityOf(stat), directory.identity)) push({ type: "files.unavailable", reason: "replaced" });
      else if (changed) push({ type: "files.changed" });
    } catch (error) {
      push({ type: "files.error", message: `Observing the directory failed: ${(error as Error).message}`.slice(0, 4096) });
    } finally {
      checking = false;
    }
  };
  let watcher: FSWatcher | undefined;
  const onAbort = (): void => wake?.();
  signal?.addEventListener("abort", onAbort, { once: true });
  const checker = setInterval(() => void check(false), timing.checkMs ?? 1000);
  const heartbeat = setInterval(() => {
    if (queue.length === 0) push({ type: "files.heartbeat" });
  }, timing.heartbeatMs ?? 15_000);
  try {
    // The directory is opened and verified at its path, and watched and scanned through that
    // descriptor: the watch is on the resolved directory itself, never a symlink's target swapped in.
    let opened: VerifiedDirectory | undefined;
    try {
      opened = openVerifiedDirectory(directory.absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR" && !isPathChanged(error)) throw error;
    }
    try {
      if (opened && sameIdentity(identityOf(opened.stat), directory.identity)) {
        watcher = watch(directoryPath(opened), { persistent: false, encoding: "buffer" }, () => {
          clearTimeout(pending);
          pending = setTimeout(() => void check(true), timing.coalesceMs ?? 50);
        });
        watcher.on("error", () => void check(false));
        // The initial scan: the directory is readable.
        await fsp.readdir(directoryPath(opened), { encoding: "buffer" });
      }
    } finally {
      if (opened) closeDirectory(opened);
    }
    const stat = await lstatOrUndefined(directory.absolute);
    if (!watcher || !stat || !sameIdentity(identityOf(stat), directory.identity)) yield { type: "files.unavailable", reason: stat ? "replaced" : "deleted" };
    else {
      yield { type: "files.ready", directoryIdentity: identityText(directory.identity) };
      for (;;) {
        while (queue.length > 0) {
          const item = queue.shift()!;
          yield item;
          if (item.type === "files.unavailable" || item.type === "files.error") return;
        }
        if (signal?.aborted) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    }
  } finally {
    ended = true;
    clearTimeout(pending);
    clearInterval(checker);
    clearInterval(heartbeat);
    watcher?.close();
    signal?.removeEventListener("abort", onAbort);
  }
}

