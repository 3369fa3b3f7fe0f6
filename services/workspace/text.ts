// One bounded, strict read of a small workspace text file (AGENTS.md, SKILL.md). Shared so that
// instructions and Skills agree on what "unreadable", "not UTF-8" and "oversized" mean.
//
// The file is opened non-blocking (a FIFO named AGENTS.md must not hang prompt admission),
// checked to be a regular file on the open descriptor (no stat/open race), and read up to one
// byte past the limit — the size is never trusted from `stat`, since the file may grow while it is
// read. A leading byte-order mark is dropped by the decoder and does not count as content.
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { insideRoot } from "../contract/paths.js";
import { realPathOf } from "./files/verified.js";

export type TextFailureReason = "unreadable" | "not_utf8" | "oversized";

/** The file's text (BOM removed) and its size in bytes. */
export interface TextContent {
  readonly _tag: "Text";
  readonly text: string;
  readonly bytes: number;
}

/** With `within`: what was opened lies outside that directory (or where it lies cannot be told). */
export interface TextOutside {
  readonly _tag: "Outside";
  /** The opened file's real path, when it could be told. */
  readonly canonicalPath: string | undefined;
}

/** Nothing at the path (also a dangling symlink or a missing parent directory). */
export interface TextAbsent {
  readonly _tag: "Absent";
}

/** The file exists but cannot be used; `detail` is a short human-readable cause. */
export interface TextFailed {
  readonly _tag: "Failed";
  readonly reason: TextFailureReason;
  readonly detail: string;
}

export type TextRead = TextContent | TextAbsent | TextFailed | TextOutside;

export interface TextReadOptions {
  /**
   * A canonical directory the file must really lie in: decided on the open descriptor's real
   * path (services/workspace/files/verified.ts `realPathOf`), so a directory on the way swapped
   * for a symlink to elsewhere yields `Outside`, never its bytes. Symlinks inside it are followed.
   */
  readonly within?: string;
}

const CHUNK_BYTES = 16 * 1024;

function errorDetail(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a directory";
    case "ELOOP":
      return "too many symbolic links";
    default:
      return code === undefined ? "it cannot be read" : `it cannot be read (${code})`;
  }
}

/** Reads `path` as UTF-8 if it is a regular file of at most `maxBytes` bytes. Never throws. */
export async function readBoundedText(path: string, maxBytes: number): Promise<Exclude<TextRead, TextOutside>>;
export async function readBoundedText(path: string, maxBytes: number, options: TextReadOptions): Promise<TextRead>;
export async function readBoundedText(path: string, maxBytes: number, options: TextReadOptions = {}): Promise<TextRead> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { _tag: "Absent" };
    return { _tag: "Failed", reason: "unreadable", detail: errorDetail(error) };
  }
  try {
    if (options.within !== undefined) {
      const real = await realPathOf(handle, path);
      if (real === undefined || insideRoot(options.within, real) === undefined) return { _tag: "Outside", canonicalPath: real };
    }
    const info = await handle.stat();
    if (info.isDirectory()) return { _tag: "Failed", reason: "unreadable", detail: "it is a directory" };
    if (!info.isFile()) return { _tag: "Failed", reason: "unreadable", detail: "it is not a regular file" };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) return { _tag: "Failed", reason: "oversized", detail: `it is larger than ${maxBytes} bytes` };
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks, total));
    } catch {
      return { _tag: "Failed", reason: "not_utf8", detail: "it is not UTF-8 text" };
    }
    return { _tag: "Text", text, bytes: total };
  } catch (error) {
    return { _tag: "Failed", reason: "unreadable", detail: errorDetail(error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}
