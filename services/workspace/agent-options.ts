// An agent's options, read with the same rules from a JSON `agents` entry and from Markdown
// frontmatter: the keys allowed, one-line display text, `PROVIDER/MODEL`, modes and permission
// rules. Problems are values (unsupported or malformed, with a JSON pointer), never thrown.
import type { AgentMode, PermissionRule } from "../../generated/client/types.gen.js";

export interface AgentPatch {
  displayName?: string;
  description?: string;
  system?: string;
  model?: string;
  mode?: AgentMode;
  permissions?: PermissionRule[];
  disabled?: boolean;
}

const OPTION_KEYS: ReadonlySet<string> = new Set(["displayName", "description", "system", "model", "mode", "permissions", "disabled"]);
const MODES: ReadonlySet<string> = new Set(["primary", "subagent", "all"]);
const EFFECTS: ReadonlySet<string> = new Set(["allow", "ask", "deny"]);
const RULE_KEYS: ReadonlySet<string> = new Set(["action", "resource", "effect"]);
const MODEL_PATTERN = /^[^/]+\/.+$/s;
const MAX_MODEL_LENGTH = 641;
export const HOME_EXPANDED_ACTIONS: ReadonlySet<string> = new Set(["read", "edit", "external_directory"]);

export type OptionProblem = { readonly kind: "unsupported" | "malformed"; readonly pointer: string; readonly message: string };
type OptionsResult = { readonly ok: true; readonly patch: AgentPatch } | { readonly ok: false; readonly problem: OptionProblem };

export const escapePointer = (segment: string): string => segment.replaceAll("~", "~0").replaceAll("/", "~1");
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

// Display text is shown on one line: NFC, whitespace runs (YAML block scalars bring newlines)
// collapsed, trimmed; other control characters are refused.
function singleLine(value: unknown, max: number, allowEmpty: boolean): string | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.normalize("NFC").replace(/\s+/gu, " ").trim();
  if (/[\u0000-\u001f\u007f]/u.test(text) || text.length > max || (!allowEmpty && text === "")) return undefined;
  return text;
}

function readRules(value: unknown): PermissionRule[] | string {
  if (!Array.isArray(value)) return "must be a list of {action, resource, effect} rules";
  const rules: PermissionRule[] = [];
  for (const [index, rule] of value.entries()) {
    const valid =
      isRecord(rule) &&
      Object.keys(rule).every((key) => RULE_KEYS.has(key)) &&
      typeof rule["action"] === "string" &&
      typeof rule["resource"] === "string" &&
      typeof rule["effect"] === "string" &&
      EFFECTS.has(rule["effect"]);
    if (!valid) return `rule ${index} must be exactly {action: string, resource: string, effect: allow|ask|deny}`;
    rules.push({ action: rule["action"] as string, resource: rule["resource"] as string, effect: rule["effect"] as PermissionRule["effect"] });
  }
  return rules;
}

/** Checks one entry. Unknown keys (OpenCode's `hidden`, `color`, `steps`, `tools`, …) come first: they are rejected, not ignored. */
export function readOptions(raw: unknown): OptionsResult {
  const fail = (kind: OptionProblem["kind"], key: string, message: string): OptionsResult => ({
    ok: false,
    problem: { kind, pointer: key === "" ? "" : `/${escapePointer(key)}`, message },
  });
  if (!isRecord(raw)) return fail("malformed", "", "an agent entry must be an object");
  for (const key of Object.keys(raw)) {
    if (!OPTION_KEYS.has(key)) return fail("unsupported", key, `unsupported agent option ${JSON.stringify(key)}; supported: ${[...OPTION_KEYS].join(", ")}`);
  }
  const patch: AgentPatch = {};
  if (raw["displayName"] !== undefined) {
    const text = singleLine(raw["displayName"], 256, false);
    if (text === undefined) return fail("malformed", "displayName", "displayName must be non-empty single-line text of at most 256 characters");
    patch.displayName = text;
  }
  if (raw["description"] !== undefined) {
    const text = singleLine(raw["description"], 1024, true);
    if (text === undefined) return fail("malformed", "description", "description must be single-line text of at most 1024 characters");
    patch.description = text;
  }
  if (raw["system"] !== undefined) {
    if (typeof raw["system"] !== "string") return fail("malformed", "system", "system must be a string");
    patch.system = raw["system"];
  }
  if (raw["model"] !== undefined) {
    const model = raw["model"];
    if (typeof model !== "string" || !MODEL_PATTERN.test(model) || model.length > MAX_MODEL_LENGTH) {
      return fail("malformed", "model", `model must be "provider/model" (at most ${MAX_MODEL_LENGTH} characters)`);
    }
    patch.model = model;
  }
  if (raw["mode"] !== undefined) {
    if (typeof raw["mode"] !== "string" || !MODES.has(raw["mode"])) return fail("malformed", "mode", "mode must be primary, subagent or all");
    patch.mode = raw["mode"] as AgentMode;
  }
  if (raw["permissions"] !== undefined) {
    const rules = readRules(raw["permissions"]);
    if (typeof rules === "string") return fail("malformed", "permissions", `permissions ${rules}`);
    patch.permissions = rules;
  }
  if (raw["disabled"] !== undefined) {
    if (typeof raw["disabled"] !== "boolean") return fail("malformed", "disabled", "disabled must be true or false");
    patch.disabled = raw["disabled"];
  }
  return { ok: true, patch };
}
