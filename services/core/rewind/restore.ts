// Reading and restoring one workdir file for a rewind: the digest of what is at a path now, and
// putting a recorded content back (or removing the file).
import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import { underDirectory } from "../../workspace/files/path.js";
import { lstatOrUndefined, walkDirectories } from "../../workspace/files/resolve.js";
import { sha256Hex } from "../../workspace/files/snapshot.js";

function segmentsOf(path: Buffer): Buffer[] {
  const segments: Buffer[] = [];
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i === path.length || path[i] === 0x2f) {
      segments.push(path.subarray(start, i));
      start = i + 1;
    }
  }
  return segments;
}

/** The digest of what is at `path` now (null: nothing), or "unsafe" when a parent is not a plain directory. */
export async function currentDigest(workdir: string, path: Buffer): Promise<string | null | "unsafe"> {
  try {
    const parents = await walkDirectories(workdir, segmentsOf(path).slice(0, -1));
    if (!parents) return null;
  } catch {
    return "unsafe";
  }
  const absolute = underDirectory(workdir, path);
  const stat = await lstatOrUndefined(absolute);
  if (!stat) return null;
  if (stat.isSymbolicLink()) return sha256Hex(await fsp.readlink(absolute, { encoding: "buffer" }));
  if (!stat.isFile()) return "unsafe";
  return createHash("sha256").update(await fsp.readFile(absolute)).digest("hex");
}

/** Puts one file back (written beside it, then renamed over it), or removes it. */
export async function restore(workdir: string, path: Buffer, content: { bytes: Buffer; mode: number } | undefined): Promise<void> {
  const absolute = underDirectory(workdir, path);
  if (!content) {
    await fsp.rm(absolute, { force: true });
    return;
  }
  const segments = segmentsOf(path);
  let relative = Buffer.alloc(0) as Buffer;
  for (const segment of segments.slice(0, -1)) {
    relative = relative.length === 0 ? Buffer.from(segment) : Buffer.concat([relative, Buffer.from("/"), segment]);
    await fsp.mkdir(underDirectory(workdir, relative)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
  // Parents are plain directories (checked before anything was restored, created above).
  const temporary = Buffer.concat([absolute, Buffer.from(`.ze-rewind-${randomBytes(6).toString("hex")}`)]);
  if (content.mode === 0o120000) await fsp.symlink(content.bytes, temporary);
  else await fsp.writeFile(temporary, content.bytes, { mode: content.mode & 0o777 });
  if (content.mode !== 0o120000) await fsp.chmod(temporary, content.mode & 0o777);
  await fsp.rename(temporary, absolute);
}
