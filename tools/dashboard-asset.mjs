// The dashboard page as one self-contained HTML document: clients/dashboard/main.ts bundled by
// esbuild into a single inline script (no import, no network), placed into page.html, and the
// script's sha256 computed here, at build time, for the page's Content-Security-Policy
// (`script-src 'sha256-…'`). tools/build-assets.mjs writes the result to dist/dashboard.json
// ({ html, scriptHash }), which services/host/dashboard.ts serves at GET /dashboard.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "clients", "dashboard");
const SCRIPT_MARKER = "<!--ZE_HARNESS_SCRIPT-->";
const SERVER_META = '<meta name="ze-harness-server" content="%ZE_HARNESS_SERVER%">';

const count = (text, part) => text.split(part).length - 1;

/** Builds the page; resolves with `{ html, scriptHash, scriptBytes }`. */
export async function buildDashboard() {
  const result = await build({
    entryPoints: [join(source, "main.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: ["chrome111", "firefox113", "safari16.2"],
    minify: true,
    legalComments: "none",
    charset: "utf8",
    logLevel: "silent",
  });
  const script = result.outputFiles[0].text.trim();
  if (/<\/script/i.test(script) || script.includes("<!--")) throw new Error("the dashboard script contains </script or <!--, which would break its inline <script>");
  if (script.includes("%ZE_HARNESS_SERVER%")) throw new Error("the dashboard script contains the server placeholder, which the host would rewrite (and break the script hash)");
  const template = readFileSync(join(source, "page.html"), "utf8");
  if (count(template, SCRIPT_MARKER) !== 1) throw new Error(`page.html must hold ${SCRIPT_MARKER} exactly once`);
  if (count(template, SERVER_META) !== 1 || count(template, "%ZE_HARNESS_SERVER%") !== 1) throw new Error("page.html must hold the server meta tag, and its placeholder, exactly once");
  const html = template.replace(SCRIPT_MARKER, () => `<script>${script}</script>`);
  const scriptHash = `sha256-${createHash("sha256").update(script, "utf8").digest("base64")}`;
  return { html, scriptHash, scriptBytes: Buffer.byteLength(script) };
}
