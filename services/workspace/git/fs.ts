// The filesystem isomorphic-git sees: read-only (every write, rename, mkdir or delete throws,
// so an observation can never refresh the index or touch a ref) and strict about names (a
// directory entry that is not UTF-8 fails with `filename_encoding` instead of being decoded
// lossily, since isomorphic-git works with JavaScript strings). `signal` makes the walk
// cooperatively cancellable: every call checks it first. `memoize` keeps each file read and
// stat for the filesystem's life (one observation): the ignore checks re-read the same
// `.gitignore` files and `info/exclude` for every path they are asked about.
import { Buffer } from "node:buffer";
import { promises as fsp } from "node:fs";
import { utf8OrUndefined } from "../files/path.js";
import { WorkspaceUnsupported } from "./unsupported.js";

function refuse(name: string): () => Promise<never> {
  return async () => {
    throw new Error(`read-only git observation attempted ${name}`);
  };
}

import type { PromiseFsClient } from "isomorphic-git";

export type ReadOnlyGitFs = PromiseFsClient;

export const notUtf8Name = (name: Uint8Array): WorkspaceUnsupported =>
  new WorkspaceUnsupported("filename_encoding", `A file name in the repository is not UTF-8 (${Buffer.from(name).toString("base64")} in Base64); git observation needs UTF-8 names`);

/** Throws the signal's reason (or an AbortError) once the observation is cancelled. */
export function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException("The observation was cancelled", "AbortError");
}

/**
 * `byteNames`: every path isomorphic-git passes is a byte string (one character per byte,
 * `latin1`), directory names are listed that way, and text files (`.gitignore`, `info/exclude`)
 * are read that way too, so ignore rules match names by their exact bytes, as git does, whether
 * or not they are UTF-8.
 */
export function readOnlyGitFs(signal?: AbortSignal, options: { memoize?: boolean; byteNames?: boolean } = {}): ReadOnlyGitFs {
  const check = (): void => checkSignal(signal);
  const bytes = options.byteNames === true;
  const at = (path: string): string | Buffer => (bytes ? Buffer.from(path, "latin1") : path);
  const memo = new Map<string, Promise<unknown>>();
  const remember = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    if (!options.memoize) return read();
    let found = memo.get(key) as Promise<T> | undefined;
    if (!found) memo.set(key, (found = read()));
    return found;
  };
  const promises = {
    readFile: async (path: string, options?: unknown) => {
      check();
      const text = bytes && (options === "utf8" || (options as { encoding?: unknown } | undefined)?.encoding === "utf8");
      if (text) return remember(`readFile\0latin1\0${path}`, async () => (await fsp.readFile(at(path))).toString("latin1"));
      return remember(`readFile\0${JSON.stringify(options ?? null)}\0${path}`, () => fsp.readFile(at(path), options as never));
    },
    readdir: async (path: string) => {
      check();
      const names = await fsp.readdir(at(path), { encoding: "buffer" });
      if (bytes) return names.map((name) => name.toString("latin1"));
      return names.map((name) => {
        const text = utf8OrUndefined(name);
        if (text === undefined) throw notUtf8Name(name);
        return text;
      });
    },
    stat: async (path: string) => {
      check();
      return remember(`stat\0${path}`, () => fsp.stat(at(path)));
    },
    lstat: async (path: string) => {
      check();
      return fsp.lstat(at(path));
    },
    readlink: async (path: string) => {
      check();
      return fsp.readlink(at(path), { encoding: "buffer" });
    },
    writeFile: refuse("writeFile"),
    unlink: refuse("unlink"),
    mkdir: refuse("mkdir"),
    rmdir: refuse("rmdir"),
    rm: refuse("rm"),
    rename: refuse("rename"),
    symlink: refuse("symlink"),
    chmod: refuse("chmod"),
  };
  return { promises };
}
