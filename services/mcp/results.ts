// MCP tool results → the canonical ToolResult ("MCP screenshots"). Without images, a result with
// `structuredContent` is `json` (that value) and a text-only one `text`; a result with images (or
// other mixed blocks) is `content`: the ordered text and image parts plus `structuredContent` as a
// JSON part.
// Other blocks stay JSON parts without `_meta`; audio and blobs over 10 MB decoded are replaced by
// an omission note. Images must be canonical base64 PNG, JPEG, GIF or WebP within
// `images.maxBase64Bytes`; text that is exactly the JSON of `structuredContent` is dropped.
import { isDeepStrictEqual } from "node:util";
import type { ImageMimeType, ToolResult, ToolResultContentPart } from "../../generated/client/types.gen.js";
import type { Fault } from "../../generated/client/types.gen.js";
import { withoutMeta } from "./catalog.js";

/** Audio and blob payloads larger than this (decoded) are omitted. */
export const MAX_MCP_BINARY_BYTES = 10 * 1024 * 1024;

const IMAGE_MIME_TYPES: readonly ImageMimeType[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export type McpToolFailureCode =
  | "mcp_tool_error"
  | "mcp_limit_reached"
  | "mcp_unavailable"
  | "mcp_request_failed"
  | "mcp_unsupported_image"
  | "mcp_image_too_large"
  | "interrupted";

/**
 * A failed MCP tool call. It carries the `_tag` of services/tools' `ToolFailure`, so the Turn
 * loop (`isToolFailure`) settles it as a typed tool failure; `message` is safe for the model.
 */
export class McpToolFailure extends Error {
  readonly _tag = "ToolFailure" as const;
  constructor(
    readonly code: McpToolFailureCode,
    message: string,
    /** The mapped content of an `isError` result (images kept), when the server returned one. */
    readonly result?: ToolResult,
  ) {
    super(message);
    this.name = "ToolFailure";
  }

  toFault(): Fault {
    return { code: this.code, message: this.message };
  }
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Canonical base64: the alphabet, padded to a multiple of 4, and re-encoding gives the same text. */
export function isCanonicalBase64(data: string): boolean {
  if (data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(data)) return false;
  return Buffer.from(data, "base64").toString("base64") === data;
}

const decodedBytes = (data: string): number => Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);

function omission(kind: string, bytes: number): ToolResultContentPart {
  return { type: "text", text: `[${kind} omitted: ${bytes} bytes decoded is over the ${MAX_MCP_BINARY_BYTES}-byte limit]` };
}

export interface ResultLimits {
  /** `images.maxBase64Bytes`: the largest base64 payload of one image, undefined for unlimited. */
  readonly maxImageBase64Bytes: number | undefined;
}

function mapBlock(block: unknown, limits: ResultLimits): ToolResultContentPart {
  if (!isObject(block)) return { type: "json", value: block };
  if (block["type"] === "text" && typeof block["text"] === "string") return { type: "text", text: block["text"] };
  if (block["type"] === "image") {
    const data = block["data"];
    const mimeType = block["mimeType"];
    if (typeof data !== "string" || typeof mimeType !== "string" || !IMAGE_MIME_TYPES.includes(mimeType as ImageMimeType) || !isCanonicalBase64(data)) {
      throw new McpToolFailure("mcp_unsupported_image", `The MCP tool returned an unsupported image (${typeof mimeType === "string" ? mimeType : "no MIME type"}): only canonical base64 PNG, JPEG, GIF or WebP images are accepted.`);
    }
    if (limits.maxImageBase64Bytes !== undefined && data.length > limits.maxImageBase64Bytes) {
      throw new McpToolFailure(
        "mcp_image_too_large",
        `The MCP tool returned an image of ${data.length} bytes of base64; the limit (images.maxBase64Bytes) is ${limits.maxImageBase64Bytes}. Ask for smaller output (a smaller region or resolution).`,
      );
    }
    return { type: "image", source: { type: "base64", data, mimeType: mimeType as ImageMimeType } };
  }
  if (block["type"] === "audio" && typeof block["data"] === "string" && decodedBytes(block["data"]) > MAX_MCP_BINARY_BYTES) {
    return omission("audio", decodedBytes(block["data"]));
  }
  if (block["type"] === "resource" && isObject(block["resource"]) && typeof block["resource"]["blob"] === "string") {
    const bytes = decodedBytes(block["resource"]["blob"]);
    if (bytes > MAX_MCP_BINARY_BYTES) return omission("resource blob", bytes);
  }
  return { type: "json", value: withoutMeta(block) };
}

function isJsonText(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

/** A `resources/read` result's contents as `tools/call` content: text, an image, or the resource as it is. */
export function resourceContent(contents: readonly Record<string, unknown>[]): Json[] {
  return contents.map((item) =>
    "text" in item && typeof item["text"] === "string"
      ? { type: "text", text: item["text"] }
      : typeof item["mimeType"] === "string" && item["mimeType"].startsWith("image/") && "blob" in item
        ? { type: "image", data: item["blob"], mimeType: item["mimeType"] }
        : { type: "resource", resource: item },
  );
}

/** Maps a `tools/call` result's content and `structuredContent` to one canonical result. */
export function mapToolResult(result: Json, limits: ResultLimits): ToolResult {
  const blocks = Array.isArray(result["content"]) ? result["content"] : [];
  const structured = isObject(result["structuredContent"]) ? withoutMeta(result["structuredContent"]) : undefined;
  let parts = blocks.map((block) => mapBlock(block, limits));
  const images = parts.some((part) => part.type === "image");
  // Text and JSON tools keep their formats: structured content is the JSON result, text the text result.
  if (!images && structured !== undefined) return { format: "json", value: structured };
  if (!images && parts.every((part) => part.type === "text")) return { format: "text", value: parts.map((part) => (part as { text: string }).text).join("\n") };
  if (structured !== undefined) {
    parts = parts.filter((part) => part.type !== "text" || !isJsonText(part.text, structured));
    parts.push({ type: "json", value: structured });
  }
  return { format: "content", value: parts };
}

/** The text of a result, for an error message (images and JSON summarized). */
export function resultText(result: ToolResult): string {
  if (result.format === "text") return result.value;
  if (result.format === "json") return JSON.stringify(result.value);
  return result.value.map((part) => (part.type === "text" ? part.text : part.type === "json" ? JSON.stringify(part.value) : "[image]")).join("\n");
}
