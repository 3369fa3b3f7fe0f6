// What a resolved MCP prompt becomes (prompt parts: text, canonical base64 images, embedded text
// resources, anything else as its JSON text) and whether a URI matches a resource template.
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { GetPromptResult, Prompt, ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageMimeType, McpResourceReadResult, PromptPart } from "../../generated/client/types.gen.js";
import { notFound, unavailable, validationFailure } from "../contract/failure.js";
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

/** The prompt `promptName` of a server's catalog, its arguments checked against what it declares (404 / 400 otherwise). */
export function checkedPrompt(prompts: readonly Prompt[], serverName: string, promptName: string, args: Readonly<Record<string, string>>): Prompt {
  const prompt = prompts.find((candidate) => candidate.name === promptName);
  if (!prompt) throw notFound("mcp_prompt", `MCP server ${JSON.stringify(serverName)} has no prompt ${JSON.stringify(promptName)}`);
  const declared = new Map((prompt.arguments ?? []).map((arg) => [arg.name, arg]));
  for (const name of Object.keys(args)) {
    if (!declared.has(name)) throw validationFailure(`Invalid request: body.arguments.${name} (/arguments/${name}): is not an argument of prompt ${JSON.stringify(promptName)}`);
  }
  for (const arg of declared.values()) {
    if (arg.required && args[arg.name] === undefined) throw validationFailure(`Invalid request: body.arguments.${arg.name} (/arguments/${arg.name}): is required by prompt ${JSON.stringify(promptName)}`);
  }
  return prompt;
}

/** Refuses (404) a URI the server's catalog does not advertise: listed, or matching a resource template. */
export function checkAdvertised(lists: { readonly resources: readonly { uri: string }[]; readonly resourceTemplates: readonly { uriTemplate: string }[] }, serverName: string, uri: string): void {
  const advertised = lists.resources.some((resource) => resource.uri === uri) || lists.resourceTemplates.some((template) => matches(template.uriTemplate, uri));
  if (!advertised) throw notFound("mcp_resource", `MCP server ${JSON.stringify(serverName)} advertises no resource ${JSON.stringify(uri)}`);
}

/** A `resources/read` answer as the API's result: each content's URI and MIME type with its text or base64 blob. */
export function resourceReadResult(read: ReadResourceResult): McpResourceReadResult {
  return {
    contents: read.contents.map((item) => {
      const base = { uri: item.uri, ...(typeof item.mimeType === "string" ? { mimeType: item.mimeType } : {}) };
      return "text" in item && typeof item.text === "string" ? { ...base, text: item.text } : { ...base, blob: String((item as { blob?: unknown }).blob ?? "") };
    }),
  };
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
