// What a resolved MCP prompt becomes (prompt parts: text, canonical base64 images, embedded text
// resources, anything else as its JSON text) and whether a URI matches a resource template.
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageMimeType, PromptPart } from "../../generated/client/types.gen.js";
import { unavailable } from "../contract/failure.js";
import { withoutMeta } from "./catalog.js";
import { isCanonicalBase64 } from "./results.js";

const IMAGE_MIME_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

export function matches(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

/** A resolved prompt's messages as prompt parts, in order. */
export function promptParts(result: GetPromptResult, serverName: string): PromptPart[] {
  const parts: PromptPart[] = [];
  for (const message of result.messages) {
    const content = message.content as Record<string, unknown>;
    if (content["type"] === "text" && typeof content["text"] === "string") parts.push({ type: "text", text: content["text"] });
    else if (content["type"] === "image" && typeof content["data"] === "string" && IMAGE_MIME_TYPES.includes(String(content["mimeType"])) && isCanonicalBase64(content["data"])) {
      parts.push({ type: "image", source: { type: "base64", data: content["data"], mimeType: content["mimeType"] as ImageMimeType } });
    } else if (content["type"] === "resource" && typeof (content["resource"] as Record<string, unknown>)?.["text"] === "string") {
      parts.push({ type: "text", text: (content["resource"] as { text: string }).text });
    } else if (content["type"] === "image") {
      throw unavailable(`MCP server ${JSON.stringify(serverName)} resolved the prompt with an unsupported image (only canonical base64 PNG, JPEG, GIF or WebP)`);
    } else {
      parts.push({ type: "text", text: JSON.stringify(withoutMeta(content)) });
    }
  }
  return parts;
}
