// The executable's extraction cache (tools/binary/bootstrap.cjs) attacked by another local user,
// without building the executable: bootstrap.cjs runs under this Node with `node:sea` answered by
// a preload that serves a tiny payload (bin/ze-harness.js printing `payload ran`), so the cache
// logic is the real one and only the SEA's asset store is a stand-in.
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, tempHome, type TempHome } from "../support/harness.js";

let work: TempHome;
let preload: string;

beforeAll(() => {
  work = tempHome("ze-bootstrap-");
  const script = Buffer.from('console.log("payload ran");\n');
  const assets = join(work.dir, "assets");
  mkdirSync(assets);
  writeFileSync(join(assets, "payload"), script);
  writeFileSync(join(assets, "manifest"), JSON.stringify({ version: "9.9.9", hash: "0123456789abcdef", directories: ["bin"], files: [["bin/ze-harness.js", 0, script.length, 0o644]], links: [] }));
  preload = join(work.dir, "sea-stand-in.cjs");
  writeFileSync(
    preload,
    `const Module = require("node:module"); const fs = require("node:fs"); const path = require("node:path");
const sea = { getAsset: (name, encoding) => { const bytes = fs.readFileSync(path.join(${JSON.stringify(assets)}, name)); return encoding ? bytes.toString(encoding) : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length); } };
const load = Module._load; Module._load = function (request, ...rest) { return request === "node:sea" || request === "sea" ? sea : load.call(this, request, ...rest); };\n`,
  );
});
afterAll(() => work?.cleanup());

const bootstrap = (cache: string) =>
  spawnSync(process.execPath, ["-r", preload, join(repoRoot, "tools", "binary", "bootstrap.cjs"), "--version"], { env: { ...work.env, XDG_CACHE_HOME: cache }, encoding: "utf8" });

describe("the extraction cache", () => {
  it("extracts to a private folder and runs from it (the stand-in works)", () => {
    const cache = join(work.dir, "own-cache");
    const result = bootstrap(cache);
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("payload ran\n");
    expect(readdirSync(join(cache, "ze-harness"))).toEqual(["9.9.9-0123456789abcdef"]);
  });

  it("refuses a versioned folder planted as a symlink", () => {
    const cache = join(work.dir, "planted-cache");
    const elsewhere = join(work.dir, "planted-target");
    mkdirSync(join(elsewhere, "bin"), { recursive: true, mode: 0o700 });
    writeFileSync(join(elsewhere, "bin", "ze-harness.js"), 'console.log("planted ran");\n');
    mkdirSync(join(cache, "ze-harness"), { recursive: true, mode: 0o700 });
    symlinkSync(elsewhere, join(cache, "ze-harness", "9.9.9-0123456789abcdef"));
    const result = bootstrap(cache);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/is not a directory/);
  });

  // Only root can give a folder to another user (CI runs as root). A folder above the cache that
  // another user owns lets that user rename the private cache away between the check and the load
  // and put a folder of their own in its place: the executable must not trust anything below it.
  it.runIf(process.getuid?.() === 0)("refuses a cache below a folder another user owns", () => {
    const foreign = join(work.dir, "foreign-parent");
    mkdirSync(foreign, { mode: 0o755 });
    chmodSync(foreign, 0o755);
    chownSync(foreign, 65534, 65534);
    const result = bootstrap(join(foreign, "cache"));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/another user can change .*foreign-parent; refusing/);
  });

  it("refuses a cache below a folder anyone may rename entries in (world-writable, not sticky)", () => {
    const open = join(work.dir, "open-parent");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const result = bootstrap(join(open, "cache"));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/another user can change .*open-parent; refusing/);
  });
});
