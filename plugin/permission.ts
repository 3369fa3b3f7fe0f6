// `permission`: rules, projections and approval decisions.
import type { JsonObject } from "./json.js";

/** Outcome of a permission rule. When no rule matches, the effect is `ask`. */
export type PermissionEffect = "allow" | "ask" | "deny";

/** One permission rule; `action` and `resource` are `*`/`?` patterns. */
export interface PermissionRule {
  readonly action: string;
  readonly resource: string;
  readonly effect: PermissionEffect;
}

/** Ordered rules; the last matching rule wins (host, then Session, then the Agent's rules). */
export type PermissionRuleset = readonly PermissionRule[];

/**
 * One action and resource check a tool asks Core to authorize before `execute` runs. Omit `save`
 * and `metadata` instead of setting them to `undefined`.
 */
export interface PermissionProjection {
  /** Action name matched against rule `action` patterns, such as `read` or `deploy`. */
  readonly action: string;
  /** Concrete resources checked now. Must be non-empty. */
  readonly resources: readonly [string, ...string[]];
  /** Patterns an **Allow always** reply stores for the rest of the Session. */
  readonly save?: readonly string[] | undefined;
  /** JSON rules never match; it comes back in `context.permissions` during `execute`. */
  readonly metadata?: JsonObject | undefined;
}

/** A hook's approval: `deny` refuses every projection of the call, `allow` approves those that would ask. */
export type ToolApprovalDecision = "allow" | "deny";
