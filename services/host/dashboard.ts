// The dashboard page as the host serves it: dist/dashboard.json, written by `npm run build`
// (tools/dashboard-asset.mjs), read on the first GET /dashboard and kept. A checkout that was
// never built serves a plain page (no script) saying how to build it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { UNBUILT_DASHBOARD as UNBUILT, type DashboardAsset } from "../http/dashboard.js";
import { packageRoot } from "./version.js";


function read(file: string): DashboardAsset {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return UNBUILT;
    throw error;
  }
  const parsed = JSON.parse(text) as { html?: unknown; scriptHash?: unknown };
  if (typeof parsed.html !== "string" || typeof parsed.scriptHash !== "string") throw new Error(`${file} is not a built dashboard asset`);
  return { html: parsed.html, scriptHash: parsed.scriptHash };
}

/** The built asset of this package, read once on first use. */
export function dashboardAsset(file: string = join(packageRoot(), "dist", "dashboard.json")): () => DashboardAsset {
  let cached: DashboardAsset | undefined;
  return () => (cached ??= read(file));
}
