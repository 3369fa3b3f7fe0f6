// Image attachments of the composer: what one is, telling an image by its magic bytes,
// reading a file (`/image`, a pasted or dropped path), decoding `/base64` data, recognising a
// paste that is exactly one file path, the line shown above the input, and the prompt parts sent.
import { closeSync, openSync, readSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, extname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_REQUEST_BODY_BYTES } from "../../../clients/limits.js";
import { sniffImageMime } from "../../../clients/prompts.js";
import type { ImageMimeType, PromptPart } from "../../../clients/index.js";

export const IMAGE_TYPES: readonly ImageMimeType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export interface Attachment {
  /** Unique within the TUI's run (which images a submission sent). */
  readonly id: number;
  /** The file name, or where it came from (`clipboard`, `base64`). */
  readonly name: string;
  readonly mimeType: ImageMimeType;
  /** The decoded size. */
  readonly size: number;
  /** Base64 of the image. */
  readonly data: string;
}

/** Room a submitPrompt body needs besides the images (ids, delivery, text, JSON syntax). */
const ENVELOPE_BYTES = 1024;
/** The largest image (decoded) one request body can carry as base64. */
export const MAX_IMAGE_BYTES = Math.floor(((MAX_REQUEST_BODY_BYTES - ENVELOPE_BYTES) * 3) / 4);

let nextId = 1;

/** The image type of `bytes` by its magic number (PNG, JPEG, GIF, WebP), else undefined. */
export const imageType = sniffImageMime;

const NOT_AN_IMAGE = "is not a PNG, JPEG, GIF or WebP image";

/** An attachment of `bytes`; throws when they are no supported image or too big for a request. */
export function imageAttachment(name: string, bytes: Buffer): Attachment {
  const mimeType = imageType(bytes);
  if (!mimeType) throw new Error(`${name} ${NOT_AN_IMAGE}`);
  if (bytes.byteLength > MAX_IMAGE_BYTES) throw tooBig(name, bytes.byteLength);
  return { id: nextId++, name, mimeType, size: bytes.byteLength, data: bytes.toString("base64") };
}

export const tooBig = (name: string, size: number): Error =>
  new Error(`${name} is ${kilobytes(size)}; a request carries at most ${MAX_REQUEST_BODY_BYTES} bytes, so an image must stay under ${kilobytes(MAX_IMAGE_BYTES)}`);

/** `/image PATH`: the file at `path` (relative to `base`) as an attachment. */
export function fileAttachment(path: string, base: string): Attachment {
  const full = resolvePath(path, base);
  let bytes: Buffer;
  let size: number;
  try {
    size = statSync(full).size;
    // A file too big to send is named without reading it.
    bytes = size > MAX_IMAGE_BYTES ? Buffer.alloc(0) : readFileSync(full);
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (size > MAX_IMAGE_BYTES) throw tooBig(basename(full), size);
  return imageAttachment(basename(full), bytes);
}

/** `/base64 DATA [MEDIA_TYPE]`: the data must decode to a supported image (of MEDIA_TYPE, when given). */
export function base64Attachment(data: string, mediaType?: string): Attachment {
  const compact = data.replace(/\s+/g, "");
  if (compact === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 === 1) throw new Error("/base64: DATA is not base64");
  if (mediaType !== undefined && !IMAGE_TYPES.includes(mediaType.toLowerCase() as ImageMimeType)) {
    throw new Error(`/base64: MEDIA_TYPE must be one of ${IMAGE_TYPES.join(", ")}, not ${mediaType}`);
  }
  const attachment = imageAttachment("base64 image", Buffer.from(compact, "base64"));
  if (mediaType !== undefined && attachment.mimeType !== mediaType.toLowerCase()) throw new Error(`/base64: the data is ${attachment.mimeType}, not ${mediaType}`);
  return attachment;
}

/** A path as typed or pasted, made absolute: `~/` is the home directory, a relative one is under `base`. */
function resolvePath(path: string, base: string): string {
  if (path === "~" || path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(base, path);
}

const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);

/** A path as written: a file:// URL, 'quoted', "quoted", or with backslash-escaped spaces; undefined for a bad URL. */
export function unquotePath(text: string): string | undefined {
  const path = text.trim();
  if (/^file:\/\//i.test(path)) {
    try {
      return fileURLToPath(path);
    } catch {
      return undefined;
    }
  }
  const quote = path[0];
  if ((quote === "'" || quote === '"') && path.length > 1 && path.endsWith(quote)) return path.slice(1, -1);
  return path.replace(/\\(.)/g, "$1");
}

/**
 * A paste that is exactly one local file path (plain, quoted, with backslash-escaped spaces, or
 * a file:// URL), made absolute; undefined for any other text. Only a path that names an image
 * (by extension) or contains a separator is considered, so a pasted word never reads a file.
 */
export function pastedPath(text: string, base: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === "" || /[\r\n]/.test(trimmed)) return undefined;
  const path = unquotePath(trimmed);
  if (path === undefined || path === "") return undefined;
  if (!IMAGE_EXTENSIONS.has(extname(path).toLowerCase()) && !/[/\\]/.test(path)) return undefined;
  return resolvePath(path, base);
}

/** The paste as an attachment when it is one image file's path; undefined when it is text. */
export function pastedImage(text: string, base: string): Attachment | undefined {
  const path = pastedPath(text, base);
  if (path === undefined) return undefined;
  try {
    if (!statSync(path).isFile()) return undefined;
    const header = Buffer.alloc(12);
    const fd = openSync(path, "r");
    try {
      readSync(fd, header, 0, 12, 0);
    } finally {
      closeSync(fd);
    }
    if (!imageType(header)) return undefined;
  } catch {
    return undefined;
  }
  return fileAttachment(path, base);
}

export function kilobytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `[image 1] shot.png · image/png · 12 KB`. */
export function attachmentLine(attachment: Attachment, index: number): string {
  return `[image ${index + 1}] ${attachment.name} · ${attachment.mimeType} · ${kilobytes(attachment.size)}`;
}

/** The prompt: the text (when there is any), then the images in the order they were attached. */
export function promptParts(text: string, attachments: readonly Attachment[]): PromptPart[] {
  const parts: PromptPart[] = text.trim() === "" ? [] : [{ type: "text", text }];
  for (const image of attachments) parts.push({ type: "image", source: { type: "base64", mimeType: image.mimeType, data: image.data } });
  return parts;
}
