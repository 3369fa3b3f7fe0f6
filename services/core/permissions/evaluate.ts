// The permission rule engine: pure functions over ordered rule layers.
//
// Order (earliest first): Ze defaults → server (config) rules → Session rules → Agent rules.
// The LAST rule whose `action` and `resource` patterns both match decides; when none matches
// the effect is `ask`.
//
// Saved Session grants (patterns stored by an **Allow always** reply) are not a layer in that
// order. They are consulted only after the configured layers have decided, and only to turn an
// `ask` into `allow`:
//
//   configured = last matching rule of defaults + server + session + agent (no match → ask)
//   configured = deny            → deny   (a grant never overrides a configured deny)
//   configured = allow           → allow
//   configured = ask, a saved grant's action AND resource patterns match → allow (source "saved")
//   otherwise                    → ask
//
// So "configured deny" means: the rule that wins among the configured layers is a `deny`. A
// `deny` that a later configured rule overrides is not a deny any more, and a grant can then
// apply. Grants match with the same pattern semantics and case sensitivity as rules.
//
// `~`/`$HOME` in rules is expanded when configuration loads (services/config); it is not
// repeated here.
import type { PermissionEffect, PermissionRule, SavedPermission } from "../../../generated/client/types.gen.js";
import { matchesPattern } from "./match.js";

/** Ze's built-in rules, first in every evaluation. */
export const ZE_DEFAULT_RULES: readonly PermissionRule[] = Object.freeze([
  // Every Tool is allowed; inside the workdir file resources are relative, outside they are
  // absolute and the tool projects an extra `external_directory` check, asked below.
  { action: "*", resource: "*", effect: "allow" },
  { action: "external_directory", resource: "*", effect: "ask" },
  // `.env` reads ask (`.env`, `prod.env`, `sub/.env`, `.env.local`, ...); `.env.example` stays allowed.
  { action: "read", resource: "*.env", effect: "ask" },
  { action: "read", resource: "*.env.*", effect: "ask" },
  { action: "read", resource: "*.env.example", effect: "allow" },
] satisfies PermissionRule[]);

/** One action/resource check. */
export interface PermissionCheck {
  readonly action: string;
  readonly resource: string;
}

/** A saved Session grant: an allow pattern pair stored by an `always` reply. */
export type SavedGrant = Pick<SavedPermission, "action" | "resource">;

export interface PermissionLayers {
  /** Replaces Ze's defaults; absent means {@link ZE_DEFAULT_RULES}. Meant for tests and special hosts. */
  readonly defaults?: readonly PermissionRule[] | undefined;
  /** Resolved server (config) rules, already in global → project → programmatic order. */
  readonly server?: readonly PermissionRule[] | undefined;
  /** The Session's configured rules. */
  readonly session?: readonly PermissionRule[] | undefined;
  /** The active Agent's rules. */
  readonly agent?: readonly PermissionRule[] | undefined;
  /** The Session's saved grants. */
  readonly saved?: readonly SavedGrant[] | undefined;
  /** `permissionMatching.caseSensitive`; defaults to `true`. */
  readonly caseSensitive?: boolean | undefined;
}

export type RuleLayer = "default" | "server" | "session" | "agent";

export type PermissionDecision =
  /** A configured rule decided (for `ask`, no saved grant matched). */
  | { readonly effect: PermissionEffect; readonly source: RuleLayer; readonly rule: PermissionRule; readonly index: number }
  /** A saved grant turned a configured `ask` into `allow`. */
  | { readonly effect: "allow"; readonly source: "saved"; readonly grant: SavedGrant }
  /** No configured rule matched and no grant applied. */
  | { readonly effect: "ask"; readonly source: "none" };

function* orderedRules(layers: PermissionLayers): Generator<{ rule: PermissionRule; source: RuleLayer; index: number }> {
  const order: [RuleLayer, readonly PermissionRule[] | undefined][] = [
    ["default", layers.defaults ?? ZE_DEFAULT_RULES],
    ["server", layers.server],
    ["session", layers.session],
    ["agent", layers.agent],
  ];
  for (const [source, rules] of order) {
    if (!rules) continue;
    for (let index = 0; index < rules.length; index++) yield { rule: rules[index]!, source, index };
  }
}

/** The configured decision only: last matching rule across the layers, ignoring saved grants. */
export function evaluateConfigured(check: PermissionCheck, layers: PermissionLayers): PermissionDecision {
  const options = { caseSensitive: layers.caseSensitive ?? true };
  let winner: { rule: PermissionRule; source: RuleLayer; index: number } | undefined;
  for (const entry of orderedRules(layers)) {
    if (matchesPattern(entry.rule.action, check.action, options) && matchesPattern(entry.rule.resource, check.resource, options)) {
      winner = entry;
    }
  }
  if (!winner) return { effect: "ask", source: "none" };
  return { effect: winner.rule.effect, source: winner.source, rule: winner.rule, index: winner.index };
}

/** Evaluates one action/resource check against the layers and saved grants. */
export function evaluatePermission(check: PermissionCheck, layers: PermissionLayers): PermissionDecision {
  const configured = evaluateConfigured(check, layers);
  if (configured.effect !== "ask") return configured;
  const options = { caseSensitive: layers.caseSensitive ?? true };
  const grant = layers.saved?.find(
    (g) => matchesPattern(g.action, check.action, options) && matchesPattern(g.resource, check.resource, options),
  );
  return grant ? { effect: "allow", source: "saved", grant } : configured;
}

export interface ProjectionDecision {
  /** `deny` if any resource is denied, else `ask` if any asks, else `allow`. */
  readonly effect: PermissionEffect;
  /** One decision per resource, in order. */
  readonly resources: readonly { readonly resource: string; readonly decision: PermissionDecision }[];
}

/** Combines per-resource effects: deny beats ask beats allow. An empty list is `ask`. */
export function combineEffects(effects: Iterable<PermissionEffect>): PermissionEffect {
  let seen = false;
  let result: PermissionEffect = "allow";
  for (const effect of effects) {
    seen = true;
    if (effect === "deny") return "deny";
    if (effect === "ask") result = "ask";
  }
  return seen ? result : "ask";
}

/** Evaluates every resource of one tool projection. */
export function evaluateProjection(
  projection: { readonly action: string; readonly resources: readonly string[] },
  layers: PermissionLayers,
): ProjectionDecision {
  const resources = projection.resources.map((resource) => ({
    resource,
    decision: evaluatePermission({ action: projection.action, resource }, layers),
  }));
  return { effect: combineEffects(resources.map((r) => r.decision.effect)), resources };
}

/**
 * Whether a tool is hidden from the model: the last configured rule whose `action` matches the
 * tool id is a `deny` whose `resource` pattern matches `*` (saved grants play no part).
 */
export function isToolHidden(toolId: string, layers: PermissionLayers): boolean {
  const options = { caseSensitive: layers.caseSensitive ?? true };
  let last: PermissionRule | undefined;
  for (const { rule } of orderedRules(layers)) {
    if (matchesPattern(rule.action, toolId, options)) last = rule;
  }
  return last !== undefined && last.effect === "deny" && matchesPattern(last.resource, "*", options);
}
