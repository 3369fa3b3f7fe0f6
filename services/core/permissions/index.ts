export { matchesPattern, type MatchOptions } from "./match.js";
export {
  ZE_DEFAULT_RULES,
  combineEffects,
  evaluateConfigured,
  evaluatePermission,
  evaluateProjection,
  isToolHidden,
  type PermissionCheck,
  type PermissionDecision,
  type PermissionLayers,
  type ProjectionDecision,
  type RuleLayer,
  type SavedGrant,
} from "./evaluate.js";
