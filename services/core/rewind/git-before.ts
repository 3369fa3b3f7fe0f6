// The content a file had before a Turn, taken from git when the Turn's recording did not keep
// it: a file whose recorded stat data (size, mtime, ctime, inode) equals its index entry's, and
// is not racy (its mtime is older, in whole seconds, than the index file's), held exactly the
// index's blob — git's own rule for trusting stat data. The blob is read from the object store
// (loose or packed, verified against its oid) and its size checked against the record.
import { Buffer } from "node:buffer";
import { readIndexFile, sameTime, type IndexEntry, type IndexFile } from "../../workspace/git/index-file.js";
import { ObjectReader } from "../../workspace/git/objects.js";
import type { SnapshotEntry } from "../../workspace/files/snapshot.js";

const UINT32 = 2 ** 32;

/** One capture's view of a repository's index and objects (read once, on first need). */
export class GitBefore {
  #index: Promise<{ file: IndexFile; entries: Map<string, IndexEntry> } | undefined> | undefined;
  #objects: ObjectReader | undefined;

  constructor(
    private readonly gitdir: string,
    /** The workdir's path inside the repository ("" at the root). */
    private readonly prefix: string,
  ) {}

  /** What the file recorded as `before` (workdir-relative `path`) held, when git can tell. */
  async content(path: string, before: SnapshotEntry): Promise<Buffer | undefined> {
    const index = await (this.#index ??= readIndexFile(this.gitdir).then(
      (file) => (file ? { file, entries: new Map(file.entries.map((entry) => [entry.path, entry])) } : undefined),
      () => undefined,
    ));
    const entry = index?.entries.get(this.prefix === "" ? path : `${this.prefix}/${path}`);
    if (!index || !entry) return undefined;
    const [, , mode, size, mtimeMs, identity] = before;
    const [ino, ctime] = identity.split(":").map(Number) as [number, number];
    if (entry.mode !== mode || entry.size === 0 || entry.size !== size % UINT32 || entry.ino !== ino % UINT32) return undefined;
    if (!sameTime(entry.mtimeSeconds, entry.mtimeNanoseconds, mtimeMs) || !sameTime(entry.ctimeSeconds, entry.ctimeNanoseconds, ctime)) return undefined;
    if (Math.floor(mtimeMs / 1000) >= index.file.mtimeSeconds) return undefined;
    const object = await (this.#objects ??= new ObjectReader(this.gitdir)).read(entry.oid);
    return object?.type === "blob" && object.content.length === size ? Buffer.from(object.content) : undefined;
  }

  async close(): Promise<void> {
    await this.#objects?.close();
  }
}
