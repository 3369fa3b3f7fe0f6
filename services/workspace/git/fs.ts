// The filesystem isomorphic-git sees: read-only (every write, rename, mkdir or delete throws,
// so an observation can never refresh the index or touch a ref) and strict about names (a
// directory entry that is not UTF-8 fails with `filename_encoding` instead of being decoded
// lossily, since isomorphic-git works with JavaScript strings). `signal` makes the walk
// cooperatively cancellable: every call checks it first.
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

export function readOnlyGitFs(signal?: AbortSignal): ReadOnlyGitFs {
  const check = (): void => {
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException("The observation was cancelled", "AbortError");
  };
  const promises = {
    readFile: async (path: string, options?: unknown) => {
      check();
      return fsp.readFile(path, options as never);
    },
    readdir: async (path: string) => {
      check();
      const names = await fsp.readdir(path, { encoding: "buffer" });
      return names.map((name) => {
        const text = utf8OrUndefined(name);
        if (text === undefined) {
          throw new WorkspaceUnsupported("filename_encoding", `A file name in the repository is not UTF-8 (${Buffer.from(name).toString("base64")} in Base64); git observation needs UTF-8 names`);
        }
        return text;
      });
    },
    stat: async (path: string) => {
      check();
      return fsp.stat(path);
    },
    lstat: async (path: string) => {
      check();
      return fsp.lstat(path);
    },
    readlink: async (path: string) => {
      check();
      return fsp.readlink(path, { encoding: "buffer" });
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
