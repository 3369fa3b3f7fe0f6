// readFile: one current regular file as a finite stream of items — `file.begin`, Base64
// chunks of at most 32 KiB of original bytes (text chunks end at UTF-8 boundaries), and
// `file.end` with version, size and SHA-256 — or one explicit `file.absent`, `file.changed`
// (not the `expectedVersion`), `file.binary` or `file.unsupported` item. The directories on
// the way are opened one at a time through their parents' verified descriptors (resolve.ts
// `openDirectories`), and the file through its parent's (O_NOFOLLOW): what is read is that
// directory's child, never a symlink's target, even while a directory on the way is swapped for
// a symlink. Its handle's identity must match what was seen, before and after the read, and so
// must the parent's path. Every chunk comes from one complete buffer, so a replaced path never mixes
// versions. The version binds the bytes, the file and parent identities and the path.
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { constants } from "node:fs";
import type { FileReadEvent } from "../../../generated/client/types.gen.js";
import { validationFailure } from "../../contract/failure.js";
import { MAX_READ_FILE_BYTES, contentItems } from "./content.js";
import type { DecodedPath } from "./path.js";
import { identityOf, identityText, lstatOrUndefined, openDirectories, sameIdentity, type Identity } from "./resolve.js";
import { childPath, closeDirectory, closeVerified, isPathChanged, openChild, type Opened } from "./verified.js";

export { MAX_CHUNK_BYTES, MAX_READ_FILE_BYTES, chunkEnds, sniffImage } from "./content.js";

type Item = FileReadEvent extends infer E ? (E extends { sequence: number } ? Omit<E, "sequence"> : never) : never;

function versionOf(content: Uint8Array, file: Identity, parent: Identity, path: Uint8Array): string {
  const hash = createHash("sha256");
  hash.update(createHash("sha256").update(content).digest());
  hash.update(`${identityText(file)}/${identityText(parent)}/`);
  hash.update(path);
  return `v1-${hash.digest("base64url")}`;
}

/** Captures the file and returns the items to publish, in order. */
export async function captureFile(workdir: string, path: DecodedPath, expectedVersion: string | undefined): Promise<Item[]> {
  if (expectedVersion !== undefined && (expectedVersion.length === 0 || expectedVersion.length > 256)) throw validationFailure("expectedVersion must be a version this host returned");
  const parents = await openDirectories(workdir, path.segments.slice(0, -1));
  if (!parents) return [{ type: "file.absent" }];
  const name = path.segments.at(-1)!;
  const absolute = Buffer.concat([parents.absolute, Buffer.from("/"), name]);
  let content: Buffer;
  let fileIdentity: Identity;
  try {
    const before = await lstatOrUndefined(childPath(parents.dir, name));
    if (!before) return [{ type: "file.absent" }];
    if (before.isSymbolicLink()) return [{ type: "file.unsupported", kind: "symlink" }];
    if (before.isDirectory()) return [{ type: "file.unsupported", kind: "directory" }];
    if (!before.isFile()) return [{ type: "file.unsupported", kind: "special" }];
    if (before.size > BigInt(MAX_READ_FILE_BYTES)) return [{ type: "file.unsupported", kind: "too_large" }];
    let opened: Opened;
    try {
      // Through the parent's verified descriptor, not following a symlink: that directory's child itself.
      opened = await openChild(parents.dir, name, constants.O_RDONLY | constants.O_NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || isPathChanged(error)) return [{ type: "file.absent" }];
      throw error;
    }
    try {
      fileIdentity = identityOf(opened.stat);
      if (!opened.stat.isFile()) return [{ type: "file.unsupported", kind: "special" }];
      if (!sameIdentity(fileIdentity, identityOf(before))) return [{ type: "file.absent" }];
      if (opened.stat.size > BigInt(MAX_READ_FILE_BYTES)) return [{ type: "file.unsupported", kind: "too_large" }];
      content = await opened.handle.readFile();
    } finally {
      await closeVerified(opened);
    }
  } finally {
    closeDirectory(parents.dir);
  }
  // The parent and the path must still be what was walked and opened.
  const parentAfter = await lstatOrUndefined(parents.absolute);
  const after = await lstatOrUndefined(absolute);
  if (!parentAfter || !sameIdentity(identityOf(parentAfter), parents.identity) || !after || !sameIdentity(identityOf(after), fileIdentity)) {
    return [{ type: "file.absent" }];
  }
  const version = versionOf(content, fileIdentity, parents.identity, path.bytes);
  if (expectedVersion !== undefined && expectedVersion !== version) return [{ type: "file.changed", version }];
  return contentItems(content, version);
}
