// This package's root and release, read once from the package manifest found by walking up from
// this file (sources and dist/ alike). The host (reference documents, version header) and the
// daemon's thin client (the release it expects, the binary it spawns) both need them.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Tests only: `ZE_HARNESS_TEST_RELEASE` makes this checkout act as another release (the stand-in
 * archives of tests/release and the daemon hand-off tests run "older" and "newer" CLIs from one build).
 */
const releaseOverride = (): string | undefined => {
  const value = process.env["ZE_HARNESS_TEST_RELEASE"];
  return value !== undefined && /^\d+\.\d+\.\d+([-+][\w.]+)?$/.test(value) ? value : undefined;
};

let cached: { root: string; release: string } | undefined;

export function locatePackage(): { readonly root: string; readonly release: string } {
  if (cached) return cached;
  let current = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(current, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "ze-harness") return (cached = { root: current, release: releaseOverride() ?? parsed.version ?? "0.0.0" });
    }
    const parent = dirname(current);
    if (parent === current) throw new Error("ze-harness package.json not found");
    current = parent;
  }
}
