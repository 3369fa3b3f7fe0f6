// `agent`: Agent profiles a plugin registers with `context.agents.register`.
import type { GenerationSettings, ModelInstructions, ModelToolChoice } from "./message.js";
import type { PermissionRuleset } from "./permission.js";

/** Which Tools an Agent offers the model; selection can only narrow the catalog. */
export type AgentToolSelection =
  | { readonly mode: "all" }
  | { readonly mode: "none" }
  | {
      readonly mode: "include";
      /** Required Tool names: unique, lowercase identifiers. */
      readonly names: readonly [string, ...string[]];
      /** Included only when the effective catalog provides them. */
      readonly optionalNames?: readonly string[] | undefined;
    };

/** `primary` takes user Turns, `subagent` runs only through `task`, `all` both. */
export type AgentMode = "primary" | "subagent" | "all";

/**
 * An Agent profile. IDs share one namespace per scope: two host plugins cannot declare the same
 * ID, and a Session plugin cannot reuse a host Agent ID. Host configuration entries with the same
 * ID patch it.
 */
export interface AgentDeclaration {
  /** ≤ 128 characters of `/`-separated segments `[a-z][a-z0-9]*([._-][a-z0-9]+)*`. */
  readonly id: string;
  /** Single-line, trimmed, NFC text of at most 256 characters. */
  readonly displayName: string;
  /** Single-line, trimmed, NFC text of at most 1,024 characters. */
  readonly description: string;
  /** Instructions for every model request this Agent makes; they come first. */
  readonly instructions?: ModelInstructions | undefined;
  /** `provider/model`. */
  readonly model?: string | undefined;
  /** Defaults to `{ mode: 'all' }`. */
  readonly tools?: AgentToolSelection | undefined;
  /** Defaults to `auto`. */
  readonly toolChoice?: ModelToolChoice | undefined;
  readonly settings?: GenerationSettings | undefined;
  /** Appended after the host's and Session's rules. */
  readonly permissions?: PermissionRuleset | undefined;
  /** Defaults to `all`. A `subagent` Agent cannot be the default. */
  readonly mode?: AgentMode | undefined;
  /** Prefer this primary-capable Agent as the default when none is selected. */
  readonly fallbackDefault?: boolean | undefined;
}
