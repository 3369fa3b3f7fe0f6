// What `provider add` writes: a `providers.<name>` entry with a definition for an OpenAI- or
// Anthropic-compatible server, checked by the providers service's own compiler before the config
// file is touched, then written atomically (temporary file + rename) beside everything else the
// file holds. A file that is not JSON, or already has the name, is an error that changes nothing.
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { ZeClientError } from "../clients/index.js";
import { resolveProviders } from "../services/providers/registry.js";
import { describeProviderError } from "../services/providers/errors.js";
import { usageError } from "./errors.js";
import { makeDirectorySync } from "../services/contract/directory.js";

export type CompatibleProtocol = "openai" | "anthropic";

/** The catalog providers a config without a `providers` map enables (kept when add creates the map). */
const DEFAULT_PROVIDERS = ["openai", "opencode-go", "openrouter"] as const;

/** The `providers.<name>` entry: discovery on, the key sent as the protocol expects. */
export function providerEntry(options: { readonly name: string; readonly baseURL: string; readonly protocol: CompatibleProtocol; readonly withKey: boolean }): Record<string, unknown> {
  const protocol = options.protocol === "openai" ? "chat" : "messages";
  const authentication = !options.withKey ? { kind: "none" } : protocol === "chat" ? { kind: "bearer" } : { kind: "header", name: "x-api-key" };
  const entry = { definition: { displayName: options.name, baseURL: options.baseURL, protocol, authentication, discovery: true } };
  // The service's own check (id, URL, definition), before anything is written.
  const checked = resolveProviders({ [options.name]: entry as never });
  if (!checked.ok) throw usageError(describeProviderError(checked.error));
  return entry;
}

/** The config file's content as an object: `{}` when it does not exist yet. */
function readConfig(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw Object.assign(new Error(`${file}: cannot read it: ${(error as NodeJS.ErrnoException).code ?? String(error)}`), { _tag: "ConfigInvalid" });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw Object.assign(new Error(`${file}: not valid JSON; fix it first (nothing was changed)`), { _tag: "ConfigInvalid" });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw Object.assign(new Error(`${file}: must be a JSON object`), { _tag: "ConfigInvalid" });
  return value as Record<string, unknown>;
}

function writeAtomically(file: string, text: string): void {
  makeDirectorySync(dirname(file), 0o700);
  let mode = 0o600;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    // A new file: 0600.
  }
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(temporary, text, { mode, flag: "wx" });
  renameSync(temporary, file);
}

/** Adds `providers.<name>` to `file`; returns how to undo it (the previous content, or none). */
export function addProviderEntry(file: string, name: string, entry: Record<string, unknown>): () => void {
  const config = readConfig(file);
  const existing = config["providers"];
  if (existing !== undefined && (typeof existing !== "object" || existing === null || Array.isArray(existing))) {
    throw Object.assign(new Error(`${file}: /providers must be an object`), { _tag: "ConfigInvalid" });
  }
  const providers = (existing as Record<string, unknown> | undefined) ?? Object.fromEntries(DEFAULT_PROVIDERS.map((id) => [id, true]));
  if (Object.hasOwn(providers, name)) {
    throw new ZeClientError(409, { _tag: "ConflictError", message: `${file} already has providers.${name}; edit it there or choose another name` });
  }
  let previous: string | undefined;
  try {
    previous = readFileSync(file, "utf8");
  } catch {
    previous = undefined;
  }
  writeAtomically(file, `${JSON.stringify({ ...config, providers: { ...providers, [name]: entry } }, null, 2)}\n`);
  return () => {
    if (previous !== undefined) writeAtomically(file, previous);
    else rmSync(file, { force: true });
  };
}
