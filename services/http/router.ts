// Matches a method and path against the generated route table. Templates compile
// once into segment lists; literal segments outrank parameters so
// `/permissions/saved` wins over `/permissions/{permissionRequestId}`. A path is matched as
// given: empty segments (`//`, a trailing `/`) match nothing.
import type { RouteDefinition } from "../../generated/server/routes.js";

type Segment = { literal: string } | { param: string };

interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly segments: readonly Segment[];
  readonly literalCount: number;
  /** The literal segments' positions and texts, checked before any parameter is decoded. */
  readonly literals: readonly (readonly [number, string])[];
  /** The parameter segments' positions and names. */
  readonly params: readonly (readonly [number, string])[];
}

export interface RouteMatch {
  readonly route: RouteDefinition;
  readonly params: Record<string, string>;
}

export type RouteLookup =
  | { readonly kind: "matched"; readonly match: RouteMatch }
  | { readonly kind: "method_not_allowed"; readonly allowed: readonly string[] }
  | { readonly kind: "not_found" };

function compile(route: RouteDefinition): CompiledRoute {
  const segments: Segment[] = route.path
    .split("/")
    .filter((part) => part.length > 0)
    .map((part) => (part.startsWith("{") && part.endsWith("}") ? { param: part.slice(1, -1) } : { literal: part }));
  const literals: [number, string][] = [];
  const params: [number, string][] = [];
  segments.forEach((segment, index) => ("literal" in segment ? literals.push([index, segment.literal]) : params.push([index, segment.param])));
  return { route, segments, literalCount: literals.length, literals, params };
}

export class Router {
  private readonly compiled: readonly CompiledRoute[];
  /** The compiled routes by their segment count, each list in `compiled`'s order: a path is tried only against routes as long as it. */
  private readonly byLength = new Map<number, CompiledRoute[]>();

  constructor(routes: readonly RouteDefinition[]) {
    this.compiled = routes.map(compile).sort((a, b) => b.literalCount - a.literalCount);
    for (const candidate of this.compiled) {
      const list = this.byLength.get(candidate.segments.length);
      if (list) list.push(candidate);
      else this.byLength.set(candidate.segments.length, [candidate]);
    }
  }

  lookup(method: string, pathname: string): RouteLookup {
    // `//v1//health` and `/v1/health/` name no endpoint: an empty segment is never skipped, so
    // one resource has one path (a proxy's or a cache's rules see the path the router serves).
    const parts = pathname.split("/").slice(1);
    if (!pathname.startsWith("/") || parts.some((part) => part.length === 0)) return { kind: "not_found" };
    const allowed: string[] = [];
    for (const candidate of this.byLength.get(parts.length) ?? []) {
      const params = matchSegments(candidate, parts);
      if (!params) continue;
      if (candidate.route.method === method) return { kind: "matched", match: { route: candidate.route, params } };
      allowed.push(candidate.route.method);
    }
    return allowed.length > 0 ? { kind: "method_not_allowed", allowed } : { kind: "not_found" };
  }
}

/** The path's parameters if `parts` (as long as the route) match its literals and every parameter decodes. */
function matchSegments(candidate: CompiledRoute, parts: readonly string[]): Record<string, string> | undefined {
  for (const [index, literal] of candidate.literals) if (parts[index] !== literal) return undefined;
  const params: Record<string, string> = {};
  for (const [index, name] of candidate.params) {
    try {
      params[name] = decodeURIComponent(parts[index]!);
    } catch {
      return undefined;
    }
  }
  return params;
}
