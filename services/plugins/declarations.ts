// Full validation of the Agent, Skill, Skill source and Skill transform declarations a plugin
// registers (the reference's `agent` and `skill` modules). Each check returns the accepted value,
// an owned copy with only the declared fields, or the first problem; none throws.
import type { AgentDeclaration, AgentToolSelection, ModelInstruction, Skill, SkillDeclaration, SkillSource, SkillTransform, SkillTransformPatch } from "../../plugin/index.js";
import { isAgentId, type PluginAgentDeclaration } from "../workspace/agents.js";
import { MODEL_REFERENCE, copyJson, displayText, isIdentifier, isRecord, jsonProblem } from "./checks.js";

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const bad = (message: string): Checked<never> => ({ ok: false, message });
const quote = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value.slice(0, 140)) : "(not a string)");

// ---------------------------------------------------------------------------------------------
// Agents

const AGENT_MODES = new Set(["primary", "subagent", "all"]);
const EFFECTS = new Set(["allow", "ask", "deny"]);
const SETTING_KEYS = new Set(["temperature", "topP", "maxOutputUnits", "stopSequences", "seed", "reasoningEffort"]);
const EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);
const TOOL_NAME = /^[a-z0-9][a-z0-9_.:-]*$/;

function toolSelection(raw: unknown): Checked<AgentToolSelection> {
  if (!isRecord(raw)) return bad("tools must be { mode: all | none | include }");
  if (raw["mode"] === "all" || raw["mode"] === "none") return ok({ mode: raw["mode"] });
  if (raw["mode"] !== "include") return bad("tools.mode must be all, none or include");
  const names = raw["names"];
  const optional = raw["optionalNames"] ?? [];
  if (!Array.isArray(names) || names.length === 0 || !names.every((name) => typeof name === "string" && TOOL_NAME.test(name))) return bad("tools.names must be a non-empty list of lowercase Tool names");
  if (!Array.isArray(optional) || !optional.every((name) => typeof name === "string" && TOOL_NAME.test(name))) return bad("tools.optionalNames must be a list of lowercase Tool names");
  const all = [...names, ...optional] as string[];
  if (new Set(all).size !== all.length) return bad("tools names must be unique and optionalNames must not repeat a required name");
  return ok({ mode: "include", names: [...names] as [string, ...string[]], ...(optional.length > 0 ? { optionalNames: [...optional] as string[] } : {}) });
}

function settingsProblem(raw: unknown): string | undefined {
  if (!isRecord(raw) || jsonProblem(raw) !== undefined) return "settings must be a plain object";
  for (const [key, value] of Object.entries(raw)) {
    if (!SETTING_KEYS.has(key)) return `settings.${key} is not a generation setting`;
    if (key === "reasoningEffort" ? !EFFORTS.has(value as string) : key === "stopSequences" ? !Array.isArray(value) || value.length === 0 || !value.every((s) => typeof s === "string" && s !== "") : typeof value !== "number") {
      return `settings.${key} is invalid`;
    }
  }
  const { temperature, topP, maxOutputUnits, seed } = raw as Record<string, number | undefined>;
  if (temperature !== undefined && temperature < 0) return "settings.temperature must be at least 0";
  if (topP !== undefined && (topP < 0 || topP > 1)) return "settings.topP must be from 0 to 1";
  if (maxOutputUnits !== undefined && (!Number.isSafeInteger(maxOutputUnits) || maxOutputUnits < 1)) return "settings.maxOutputUnits must be a positive integer";
  if (seed !== undefined && !Number.isSafeInteger(seed)) return "settings.seed must be a safe integer";
  return undefined;
}

/** An Agent declaration as the catalog's plugin layer entry (instructions joined into `system`). */
export function checkAgent(raw: unknown, pluginId: string): Checked<{ readonly entry: PluginAgentDeclaration; readonly declaration: AgentDeclaration }> {
  if (!isRecord(raw)) return bad("an Agent declaration must be an object");
  const id = raw["id"];
  if (typeof id !== "string" || !isAgentId(id)) return bad(`invalid Agent id ${quote(id)}`);
  const at = `Agent ${JSON.stringify(id)}`;
  const displayName = displayText(raw["displayName"], 256);
  if (displayName === undefined) return bad(`${at}: displayName must be single-line, trimmed, NFC text of 1 to 256 characters`);
  const description = raw["description"] === "" ? "" : displayText(raw["description"], 1024);
  if (description === undefined) return bad(`${at}: description must be single-line, trimmed, NFC text of at most 1,024 characters`);
  const instructions = raw["instructions"] ?? [];
  if (!Array.isArray(instructions) || !instructions.every((item) => isRecord(item) && (item["role"] === "system" || item["role"] === "developer") && typeof item["text"] === "string" && item["text"] !== "")) {
    return bad(`${at}: instructions must be a list of { role: system | developer, text } with non-empty text`);
  }
  const model = raw["model"];
  if (model !== undefined && (typeof model !== "string" || !MODEL_REFERENCE.test(model) || model.length > 641)) return bad(`${at}: model must be "provider/model"`);
  let tools: AgentToolSelection = { mode: "all" };
  if (raw["tools"] !== undefined) {
    const selection = toolSelection(raw["tools"]);
    if (!selection.ok) return bad(`${at}: ${selection.message}`);
    tools = selection.value;
  }
  const toolChoice = raw["toolChoice"];
  if (toolChoice !== undefined) {
    const mode = isRecord(toolChoice) ? toolChoice["mode"] : undefined;
    if (!(mode === "auto" || mode === "none" || mode === "required" || (mode === "tool" && typeof (toolChoice as Record<string, unknown>)["name"] === "string"))) {
      return bad(`${at}: toolChoice must be { mode: auto | none | required } or { mode: tool, name }`);
    }
  }
  if (raw["settings"] !== undefined) {
    const problem = settingsProblem(raw["settings"]);
    if (problem) return bad(`${at}: ${problem}`);
  }
  const permissions = raw["permissions"] ?? [];
  if (!Array.isArray(permissions) || !permissions.every((rule) => isRecord(rule) && typeof rule["action"] === "string" && typeof rule["resource"] === "string" && EFFECTS.has(rule["effect"] as string))) {
    return bad(`${at}: permissions must be a list of { action, resource, effect: allow | ask | deny }`);
  }
  const mode = raw["mode"] ?? "all";
  if (!AGENT_MODES.has(mode as string)) return bad(`${at}: mode must be primary, subagent or all`);
  const fallbackDefault = raw["fallbackDefault"];
  if (fallbackDefault !== undefined && typeof fallbackDefault !== "boolean") return bad(`${at}: fallbackDefault must be true or false`);
  const texts = (instructions as ModelInstruction[]).map((item) => item.text);
  const entry: PluginAgentDeclaration = {
    pluginId,
    id,
    displayName,
    description,
    system: texts.join("\n\n"),
    ...(model !== undefined ? { model: model as string } : {}),
    mode: mode as PluginAgentDeclaration["mode"],
    permissions: (permissions as Record<string, string>[]).map((rule) => ({ action: rule["action"]!, resource: rule["resource"]!, effect: rule["effect"] as "allow" | "ask" | "deny" })),
    tools,
    ...(fallbackDefault === true ? { fallbackDefault: true } : {}),
  };
  return ok({ entry, declaration: copyJson({ ...raw, id }) as unknown as AgentDeclaration });
}

// ---------------------------------------------------------------------------------------------
// Skills

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+:-]*$/;
const LICENSE = /^[A-Za-z0-9 .()+-]+$/;
const FILE_PATH = /^[a-z0-9._-]+(?:\/[a-z0-9._-]+)*$/;
const BODY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/u;

function bodyProblem(body: unknown): string | undefined {
  if (typeof body !== "string" || body.trim() === "") return "body must contain non-whitespace text";
  if (body !== body.normalize("NFC")) return "body must be NFC-normalized";
  if (BODY_CONTROL.test(body)) return "body must not contain carriage returns or control characters other than tab and newline";
  return undefined;
}

function advertisementOf(raw: unknown): Skill["modelAdvertisement"] | undefined {
  if (!isRecord(raw) || typeof raw["advertised"] !== "boolean" || typeof raw["userInvocable"] !== "boolean") return undefined;
  return { advertised: raw["advertised"], userInvocable: raw["userInvocable"] };
}

function metadataOf(raw: unknown): Checked<Skill["publicMetadata"]> {
  if (!isRecord(raw)) return bad("publicMetadata must be an object with tags");
  const out: { author?: string; license?: string; homepage?: string; tags: string[] } = { tags: [] };
  if (raw["author"] !== undefined) {
    const author = displayText(raw["author"], 256);
    if (author === undefined) return bad("publicMetadata.author must be trimmed NFC text without control characters");
    out.author = author;
  }
  if (raw["license"] !== undefined) {
    if (typeof raw["license"] !== "string" || !LICENSE.test(raw["license"])) return bad("publicMetadata.license may use only letters, digits, spaces and .()+-");
    out.license = raw["license"];
  }
  if (raw["homepage"] !== undefined) {
    const homepage = raw["homepage"];
    let url: URL | undefined;
    try {
      url = typeof homepage === "string" ? new URL(homepage) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== "https:" || url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "" || url.href !== homepage) {
      return bad("publicMetadata.homepage must be a canonical https:// URL without credentials, query or fragment");
    }
    out.homepage = homepage as string;
  }
  const tags = raw["tags"];
  if (!Array.isArray(tags) || !tags.every((tag) => isIdentifier(tag)) || new Set(tags).size !== tags.length) return bad("publicMetadata.tags must be unique lowercase identifiers");
  out.tags = [...(tags as string[])];
  return ok(out);
}

/** A Skill declaration as its catalog value (`ze-plugin:<pluginId>`, source version = the revision id). */
export function checkSkill(raw: unknown, pluginId: string, sourceVersion: string): Checked<Skill> {
  if (!isRecord(raw)) return bad("a Skill declaration must be an object");
  const id = raw["id"];
  if (!isIdentifier(id)) return bad(`invalid Skill id ${quote(id)}`);
  const at = `Skill ${JSON.stringify(id)}`;
  const displayName = displayText(raw["displayName"], 256);
  if (displayName === undefined) return bad(`${at}: displayName must be non-empty trimmed NFC text without control characters`);
  const description = displayText(raw["description"], 1024);
  if (description === undefined) return bad(`${at}: description must be non-empty single-line trimmed NFC text without control characters`);
  const body = bodyProblem(raw["body"]);
  if (body) return bad(`${at}: ${body}`);
  if (typeof raw["version"] !== "string" || !VERSION.test(raw["version"])) return bad(`${at}: version must start with a letter or digit and use only letters, digits and ._+:-`);
  const modelAdvertisement = advertisementOf(raw["modelAdvertisement"]);
  if (!modelAdvertisement) return bad(`${at}: modelAdvertisement must be { advertised: boolean, userInvocable: boolean }`);
  const publicMetadata = metadataOf(raw["publicMetadata"]);
  if (!publicMetadata.ok) return bad(`${at}: ${publicMetadata.message}`);
  const files = raw["files"] ?? [];
  if (!Array.isArray(files) || !files.every((file) => typeof file === "string" && FILE_PATH.test(file) && !file.split("/").some((part) => part === "." || part === "..")) || new Set(files).size !== files.length) {
    return bad(`${at}: files must be unique lowercase relative paths without . or .. segments`);
  }
  return ok({
    id,
    displayName,
    description,
    body: raw["body"] as string,
    baseLocation: `ze-plugin:${pluginId}`,
    source: { id: pluginId, kind: "plugin" },
    version: { skillVersion: raw["version"], sourceVersion },
    modelAdvertisement,
    publicMetadata: publicMetadata.value,
    files: [...(files as string[])].sort(),
  });
}

/** Applies a transform's patch; the result must satisfy the declaration rules again. */
export function applySkillPatch(skill: Skill, patch: unknown): Checked<Skill> {
  if (patch === undefined) return ok(skill);
  if (!isRecord(patch)) return bad("a Skill transform must resolve with an object or undefined");
  const allowed = new Set(["displayName", "description", "body", "version", "modelAdvertisement", "publicMetadata"]);
  const extra = Object.keys(patch).find((key) => !allowed.has(key));
  if (extra !== undefined) return bad(`a Skill transform cannot change ${JSON.stringify(extra)}`);
  const p = patch as SkillTransformPatch;
  const candidate = {
    id: skill.id,
    displayName: p.displayName ?? skill.displayName,
    description: p.description ?? skill.description,
    body: p.body ?? skill.body,
    version: p.version ?? skill.version.skillVersion,
    modelAdvertisement: p.modelAdvertisement ?? skill.modelAdvertisement,
    publicMetadata: p.publicMetadata ?? skill.publicMetadata,
    files: skill.files,
  };
  const checked = checkSkill(candidate, skill.source.id, skill.version.sourceVersion);
  if (!checked.ok) return checked;
  return ok({ ...checked.value, baseLocation: skill.baseLocation, source: skill.source });
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A Skill source declaration (workspace directory or HTTP catalog). */
export function checkSkillSource(raw: unknown): Checked<SkillSource> {
  if (!isRecord(raw)) return bad("a Skill source must be an object");
  const id = raw["id"];
  if (!isIdentifier(id)) return bad(`invalid Skill source id ${quote(id)}`);
  if (raw["kind"] === "workspace") {
    const format = raw["format"];
    if (typeof raw["directory"] !== "string" || raw["directory"] === "" || raw["directory"].includes("\0")) return bad(`Skill source ${JSON.stringify(id)}: directory must be a non-empty path`);
    if (format !== undefined && format !== "catalog" && format !== "directory") return bad(`Skill source ${JSON.stringify(id)}: format must be catalog or directory`);
    if ((format ?? "catalog") === "catalog" && (raw["directory"].startsWith("/") || raw["directory"].split("/").some((part) => part === ".." || part === "") || raw["directory"] !== raw["directory"].toLowerCase())) {
      return bad(`Skill source ${JSON.stringify(id)}: a catalog directory must be a portable lowercase relative path`);
    }
    return ok({ kind: "workspace", id, directory: raw["directory"], ...(format !== undefined ? { format } : {}) });
  }
  if (raw["kind"] !== "http") return bad(`Skill source ${JSON.stringify(id)}: kind must be workspace or http`);
  const headers = raw["headers"];
  if (!Array.isArray(headers) || !headers.every((h) => isRecord(h) && typeof h["name"] === "string" && HEADER_NAME.test(h["name"]) && typeof h["value"] === "string" && !/[\r\n\0]/.test(h["value"]))) {
    return bad(`Skill source ${JSON.stringify(id)}: headers must be a list of valid { name, value } HTTP headers`);
  }
  const names = headers.map((h) => (h["name"] as string).toLowerCase());
  if (new Set(names).size !== names.length) return bad(`Skill source ${JSON.stringify(id)}: header names must be unique ignoring case`);
  const catalogUrl = raw["catalogUrl"];
  let url: URL | undefined;
  try {
    url = typeof catalogUrl === "string" ? new URL(catalogUrl) : undefined;
  } catch {
    url = undefined;
  }
  const canonical =
    url !== undefined &&
    (url.protocol === "https:" || (url.protocol === "http:" && headers.length === 0)) &&
    url.href === catalogUrl &&
    url.username === "" &&
    url.password === "" &&
    url.search === "" &&
    url.hash === "" &&
    !url.pathname.includes("%") &&
    url.pathname.endsWith("/catalog.json");
  if (!canonical) return bad(`Skill source ${JSON.stringify(id)}: catalogUrl must be a canonical http(s) URL ending in /catalog.json (https with headers), without credentials, query, fragment or percent-encoding`);
  return ok({ kind: "http", id, catalogUrl: catalogUrl as string, headers: headers.map((h) => ({ name: h["name"] as string, value: h["value"] as string })) });
}

/** A Skill transform declaration. */
export function checkSkillTransform(raw: unknown): Checked<SkillTransform> {
  if (!isRecord(raw) || !isIdentifier(raw["id"])) return bad(`invalid Skill transform id ${quote(isRecord(raw) ? raw["id"] : undefined)}`);
  if (typeof raw["transform"] !== "function") return bad(`Skill transform ${JSON.stringify(raw["id"])} must have a transform function`);
  return ok({ id: raw["id"], transform: raw["transform"] as SkillTransform["transform"] });
}

export type { SkillDeclaration };
