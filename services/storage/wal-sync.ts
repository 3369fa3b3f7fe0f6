// Durable commits without blocking the event loop. A file database's writer connection commits
// with `synchronous = NORMAL` (WAL frames written, not synced, but a restarted WAL's header synced;
// checkpoints, with their syncs, run on checkpoint.ts's worker); a change that must survive power
// loss then waits for an fdatasync of the -wal file run on libuv's thread pool, which covers
// every commit made before it started — so commits that land while one sync runs share the next
// one (group commit at the file level) and nothing else waits on the disk. This is what
// `synchronous = FULL` does after each commit, moved off the main thread.
import { open, type FileHandle } from "node:fs/promises";

export class WalSync {
  #handle: Promise<FileHandle> | undefined;
  /** The sync running now. */
  #running: Promise<void> | undefined;
  /** The sync that starts once the running one ends (callers that came after it started). */
  #next: Promise<void> | undefined;

  constructor(private readonly databasePath: string) {}

  /** Resolves once everything committed before this call is on disk. */
  sync(): Promise<void> {
    if (this.#running === undefined) return (this.#running = this.#start());
    this.#next ??= this.#running.then(
      () => this.#promote(),
      () => this.#promote(),
    );
    return this.#next;
  }

  #promote(): Promise<void> {
    this.#next = undefined;
    return (this.#running = this.#start());
  }

  async #start(): Promise<void> {
    try {
      const wal = await (this.#handle ??= open(`${this.databasePath}-wal`, "r+"));
      await wal.datasync();
    } catch (error) {
      // A handle that failed is opened again next time.
      this.#handle = undefined;
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // No WAL file (yet): what was committed is in the database file itself.
      const file = await open(this.databasePath, "r+");
      try {
        await file.datasync();
      } finally {
        await file.close();
      }
    } finally {
      this.#running = undefined;
    }
  }

  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await (await handle?.catch(() => undefined))?.close();
  }
}
