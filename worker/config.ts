// The Worker host's configuration, read from Worker variables once per wake (the reference's
// "Permission configuration", "Hybrid CodeMode" and "Provider transport configuration"):
//
// | variable | read as |
// | --- | --- |
// | `HARNESS_PROVIDERS` | JSON provider map, an allowlist (`"{}"` is invalid); absent: the default providers |
// | `HARNESS_PERMISSIONS` | JSON array of ordered `{ action, resource, effect }` rules (the Server scope) |
// | `HARNESS_PERMISSION_CASE_SENSITIVE` | `true` or `false`; default `true` |
// | `HARNESS_APPROVAL_TIMEOUT_MS` | positive milliseconds or `unlimited`; absent: unlimited |
// | `HARNESS_CODEMODE_ENABLED` | `true` or `false`; default `true` |
// | `HARNESS_MODEL` | the host's model (`provider/model`); absent: the first available model |
//
// A bad value is a `ConfigInvalid` refusal naming the variable (never its value: a misplaced
// secret must not echo), which the server object answers to every request as a typed 503.
// The Node host validates its files with Ajv, which compiles code at run time (workerd forbids
// it), so these few variables are checked here by hand and the provider map by the providers
// room's own schema (`resolveProviders`).
import type { Config, PermissionRule } from "../services/config/index.js";
import { describeProviderError, resolveProviders, type ProviderSet } from "../services/providers/index.js";

export interface WorkerConfigVariables {
  readonly HARNESS_PROVIDERS?: string;
  readonly HARNESS_PERMISSIONS?: string;
  readonly HARNESS_PERMISSION_CASE_SENSITIVE?: string;
  readonly HARNESS_APPROVAL_TIMEOUT_MS?: string;
  readonly HARNESS_CODEMODE_ENABLED?: string;
  readonly HARNESS_MODEL?: string;
}

export interface WorkerConfig {
  readonly config: Config;
  /** The compiled provider map (keys come later, through `ProviderKeys`). */
  readonly providers: ProviderSet;
}

export type WorkerConfigResult = { readonly ok: true; readonly value: WorkerConfig } | { readonly ok: false; readonly tag: string; readonly message: string };

const invalid = (variable: string, message: string): WorkerConfigResult => ({ ok: false, tag: "ConfigInvalid", message: `Worker variable ${variable}: ${message}` });

const EFFECTS = new Set(["allow", "ask", "deny"]);
const MAX_RULES = 1000;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function permissionRules(text: string): PermissionRule[] | string {
  const parsed = parseJson(text);
  if (!parsed.ok) return "is not valid JSON";
  return checkPermissionRules(parsed.value);
}

/** Ordered `{ action, resource, effect }` rules, or what is wrong with the first bad one (WorkerHarnessHost's `permissions` too). */
export function checkPermissionRules(value: unknown): PermissionRule[] | string {
  if (!Array.isArray(value)) return "must be a JSON array of { action, resource, effect } rules";
  if (value.length > MAX_RULES) return `must hold at most ${MAX_RULES} rules`;
  const rules: PermissionRule[] = [];
  for (const [index, rule] of value.entries()) {
    if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return `/${index} must be an object`;
    const { action, resource, effect, ...rest } = rule as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length > 0) return `/${index} has unknown property ${JSON.stringify(extra[0])}`;
    if (typeof action !== "string" || action === "") return `/${index}/action must be a non-empty string`;
    if (typeof resource !== "string" || resource === "") return `/${index}/resource must be a non-empty string`;
    if (typeof effect !== "string" || !EFFECTS.has(effect)) return `/${index}/effect must be "allow", "ask" or "deny"`;
    rules.push({ action, resource, effect: effect as PermissionRule["effect"] });
  }
  return rules;
}

function flag(text: string | undefined): boolean | undefined | "invalid" {
  if (text === undefined || text === "") return undefined;
  if (text === "true") return true;
  if (text === "false") return false;
  return "invalid";
}

/** The Worker's configuration, or the refusal naming the first bad variable. */
export function readWorkerConfig(variables: WorkerConfigVariables): WorkerConfigResult {
  let permissions: PermissionRule[] | undefined;
  if (variables.HARNESS_PERMISSIONS !== undefined && variables.HARNESS_PERMISSIONS !== "") {
    const rules = permissionRules(variables.HARNESS_PERMISSIONS);
    if (typeof rules === "string") return invalid("HARNESS_PERMISSIONS", rules);
    permissions = rules;
  }
  const caseSensitive = flag(variables.HARNESS_PERMISSION_CASE_SENSITIVE);
  if (caseSensitive === "invalid") return invalid("HARNESS_PERMISSION_CASE_SENSITIVE", 'must be "true" or "false"');
  const codemode = flag(variables.HARNESS_CODEMODE_ENABLED);
  if (codemode === "invalid") return invalid("HARNESS_CODEMODE_ENABLED", 'must be "true" or "false"');

  let approval: Config["approval"];
  const timeout = variables.HARNESS_APPROVAL_TIMEOUT_MS;
  if (timeout !== undefined && timeout !== "") {
    if (timeout === "unlimited") approval = { timeoutMs: { kind: "unlimited" } };
    else {
      const value = /^[0-9]+$/.test(timeout) ? Number(timeout) : Number.NaN;
      if (!Number.isSafeInteger(value) || value < 1) return invalid("HARNESS_APPROVAL_TIMEOUT_MS", 'must be a positive whole number of milliseconds or "unlimited"');
      approval = { timeoutMs: { kind: "finite", value } };
    }
  }

  let providerMap: Config["providers"];
  if (variables.HARNESS_PROVIDERS !== undefined) {
    const parsed = parseJson(variables.HARNESS_PROVIDERS);
    if (!parsed.ok) return invalid("HARNESS_PROVIDERS", "is not valid JSON");
    if (typeof parsed.value !== "object" || parsed.value === null || Array.isArray(parsed.value)) return invalid("HARNESS_PROVIDERS", "must be a JSON object mapping provider IDs to entries");
    providerMap = parsed.value as Config["providers"];
  }
  const resolved = resolveProviders(providerMap as Parameters<typeof resolveProviders>[0]);
  if (!resolved.ok) {
    // Tagged like the Node host's provider setup failures (`ProvidersEmpty`, `ProviderInvalid`).
    return { ok: false, tag: resolved.error._tag, message: `Worker variable HARNESS_PROVIDERS: ${describeProviderError(resolved.error)}` };
  }

  const model = variables.HARNESS_MODEL;
  if (model !== undefined && model !== "" && resolved.value.model(model) === undefined) {
    return invalid("HARNESS_MODEL", "names no model of an enabled provider in HARNESS_PROVIDERS");
  }
  const config: Config = {
    ...(model !== undefined && model !== "" ? { model } : {}),
    ...(providerMap !== undefined ? { providers: providerMap } : {}),
    ...(permissions !== undefined ? { permissions } : {}),
    ...(caseSensitive !== undefined ? { permissionMatching: { caseSensitive } } : {}),
    ...(approval !== undefined ? { approval } : {}),
    ...(codemode !== undefined ? { codemode: { enabled: codemode } } : {}),
  };
  return { ok: true, value: { config, providers: resolved.value } };
}
