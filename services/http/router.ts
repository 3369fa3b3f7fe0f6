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
  return { route, segments, literalCount: segments.filter((s) => "literal" in s).length };
}

export class Router {
  private readonly compiled: readonly CompiledRoute[];

  constructor(routes: readonly RouteDefinition[]) {
    this.compiled = routes.map(compile).sort((a, b) => b.literalCount - a.literalCount);
  }

  lookup(method: string, pathname: string): RouteLookup {
    // `//v1//health` and `/v1/health/` name no endpoint: an empty segment is never skipped, so
    // one resource has one path (a proxy's or a cache's rules see the path the router serves).
    const parts = pathname.split("/").slice(1);
    if (!pathname.startsWith("/") || parts.some((part) => part.length === 0)) return { kind: "not_found" };
    const allowed: string[] = [];
    for (const candidate of this.compiled) {
      const params = matchSegments(candidate.segments, parts);
      if (!params) continue;
      if (candidate.route.method === method) return { kind: "matched", match: { route: candidate.route, params } };
      allowed.push(candidate.route.method);
    }
    return allowed.length > 0 ? { kind: "method_not_allowed", allowed } : { kind: "not_found" };
  }
}

function matchSegments(segments: readonly Segment[], parts: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!;
    const part = parts[index]!;
    if ("literal" in segment) {
      if (segment.literal !== part) return undefined;
      continue;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(part);
    } catch {
      return undefined;
    }
    params[segment.param] = decoded;
  }
  return params;
}
