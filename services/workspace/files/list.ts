// listFiles: one page of a workdir directory's direct children, sorted by name bytes. Symlinks
// are leaves (lstat only), `.git` (anywhere) and the workdir's private `.ze-harness` are left
// out, names keep their exact bytes. A page holds at most 128 entries and aims at 512 KiB of
// encoded JSON; its first entry always fits, so a page always advances. The cursor carries
// the directory identity and the last name: a replaced directory makes it stale (409). The
// directory is opened through verified descriptors (resolve.ts) and listed through its own, so
// the listing is of exactly the checked directory, never a symlink's target swapped in.
import { Buffer } from "node:buffer";
import { promises as fsp } from "node:fs";
import type { WorkspaceEntry, WorkspaceListPage } from "../../../generated/client/types.gen.js";
import { conflict } from "../../contract/failure.js";
import { decodeListCursor, encodeListCursor } from "./cursor.js";
import { compareBytes, encodePath, PRIVATE_ROOT_NAMES, type DecodedPath } from "./path.js";
import { identityText, lstatOrUndefined, openRequestedDirectory, type OpenedDirectories } from "./resolve.js";
import { childPath, closeDirectory, directoryPath } from "./verified.js";

export const MAX_LIST_ENTRIES = 128;
export const LIST_TARGET_BYTES = 512 * 1024;

/** Whether a direct child is excluded: `.git` anywhere, private state at the workdir root. */
export function excludedChild(name: Buffer, atRoot: boolean): boolean {
  const text = name.toString("latin1");
  return text === ".git" || (atRoot && PRIVATE_ROOT_NAMES.includes(text));
}

export async function listFiles(workdir: string, pathValue: string | undefined, cursorValue: string | undefined): Promise<WorkspaceListPage> {
  const directory = await openRequestedDirectory(workdir, pathValue);
  try {
    return await listPage(directory, cursorValue);
  } finally {
    closeDirectory(directory.dir);
  }
}

/** One page of the open directory: read through its verified descriptor, so exactly that directory. */
async function listPage(directory: OpenedDirectories & { readonly path: DecodedPath | null }, cursorValue: string | undefined): Promise<WorkspaceListPage> {
  const identity = identityText(directory.identity);
  const cursor = cursorValue === undefined ? undefined : decodeListCursor(cursorValue);
  if (cursor && cursor.directory !== identity) throw conflict("The directory was replaced since this cursor was made: reread from the first page");
  const names = (await fsp.readdir(directoryPath(directory.dir), { encoding: "buffer" }))
    .filter((name) => !excludedChild(name, directory.path === null))
    .filter((name) => !cursor || compareBytes(name, cursor.after) > 0)
    .sort(compareBytes);
  const prefix = directory.path ? Buffer.concat([directory.path.bytes, Buffer.from("/")]) : Buffer.alloc(0);
  const entries: WorkspaceEntry[] = [];
  let bytes = 0;
  let last: Buffer | undefined;
  let index = 0;
  for (; index < names.length && entries.length < MAX_LIST_ENTRIES; index++) {
    const name = names[index]!;
    const stat = await lstatOrUndefined(childPath(directory.dir, name));
    if (!stat) continue; // removed since readdir: a live observation
    const kind = stat.isSymbolicLink() ? "symlink" : stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other";
    const entry: WorkspaceEntry = {
      path: encodePath(Buffer.concat([prefix, name])),
      kind,
      ...(kind === "file" || kind === "symlink" ? { size: Number(stat.size) } : {}),
      modifiedAt: Number(stat.mtimeMs),
    };
    const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (entries.length > 0 && bytes + size > LIST_TARGET_BYTES) break;
    entries.push(entry);
    bytes += size;
    last = name;
  }
  const more = index < names.length && last !== undefined;
  return {
    path: directory.path ? encodePath(directory.path.bytes) : null,
    directoryIdentity: identity,
    entries,
    ...(more ? { next: encodeListCursor({ directory: identity, after: last! }) } : {}),
  };
}
