// The Session plugin artifact cache: one directory per installed artifact (an npm tarball at
// its registry integrity, a Git checkout at its commit), under `<cacheDirectory>/<kind>/<key>`.
// An entry is written into a private temporary directory and renamed into place only when
// complete, so a reader never sees half an install; concurrent installs of one key keep the
// first. `prune` frees every entry no recorded desired or active revision references; a freed
// entry a later load needs is installed again and verified again (the identity is recorded).
import { randomUUID } from "node:crypto";
import { readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { makeDirectory } from "../contract/directory.js";

export type ArtifactKind = "npm" | "git";

/** The limits of one installed artifact (bytes and files written). */
export interface ArtifactBounds {
  readonly maxDownloadBytes: number;
  readonly maxUnpackedBytes: number;
  readonly maxFiles: number;
}

export const DEFAULT_ARTIFACT_BOUNDS: ArtifactBounds = { maxDownloadBytes: 64 * 1024 * 1024, maxUnpackedBytes: 256 * 1024 * 1024, maxFiles: 20_000 };

const KEY = /^[a-z0-9][a-z0-9._-]{0,127}$/;

export class ArtifactCache {
  constructor(
    readonly directory: string,
    readonly bounds: ArtifactBounds = DEFAULT_ARTIFACT_BOUNDS,
  ) {}

  /** Where entry `key` of `kind` lives (whether or not it is installed). */
  path(kind: ArtifactKind, key: string): string {
    if (!KEY.test(key)) throw new Error(`invalid artifact cache key ${JSON.stringify(key)}`);
    return join(this.directory, kind, key);
  }

  /** Whether the entry is installed. */
  async has(kind: ArtifactKind, key: string): Promise<boolean> {
    return (await stat(this.path(kind, key)).catch(() => undefined))?.isDirectory() === true;
  }

  /**
   * The entry's directory, filling it first when missing: `fill(directory)` writes into a fresh
   * temporary directory that becomes the entry only when `fill` resolves (a rejection leaves nothing).
   */
  async ensure(kind: ArtifactKind, key: string, fill: (directory: string) => Promise<void>): Promise<string> {
    const target = this.path(kind, key);
    if (await this.has(kind, key)) return target;
    const staging = join(this.directory, ".staging", `${kind}-${key}-${randomUUID()}`);
    await makeDirectory(staging, 0o700);
    try {
      await fill(staging);
      await makeDirectory(join(this.directory, kind), 0o700);
      try {
        await rename(staging, target);
      } catch (error) {
        // Another install of the same key finished first: keep it.
        if (!(await this.has(kind, key))) throw error;
      }
      return target;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Removes every entry whose `<kind>/<key>` is not in `referenced`; returns the freed ones. */
  async prune(referenced: ReadonlySet<string>): Promise<string[]> {
    const freed: string[] = [];
    for (const kind of ["npm", "git"] as const) {
      const names = await readdir(join(this.directory, kind)).catch(() => [] as string[]);
      for (const name of names) {
        if (referenced.has(`${kind}/${name}`)) continue;
        await rm(join(this.directory, kind, name), { recursive: true, force: true });
        freed.push(`${kind}/${name}`);
      }
    }
    return freed;
  }
}

/** A source that exceeded an artifact bound. */
export class ArtifactTooLarge extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArtifactTooLarge";
  }
}
