// Prompt builders beside `textPrompt`: a text part followed by an image, given by URL or inline
// as base64 (or as raw bytes, whose type `sniffImageMime` tells from their magic number). Pure
// functions over the contract's `PromptPart` (browser-safe: no Node built-ins).
import type { ImageMimeType, PromptPart } from "../generated/client/types.gen.js";

/** The image types a prompt may carry, as the contract lists them. */
export const IMAGE_MIME_TYPES: readonly ImageMimeType[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/** The image type of `bytes` by its magic number (JPEG, PNG, GIF, WebP), else undefined. */
export function sniffImageMime(bytes: Uint8Array): ImageMimeType | undefined {
  const ascii = (from: number, to: number): string => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (ascii(0, 8) === "\x89PNG\r\n\x1a\n") return "image/png";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "image/gif";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

const textPart = (text: string): PromptPart[] => (text === "" ? [] : [{ type: "text", text }]);

/** `text` (when not empty), then the image at `url`: `imageUrlPrompt("What is this?", "https://…/a.png")`. */
export function imageUrlPrompt(text: string, url: string): PromptPart[] {
  if (typeof url !== "string" || url === "") throw new TypeError("imageUrlPrompt needs an image URL");
  return [...textPart(text), { type: "image", source: { type: "url", url } }];
}

/** An inline image: its base64 text and type, or its raw bytes (the type sniffed from them). */
export type InlineImage = { readonly mimeType: ImageMimeType; readonly data: string } | Uint8Array;

/**
 * `text` (when not empty), then an inline image. Raw bytes are base64-encoded and typed by
 * `sniffImageMime`; bytes that are not a JPEG, PNG, GIF or WebP throw a TypeError, as does a
 * `mimeType` outside those four or empty `data`.
 */
export function imageBase64Prompt(text: string, image: InlineImage): PromptPart[] {
  let mimeType: ImageMimeType;
  let data: string;
  if (image instanceof Uint8Array) {
    const sniffed = sniffImageMime(image);
    if (sniffed === undefined) throw new TypeError("imageBase64Prompt: the bytes are not a JPEG, PNG, GIF or WebP image");
    mimeType = sniffed;
    data = toBase64(image);
  } else {
    if (!IMAGE_MIME_TYPES.includes(image.mimeType)) throw new TypeError(`imageBase64Prompt: mimeType must be one of ${IMAGE_MIME_TYPES.join(", ")}`);
    if (typeof image.data !== "string" || image.data === "") throw new TypeError("imageBase64Prompt: data must be non-empty base64");
    ({ mimeType, data } = image);
  }
  return [...textPart(text), { type: "image", source: { type: "base64", mimeType, data } }];
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let index = 0; index < bytes.length; index += 0x8000) binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  return btoa(binary);
}
