// One server's catalog: its Tools, resources, resource templates and prompts read page by page,
// mapped to the contract's shapes without private metadata (`_meta`, icons, anything else the
// server adds). A server may omit `resources/list`, `resources/templates/list` or `prompts/list`:
// method-not-found on the first page is an empty list. Other errors, `tools/list` failures and
// malformed entries fail the read.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, type ServerCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type {
  McpCatalogPrompt,
  McpCatalogResource,
  McpCatalogResourceTemplate,
  McpCatalogTool,
  McpResourceAnnotations,
  McpServerCapabilities,
  McpToolAnnotations,
} from "../../generated/client/types.gen.js";
import { MAX_TIMER_MS } from "./limits.js";

/** The catalog lists of one server (the contract's `McpServerCatalog` without its revision). */
export interface CatalogLists {
  readonly tools: McpCatalogTool[];
  readonly resources: McpCatalogResource[];
  readonly resourceTemplates: McpCatalogResourceTemplate[];
  readonly prompts: McpCatalogPrompt[];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Copies the named fields of `source` that have the expected JSON type. */
function pick<T>(source: Json, fields: Record<string, "string" | "number" | "boolean">): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [field, type] of Object.entries(fields)) {
    if (typeof source[field] === type) out[field] = source[field];
  }
  return out as Partial<T>;
}

function toolAnnotations(value: unknown): McpToolAnnotations | undefined {
  if (!isObject(value)) return undefined;
  return pick<McpToolAnnotations>(value, { title: "string", readOnlyHint: "boolean", destructiveHint: "boolean", idempotentHint: "boolean", openWorldHint: "boolean" });
}

function resourceAnnotations(value: unknown): McpResourceAnnotations | undefined {
  if (!isObject(value)) return undefined;
  const out: McpResourceAnnotations = pick<McpResourceAnnotations>(value, { priority: "number", lastModified: "string" });
  if (Array.isArray(value["audience"])) out.audience = value["audience"].filter((role): role is "user" | "assistant" => role === "user" || role === "assistant");
  return out;
}

/** Drops `_meta` keys at every depth (private metadata never leaves the host). */
export function withoutMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMeta);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) if (key !== "_meta") out[key] = withoutMeta(item);
  return out;
}

function malformed(list: string, detail: string): Error {
  return new Error(`the server's ${list} is malformed: ${detail}`);
}

function mapTool(value: unknown): McpCatalogTool {
  if (!isObject(value) || typeof value["name"] !== "string" || !isObject(value["inputSchema"])) throw malformed("tools/list", "a Tool without a name or an inputSchema object");
  const annotations = toolAnnotations(value["annotations"]);
  return {
    ...pick<McpCatalogTool>(value, { name: "string", title: "string", description: "string" }),
    name: value["name"],
    inputSchema: withoutMeta(value["inputSchema"]),
    ...(isObject(value["outputSchema"]) ? { outputSchema: withoutMeta(value["outputSchema"]) } : {}),
    ...(annotations ? { annotations } : {}),
  };
}

function mapResource(value: unknown): McpCatalogResource {
  if (!isObject(value) || typeof value["uri"] !== "string" || typeof value["name"] !== "string") throw malformed("resources/list", "a resource without a uri or a name");
  const annotations = resourceAnnotations(value["annotations"]);
  return {
    ...pick<McpCatalogResource>(value, { title: "string", description: "string", mimeType: "string", size: "number" }),
    uri: value["uri"],
    name: value["name"],
    ...(annotations ? { annotations } : {}),
  };
}

function mapTemplate(value: unknown): McpCatalogResourceTemplate {
  if (!isObject(value) || typeof value["uriTemplate"] !== "string" || typeof value["name"] !== "string") throw malformed("resources/templates/list", "a template without a uriTemplate or a name");
  const annotations = resourceAnnotations(value["annotations"]);
  return {
    ...pick<McpCatalogResourceTemplate>(value, { title: "string", description: "string", mimeType: "string" }),
    uriTemplate: value["uriTemplate"],
    name: value["name"],
    ...(annotations ? { annotations } : {}),
  };
}

function mapPrompt(value: unknown): McpCatalogPrompt {
  if (!isObject(value) || typeof value["name"] !== "string") throw malformed("prompts/list", "a prompt without a name");
  const args = Array.isArray(value["arguments"])
    ? value["arguments"].map((arg) => {
        if (!isObject(arg) || typeof arg["name"] !== "string") throw malformed("prompts/list", "a prompt argument without a name");
        return { ...pick<NonNullable<McpCatalogPrompt["arguments"]>[number]>(arg, { title: "string", description: "string", required: "boolean" }), name: arg["name"] };
      })
    : undefined;
  return { ...pick<McpCatalogPrompt>(value, { title: "string", description: "string" }), name: value["name"], ...(args ? { arguments: args } : {}) };
}

const notFoundMethod = (error: unknown): boolean => error instanceof McpError && error.code === ErrorCode.MethodNotFound;

/** Reads every page of one list. */
async function pages<T>(
  read: (cursor: string | undefined) => Promise<{ items: unknown[]; nextCursor?: string | undefined }>,
  map: (value: unknown) => T,
  optional: boolean,
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (let first = true; ; first = false) {
    let page: { items: unknown[]; nextCursor?: string | undefined };
    try {
      page = await read(cursor);
    } catch (error) {
      if (optional && first && notFoundMethod(error)) return [];
      throw error;
    }
    out.push(...page.items.map(map));
    if (page.nextCursor === undefined || seen.has(page.nextCursor)) return out;
    seen.add(page.nextCursor);
    cursor = page.nextCursor;
  }
}

/** Reads the whole catalog the server's capabilities announce. */
export async function readCatalog(client: Client, signal: AbortSignal): Promise<CatalogLists> {
  const capabilities = client.getServerCapabilities() ?? {};
  const options = { signal, timeout: MAX_TIMER_MS };
  const params = (cursor: string | undefined) => (cursor === undefined ? {} : { cursor });
  const [tools, resources, resourceTemplates, prompts] = await Promise.all([
    capabilities.tools ? pages(async (c) => toPage(await client.listTools(params(c), options), "tools"), mapTool, false) : [],
    capabilities.resources ? pages(async (c) => toPage(await client.listResources(params(c), options), "resources"), mapResource, true) : [],
    capabilities.resources ? pages(async (c) => toPage(await client.listResourceTemplates(params(c), options), "resourceTemplates"), mapTemplate, true) : [],
    capabilities.prompts ? pages(async (c) => toPage(await client.listPrompts(params(c), options), "prompts"), mapPrompt, true) : [],
  ]);
  return { tools, resources, resourceTemplates, prompts };
}

function toPage(result: Json, key: string): { items: unknown[]; nextCursor?: string | undefined } {
  const items = result[key];
  if (!Array.isArray(items)) throw malformed(key, "the list is missing");
  return { items, ...(typeof result["nextCursor"] === "string" ? { nextCursor: result["nextCursor"] } : {}) };
}

/** The negotiated capabilities in the contract's shape. */
export function capabilitiesOf(capabilities: ServerCapabilities | undefined): McpServerCapabilities {
  const c = capabilities ?? {};
  return {
    tools: { supported: c.tools !== undefined, listChanged: c.tools?.listChanged === true },
    resources: { supported: c.resources !== undefined, listChanged: c.resources?.listChanged === true, subscribe: c.resources?.subscribe === true },
    prompts: { supported: c.prompts !== undefined, listChanged: c.prompts?.listChanged === true },
    logging: c.logging !== undefined,
    completions: c.completions !== undefined,
  };
}
