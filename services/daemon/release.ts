// This build's release and package root, read once from the package manifest found by walking
// up from this file (sources and dist/ alike). The daemon's client needs both (the version it
// expects of a daemon, the binary it spawns) without loading services/host.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: { root: string; release: string } | undefined;

function locate(): { root: string; release: string } {
  if (cached) return cached;
  let current = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(current, "package.json");
    if (existsSync(manifest)) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (parsed.name === "ze-harness") return (cached = { root: current, release: parsed.version ?? "0.0.0" });
    }
    const parent = dirname(current);
    if (parent === current) throw new Error("ze-harness package.json not found");
    current = parent;
  }
}

export const daemonRelease = (): string => locate().release;

/** The executable a daemon is spawned from: this package's bin/ze-harness.js. */
export const binaryPath = (): string => join(locate().root, "bin", "ze-harness.js");
