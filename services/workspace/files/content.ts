// What a file read delivers, apart from reading it: the chunk and size bounds, the image types a
// preview shows (told by their bytes) and where chunks end. No disk here, so the Worker host's
// store-backed read (worker/files/routes.ts) shares it with read.ts.
import { createHash } from "node:crypto";
import type { FileReadEvent } from "../../../generated/client/types.gen.js";
import { utf8OrUndefined } from "./path.js";
export const MAX_CHUNK_BYTES = 32 * 1024;
/** Larger files are `file.unsupported` (`too_large`): the read buffers the whole file. */
export const MAX_READ_FILE_BYTES = 32 * 1024 * 1024;

/** The image types a preview shows, told by their bytes. */
export function sniffImage(bytes: Uint8Array): string | undefined {
  const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return "image/webp";
  return undefined;
}

/** Chunk ends: at most MAX_CHUNK_BYTES each; for text, never inside a UTF-8 sequence. */
export function chunkEnds(bytes: Uint8Array, text: boolean, max = MAX_CHUNK_BYTES): number[] {
  const ends: number[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + max, bytes.length);
    if (text) while (end < bytes.length && end > start && (bytes[end]! & 0xc0) === 0x80) end--;
    ends.push(end);
    start = end;
  }
  return ends;
}

/** One item of a file read, before it is numbered as an SSE message. */
export type ReadItem = FileReadEvent extends infer E ? (E extends { sequence: number } ? Omit<E, "sequence"> : never) : never;

/**
 * What a read of `content` (its version already checked) delivers: `file.binary` for bytes that are
 * neither UTF-8 text nor a previewable image, else `file.begin`, its chunks and `file.end` with the
 * SHA-256.
 */
export function contentItems(content: Buffer, version: string): ReadItem[] {
  const isText = !content.includes(0) && utf8OrUndefined(content) !== undefined;
  const image = isText ? undefined : sniffImage(content);
  if (!isText && !image) return [{ type: "file.binary", version, size: content.length }];
  const items: ReadItem[] = [{ type: "file.begin", content: isText ? "text" : "image", mimeType: isText ? "text/plain; charset=utf-8" : image!, version, size: content.length }];
  let offset = 0;
  for (const end of chunkEnds(content, isText)) {
    items.push({ type: "file.chunk", offset, bytesBase64: content.subarray(offset, end).toString("base64") });
    offset = end;
  }
  items.push({ type: "file.end", version, size: content.length, sha256: createHash("sha256").update(content).digest("hex") });
  return items;
}
