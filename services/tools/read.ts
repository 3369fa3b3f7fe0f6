// `read`: a text file as numbered lines, or one page of a directory listing.
//
// Files: lines `offset`..`offset+limit-1` (1-based; default 1 and DEFAULT_READ_LINES), each as
// `<n>\t<text>` (the line number right-aligned to 6 columns, like `cat -n`), lines longer than
// MAX_READ_LINE_CHARS cut with a marker. The whole text, hints included, stays within
// MAX_FILE_READ_BYTES; the file is streamed, so large files are readable page by page and only
// the bytes up to the page end are read. A closing hint names the next `offset` when lines
// remain, or the line count at end of file. Content must be UTF-8 (checked on the bytes read).
//
// Directories: entries sorted by name, `offset`/`limit` paging (default/cap
// MAX_DIRECTORY_ENTRIES), as a JSON result `{ kind: "directory", path, entries, offset,
// totalEntries, truncated, nextOffset? }` where directory names end in `/`. A file result is text,
// which counts as `kind: "file"` for workspace instruction discovery.
//
// Session resources (read-resources.ts): `artifact` (an archived tool result of this Session, by
// id or path), `attachment` (a text attachment, by name) and `next` (a page's continuation) read
// in exact byte pages. A `filePath` inside the artifacts directory is read the same way, as an
// archived tool result of this Session only.
import { realpathSync } from "node:fs";
import { readdir, stat, type FileHandle } from "node:fs/promises";
import { basename, join } from "node:path";
import { insideRoot } from "../contract/paths.js";
import { directoryPath } from "../workspace/files/verified.js";
import { fileFailure, fileProjections, openTarget, resolveFileTarget } from "./paths.js";
import { READ_SPEC, type EntryKind, directoryPage, pageLines, readAddress, readResourceProjections, type ReadInput } from "./file-contract.js";
import { findArchive, readArchivePage, readAttachmentPage, readNext } from "./read-resources.js";
import { DEFAULT_READ_LINES, MAX_DIRECTORY_ENTRIES, ToolFailure, textResult, throwIfAborted, type ToolContext, type ToolDefinition, type ToolOutput } from "./tool.js";

export type { ReadInput } from "./file-contract.js";

/** Whether `path` lies inside the call's artifacts directory (where archived tool results live). */
function insideArtifacts(ctx: ToolContext, path: string): boolean {
  let root: string;
  try {
    root = realpathSync(ctx.artifactsDirectory);
  } catch {
    return false;
  }
  const relative = insideRoot(root, path);
  return relative !== undefined && relative !== ".";
}

const CHUNK_BYTES = 64 * 1024;

async function readFileLines(handle: FileHandle, resource: string, offset: number, limit: number, signal: AbortSignal): Promise<string> {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const chunk = async (): Promise<Uint8Array | undefined> => {
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null).catch((error: unknown) => {
      throw fileFailure(error, resource);
    });
    return bytesRead === 0 ? undefined : buffer.subarray(0, bytesRead);
  };
  return pageLines(chunk, resource, offset, limit, signal);
}

async function entryKind(dir: string, entry: { name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): Promise<EntryKind> {
  if (entry.isSymbolicLink()) {
    try {
      const s = await stat(join(dir, entry.name));
      return s.isDirectory() ? "directory" : s.isFile() ? "file" : "other";
    } catch {
      return "other";
    }
  }
  return entry.isDirectory() ? "directory" : entry.isFile() ? "file" : "other";
}

async function readDirectoryPage(path: string, resource: string, offset: number, limit: number, signal: AbortSignal): Promise<ToolOutput> {
  const all = await readdir(path, { withFileTypes: true }).catch((error: unknown) => {
    throw fileFailure(error, resource);
  });
  throwIfAborted(signal);
  const byName = new Map(all.map((entry) => [entry.name, entry]));
  return directoryPage([...byName.keys()], (name) => entryKind(path, byName.get(name)!), resource, offset, limit);
}

export const readTool: ToolDefinition<ReadInput> = {
  ...READ_SPEC,
  discoversWorkspaceInstructions: true,
  permissions(input, ctx) {
    const address = readAddress(input);
    if (address === "filePath") return fileProjections("read", resolveFileTarget(ctx.workdir, input.filePath!));
    return readResourceProjections(input, address);
  },
  async execute(input, ctx) {
    const address = readAddress(input);
    throwIfAborted(ctx.signal);
    if (address === "artifact") return readArchivePage(ctx, await findArchive(ctx, input.artifact!));
    if (address === "attachment") return readAttachmentPage(ctx, input.attachment!);
    if (address === "next") return readNext(ctx, input.next!);
    const { target, opened } = await openTarget(ctx, "read", input.filePath!);
    try {
      const info = opened.stat;
      // An archived tool result is read as one (byte pages with next), and only this Session's.
      if (ctx.sessionResources && info.isFile() && insideArtifacts(ctx, target.canonicalPath)) {
        // Archives are named `<artifact id>.log`: look the id up (another name is no archive of this Session).
        const archive = await findArchive(ctx, basename(target.canonicalPath).replace(/\.log$/, ""));
        if (canonical(archive.absolutePath) !== target.canonicalPath) throw new ToolFailure("resource_not_in_session", `No archived tool result ${JSON.stringify(target.resource)} belongs to this Session.`);
        return await readArchivePage(ctx, archive);
      }
      const offset = input.offset ?? 1;
      if (info.isDirectory()) {
        // Listed through the verified descriptor: exactly the directory that was checked.
        const listing = await readDirectoryPage(directoryPath(opened).toString(), target.resource, offset, Math.min(input.limit ?? MAX_DIRECTORY_ENTRIES, MAX_DIRECTORY_ENTRIES), ctx.signal);
        return { ...listing, instructionTarget: { path: target.canonicalPath, isDirectory: true } };
      }
      if (!info.isFile()) throw new ToolFailure("not_file", `${JSON.stringify(target.resource)} is not a regular file.`);
      const text = textResult(await readFileLines(opened.handle, target.resource, offset, input.limit ?? DEFAULT_READ_LINES, ctx.signal));
      return { ...text, instructionTarget: { path: target.canonicalPath, isDirectory: false } };
    } finally {
      await opened.handle.close().catch(() => undefined);
    }
  },
};

const canonical = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};
