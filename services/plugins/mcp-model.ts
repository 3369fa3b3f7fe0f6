// Validation of the MCP server definitions and model declarations a plugin registers (the
// reference's `mcp` and `model` modules). Core owns the connections and the model catalog; here
// a declaration is only checked and copied, so a later room can compose it.
import type { McpServerDefinition, ModelDeclaration } from "../../plugin/index.js";
import { copyJson, displayText, isIdentifier, isRecord, jsonProblem } from "./checks.js";
import type { Checked } from "./declarations.js";

const bad = (message: string): Checked<never> => ({ ok: false, message });

/** MCP protocol versions Core supports. */
export const SUPPORTED_MCP_PROTOCOL_VERSIONS: readonly string[] = ["2025-06-18"];

const REFERENCE = /^[A-Za-z][A-Za-z0-9_.:/-]{0,255}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const OWNED_HEADERS = new Set(["accept", "content-type", "content-length", "host", "mcp-protocol-version", "mcp-session-id", "connection", "transfer-encoding"]);
const CREDENTIAL_QUERY = /^(?:token|access_token|api_key|apikey|api-key|key|secret|password|auth|authorization|client_secret|sig|signature)$/i;

const isLimit = (value: unknown): boolean =>
  isRecord(value) && (value["kind"] === "unlimited" || (value["kind"] === "finite" && Number.isSafeInteger(value["value"]) && (value["value"] as number) >= 1));

const isCredential = (value: unknown, kinds: readonly string[] = ["environment", "secret", "oauth"]): boolean =>
  isRecord(value) && kinds.includes(value["kind"] as string) && typeof value["reference"] === "string" && REFERENCE.test(value["reference"]);

function commonProblem(raw: Record<string, unknown>): string | undefined {
  if (raw["enabled"] !== undefined && typeof raw["enabled"] !== "boolean") return "enabled must be true or false";
  if (raw["order"] !== undefined && (!Number.isSafeInteger(raw["order"]) || (raw["order"] as number) < 0)) return "order must be a non-negative integer";
  if (raw["resourceReadTool"] !== undefined && typeof raw["resourceReadTool"] !== "boolean") return "resourceReadTool must be true or false";
  const versions = raw["protocolVersions"];
  if (!Array.isArray(versions) || versions.length === 0 || new Set(versions).size !== versions.length) return "protocolVersions must be a non-empty list without duplicates";
  const unsupported = versions.find((version) => !SUPPORTED_MCP_PROTOCOL_VERSIONS.includes(version as string));
  if (unsupported !== undefined) return `protocol version ${JSON.stringify(unsupported)} is not supported (supported: ${SUPPORTED_MCP_PROTOCOL_VERSIONS.join(", ")})`;
  const capabilities = raw["clientCapabilities"];
  if (capabilities !== undefined && !(isRecord(capabilities) && capabilities["roots"] === false && capabilities["sampling"] === false && capabilities["elicitation"] === false)) {
    return "clientCapabilities must set roots, sampling and elicitation to false";
  }
  const limits = raw["limits"];
  if (limits !== undefined && !(isRecord(limits) && isLimit(limits["startupMs"]) && isLimit(limits["catalogMs"]) && isLimit(limits["executionMs"]))) return "limits must set startupMs, catalogMs and executionMs";
  const reconnect = raw["reconnect"];
  if (
    reconnect !== undefined &&
    !(isRecord(reconnect) && (reconnect["kind"] === "manual" || (reconnect["kind"] === "retry" && Number.isSafeInteger(reconnect["delayMs"]) && (reconnect["delayMs"] as number) >= 1 && isLimit(reconnect["maxAttempts"]))))
  ) {
    return "reconnect must be { kind: manual } or { kind: retry, delayMs, maxAttempts }";
  }
  return undefined;
}

function endpointProblem(endpoint: unknown): string | undefined {
  if (typeof endpoint !== "string" || endpoint.length > 2048) return "endpoint must be an http(s) URL of at most 2,048 characters";
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "endpoint must be an absolute http(s) URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "endpoint must be an http(s) URL";
  if (url.username !== "" || url.password !== "") return "endpoint must not embed credentials";
  if (url.hash !== "") return "endpoint must not have a fragment";
  for (const name of url.searchParams.keys()) if (CREDENTIAL_QUERY.test(name)) return `endpoint must not carry credential-like query parameter ${JSON.stringify(name)}`;
  return undefined;
}

/** An MCP server definition (local stdio or remote streamable HTTP). */
export function checkMcpServer(raw: unknown): Checked<McpServerDefinition> {
  if (!isRecord(raw)) return bad("an MCP server definition must be an object");
  if (!isIdentifier(raw["id"])) return bad(`invalid MCP server id ${JSON.stringify(raw["id"])}`);
  const at = `MCP server ${JSON.stringify(raw["id"])}`;
  if (!isIdentifier(raw["name"])) return bad(`${at}: invalid name ${JSON.stringify(raw["name"])}`);
  const json = jsonProblem(raw);
  if (json) return bad(`${at}: not plain JSON: ${json}`);
  const common = commonProblem(raw);
  if (common) return bad(`${at}: ${common}`);
  const transport = raw["transport"];
  if (!isRecord(transport)) return bad(`${at}: transport is required`);
  if (raw["kind"] === "local") {
    if (transport["kind"] !== "stdio") return bad(`${at}: a local server's transport kind must be stdio`);
    if (typeof transport["command"] !== "string" || transport["command"] === "") return bad(`${at}: transport.command must be a non-empty string`);
    const args = transport["arguments"];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) return bad(`${at}: transport.arguments must be a list of strings`);
    const environment = transport["environment"];
    if (!isRecord(environment) || !Object.entries(environment).every(([name, value]) => ENV_NAME.test(name) && isCredential(value))) {
      return bad(`${at}: transport.environment must map variable names to credential references`);
    }
  } else if (raw["kind"] === "remote") {
    if (transport["kind"] !== "streamable-http") return bad(`${at}: a remote server's transport kind must be streamable-http`);
    const endpoint = endpointProblem(transport["endpoint"]);
    if (endpoint) return bad(`${at}: ${endpoint}`);
    const headers = transport["headers"];
    if (!isRecord(headers) || !Object.entries(headers).every(([name, value]) => HEADER_NAME.test(name) && isCredential(value))) return bad(`${at}: transport.headers must map header names to credential references`);
    const names = Object.keys(headers).map((name) => name.toLowerCase());
    if (new Set(names).size !== names.length) return bad(`${at}: header names must be unique ignoring case`);
    const owned = names.find((name) => OWNED_HEADERS.has(name));
    if (owned !== undefined) return bad(`${at}: header ${JSON.stringify(owned)} is owned by the transport`);
    if (transport["oauth"] !== undefined) {
      if (!isCredential(transport["oauth"], ["oauth"])) return bad(`${at}: transport.oauth must be an oauth credential reference`);
      if (names.includes("authorization")) return bad(`${at}: an oauth server cannot also set a static authorization header`);
    }
  } else {
    return bad(`${at}: kind must be local or remote`);
  }
  return { ok: true, value: copyJson(raw) as unknown as McpServerDefinition };
}

const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*(?:\/[A-Za-z0-9][A-Za-z0-9._:-]*)*$/;
const PRICE = /^(?:0|[1-9]\d*)(?:\.\d+)?$/;
const nonNegativeInteger = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function metadataProblem(metadata: unknown): string | undefined {
  if (!isRecord(metadata)) return "metadata is required";
  if (displayText(metadata["displayName"], 256) === undefined) return "metadata.displayName must be 1 to 256 characters without surrounding whitespace";
  const capabilities = metadata["capabilities"];
  if (!isRecord(capabilities)) return "metadata.capabilities is required";
  const input = capabilities["input"];
  if (!Array.isArray(input) || input.length === 0 || new Set(input).size !== input.length || !input.every((item) => item === "text" || item === "image")) return "capabilities.input must list text and/or image once each";
  const output = capabilities["output"];
  if (!Array.isArray(output) || output.length === 0 || !output.every((item) => item === "text")) return "capabilities.output must be [\"text\"]";
  if (typeof capabilities["tools"] !== "boolean") return "capabilities.tools must be true or false";
  const image = capabilities["image"];
  if (input.includes("image") !== (image !== undefined)) return "capabilities.image is required exactly when input includes image";
  if (image !== undefined) {
    const kinds = isRecord(image) ? image["referenceTypes"] : undefined;
    const types = isRecord(image) ? image["mimeTypes"] : undefined;
    const mimes = ["image/jpeg", "image/png", "image/gif", "image/webp"];
    if (!Array.isArray(kinds) || kinds.length === 0 || new Set(kinds).size !== kinds.length || !kinds.every((kind) => kind === "url" || kind === "base64")) return "capabilities.image.referenceTypes is invalid";
    if (!Array.isArray(types) || types.length === 0 || new Set(types).size !== types.length || !types.every((type) => mimes.includes(type as string))) return "capabilities.image.mimeTypes is invalid";
  }
  const limits = metadata["limits"];
  if (!isRecord(limits) || !nonNegativeInteger(limits["contextUnits"]) || !nonNegativeInteger(limits["outputUnits"])) return "metadata.limits must hold non-negative integers contextUnits and outputUnits";
  if (limits["contextUnits"] !== 0 && limits["outputUnits"] > limits["contextUnits"]) return "limits.outputUnits must not exceed a non-zero contextUnits";
  const pricing = metadata["pricing"];
  if (pricing !== undefined) {
    const known = isRecord(pricing) && pricing["version"] === "v1";
    if (!(isRecord(pricing) && (pricing["version"] === "unknown" || known))) return "metadata.pricing must be { version: v1, … } or { version: unknown }";
    if (known) {
      const rates = pricing["rates"];
      const price = (value: unknown, optional: boolean) => (value === undefined ? optional : typeof value === "string" && PRICE.test(value));
      if (typeof pricing["currency"] !== "string" || !/^[A-Z]{3}$/.test(pricing["currency"]) || pricing["unit"] !== "million_model_units") return "metadata.pricing needs a currency code and unit million_model_units";
      if (!isRecord(rates) || !price(rates["input"], false) || !price(rates["output"], false) || !price(rates["cacheReadInput"], true) || !price(rates["cacheWriteInput"], true)) return "metadata.pricing.rates must be plain decimal strings";
    }
  }
  const defaults = metadata["defaults"];
  if (defaults !== undefined && (!isRecord(defaults) || jsonProblem(defaults) !== undefined)) return "metadata.defaults must be plain generation settings";
  const maxOutput = isRecord(defaults) ? defaults["maxOutputUnits"] : undefined;
  if (maxOutput !== undefined && limits["outputUnits"] !== 0 && (maxOutput as number) > (limits["outputUnits"] as number)) return "defaults.maxOutputUnits must fit limits.outputUnits";
  return undefined;
}

/** A model declaration; `nativeProviders` are the composed native provider ids it must not name. */
export function checkModel(raw: unknown, nativeProviders: ReadonlySet<string> = new Set()): Checked<ModelDeclaration> {
  if (!isRecord(raw)) return bad("a model declaration must be an object");
  const providerId = raw["providerId"];
  if (!isIdentifier(providerId)) return bad(`invalid model provider id ${JSON.stringify(providerId)}`);
  if (nativeProviders.has(providerId)) return bad(`model provider id ${JSON.stringify(providerId)} names a native provider`);
  const modelId = raw["modelId"];
  if (typeof modelId !== "string" || modelId.length > 512 || !MODEL_ID.test(modelId)) return bad(`invalid model id ${JSON.stringify(modelId)}`);
  const at = `model ${providerId}/${modelId}`;
  if (displayText(raw["providerDisplayName"], 256) === undefined) return bad(`${at}: providerDisplayName must be 1 to 256 characters without surrounding whitespace`);
  const problem = metadataProblem(raw["metadata"]);
  if (problem) return bad(`${at}: ${problem}`);
  if (typeof raw["stream"] !== "function") return bad(`${at}: stream must be a function`);
  return {
    ok: true,
    value: { providerId, providerDisplayName: raw["providerDisplayName"] as string, modelId, metadata: copyJson(raw["metadata"]) as ModelDeclaration["metadata"], stream: raw["stream"] as ModelDeclaration["stream"] },
  };
}
