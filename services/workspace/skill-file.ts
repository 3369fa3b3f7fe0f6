// One SKILL.md: its frontmatter turned into a validated Skill definition, or the reason it is
// malformed. Shared by discovery (which needs only the metadata) and loading (which needs the
// body and re-checks that the file still declares the same Skill).
//
// Rules (reference "Local Skills" and the `directory` Skill source):
// - YAML frontmatter with string `name` and `description` is required.
// - `name` is the Skill ID and display name, so it must be a valid Skill ID: at most 128
//   characters, a lowercase letter followed by lowercase letters and digits joined by single
//   `.`, `_` or `-`. Anything else could not be loaded through the `skill` tool or named in a
//   permission rule.
// - `description` may be a YAML block scalar (`|`, `>`); it is advertised as one line, so
//   whitespace runs (newlines included) collapse to single spaces. It must be non-empty, free of
//   control characters and at most MAX_SKILL_DESCRIPTION_CHARS (the Agent Skills limit), because it
//   is sent with every model request that offers the `skill` tool.
// - `advertised` and `user-invocable` (top level or inside `metadata`) default to true;
//   Claude Code's `disable-model-invocation: true` also hides the Skill from the model's list.
//   Booleans or the strings "true"/"false" (Agent Skills `metadata` values are strings).
// - Descriptive fields (`version`, `license`, `author`, `homepage`, `tags`, top level or in
//   `metadata`) are kept when valid and otherwise dropped: they never reach the model, so a bad
//   value is no reason to lose the Skill. Any other key, including nested `metadata`, is ignored.
import type { SkillPublicMetadata } from "../../generated/client/types.gen.js";
import { parseFrontmatter } from "./frontmatter.js";

/** The file name every discovered Skill has. */
export const SKILL_FILE = "SKILL.md";
/** A SKILL.md is read whole, so it must fit the 50 KiB workspace text-read limit. */
export const MAX_SKILL_FILE_BYTES = 50 * 1024;
/** Longest Skill ID (the contract's `SkillListEntry.id` max length). */
export const MAX_SKILL_ID_LENGTH = 128;
/** Longest advertised description, in characters. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** The Skill version when the file declares none (as for the `directory` Skill source). */
export const DEFAULT_SKILL_VERSION = "1";

const SKILL_ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
const VERSION = /^[A-Za-z0-9][A-Za-z0-9._+:-]*$/;
const LICENSE = /^[A-Za-z0-9 .()+-]+$/;
const TAG = /^[a-z0-9]+(?:[._-][a-z0-9]+)*$/;
// Control characters (C0, DEL, C1).
const CONTROL = /\p{Cc}/u;

/** A SKILL.md's validated metadata and its Markdown body. */
export interface SkillDefinition {
  readonly _tag: "SkillDefinition";
  readonly id: string;
  readonly description: string;
  readonly advertised: boolean;
  readonly userInvocable: boolean;
  readonly version: string;
  readonly publicMetadata: SkillPublicMetadata;
  /** The Markdown after the frontmatter, `\n` line endings, trimmed. May be empty. */
  readonly body: string;
}

/** Why a SKILL.md is not a Skill; `message` is one line. */
export interface SkillMalformed {
  readonly _tag: "SkillMalformed";
  readonly message: string;
}

const malformed = (message: string): SkillMalformed => ({ _tag: "SkillMalformed", message });

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A flag from the top level or `metadata`; undefined when absent, a message when invalid. */
function flag(top: Record<string, unknown>, metadata: Record<string, unknown>, key: string): boolean | undefined | SkillMalformed {
  const value = key in top ? top[key] : metadata[key];
  if (value === undefined || value === null) return undefined;
  if (value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  return malformed(`\`${key}\` must be true or false`);
}

function text(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const normalized = value.normalize("NFC").trim();
  return normalized === "" || CONTROL.test(normalized) ? undefined : normalized;
}

function homepage(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  try {
    const url = new URL(value);
    const clean = url.protocol === "https:" && url.username === "" && url.password === "" && url.search === "" && url.hash === "";
    return clean && url.href === value ? value : undefined;
  } catch {
    return undefined;
  }
}

function publicMetadata(top: Record<string, unknown>, metadata: Record<string, unknown>): SkillPublicMetadata {
  const pick = (key: string): unknown => (key in top ? top[key] : metadata[key]);
  const author = text(pick("author"));
  const licenseText = text(pick("license"));
  const license = licenseText !== undefined && LICENSE.test(licenseText) ? licenseText : undefined;
  const site = homepage(pick("homepage"));
  const rawTags = pick("tags");
  const tags = Array.isArray(rawTags) ? [...new Set(rawTags.filter((tag): tag is string => typeof tag === "string" && TAG.test(tag)))] : [];
  return { ...(author !== undefined && { author }), ...(license !== undefined && { license }), ...(site !== undefined && { homepage: site }), tags };
}

/** Parses a SKILL.md's text (BOM already removed) into a definition, or says why it is malformed. */
export function parseSkillFile(source: string): SkillDefinition | SkillMalformed {
  const parsed = parseFrontmatter(source);
  if (parsed._tag === "FrontmatterMissing") return malformed("it has no YAML frontmatter (a first line of ---)");
  if (parsed._tag === "FrontmatterInvalid") return malformed(parsed.message);
  const top = parsed.data;
  if (typeof top["name"] !== "string") return malformed("the frontmatter has no string `name`");
  if (typeof top["description"] !== "string") return malformed("the frontmatter has no string `description`");
  const id = top["name"].normalize("NFC").trim();
  if (id.length > MAX_SKILL_ID_LENGTH || !SKILL_ID.test(id)) {
    return malformed(
      `\`name\` ${JSON.stringify(id)} is not a Skill ID (at most ${MAX_SKILL_ID_LENGTH} characters: a lowercase letter, then lowercase letters and digits joined by single ., _ or -)`,
    );
  }
  const description = top["description"].normalize("NFC").replace(/\s+/g, " ").trim();
  if (description === "") return malformed("`description` is empty");
  if (CONTROL.test(description)) return malformed("`description` contains control characters");
  if ([...description].length > MAX_SKILL_DESCRIPTION_CHARS) return malformed(`\`description\` is longer than ${MAX_SKILL_DESCRIPTION_CHARS} characters`);
  const metadata = isRecord(top["metadata"]) ? top["metadata"] : {};
  const advertised = flag(top, metadata, "advertised");
  const userInvocable = flag(top, metadata, "user-invocable");
  const hidden = flag(top, metadata, "disable-model-invocation");
  for (const value of [advertised, userInvocable, hidden]) if (typeof value === "object") return value;
  const declared = top["version"] ?? metadata["version"];
  const version = typeof declared === "number" ? String(declared) : declared;
  return {
    _tag: "SkillDefinition",
    id,
    description,
    advertised: hidden === true ? false : (advertised as boolean | undefined) ?? true,
    userInvocable: (userInvocable as boolean | undefined) ?? true,
    version: typeof version === "string" && VERSION.test(version) ? version : DEFAULT_SKILL_VERSION,
    publicMetadata: publicMetadata(top, metadata),
    body: parsed.body.trim(),
  };
}
