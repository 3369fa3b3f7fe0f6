// The fast path's V8 code cache (bin/local-cache.js; written by tools/bundle-code-cache.mjs): the
// build's cache is used and V8 accepts it; a cache that is missing, stale (made for another
// local.cjs), corrupt (bytes flipped inside V8's data, or cut short) or made by another Node is
// not used, and the fast path still runs. The fast path runs in a copy of the built package (bin/,
// dist/bundle/, package.json), whose cache each case replaces. The command, `session list` with a
// flag it does not have, takes the fast path, which leaves the line to oclif (a dynamic import from
// local.cjs): no daemon is needed, and the words come from the loaded module.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { assertBuilt, copyBuiltPackage, runProcess } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let home: TempHome;
let copy: string;
let cacheFile: string;
let built: Buffer;

beforeAll(() => {
  assertBuilt();
  home = tempHome("ze-cli-code-cache-");
  copy = copyBuiltPackage(join(home.dir, "package"));
  cacheFile = join(copy, "dist", "bundle", "local.cjs.cache");
  built = readFileSync(cacheFile);
});
afterAll(() => home?.cleanup());

/**
 * In a plain `node` (the flags V8 stamps its data with are a test runner's otherwise): whether the
 * copy's cache is used (its header matches) and, if so, whether V8 accepted its data.
 */
function cacheState(name = "local.cjs"): { used: boolean; rejected: boolean | undefined } {
  const script = [
    `const { compile, readCache, sourceText } = require(${JSON.stringify(join(copy, "bin", "local-cache.js"))});`,
    `const file = ${JSON.stringify(join(copy, "dist", "bundle", name))};`,
    `const bytes = require("node:fs").readFileSync(file);`,
    `const data = readCache(file + ".cache", bytes);`,
    `const rejected = data === undefined ? undefined : compile(file, sourceText(bytes), data).cachedDataRejected;`,
    `process.stdout.write(JSON.stringify({ used: data !== undefined, rejected }));`,
  ].join("\n");
  const child = spawnSync(process.execPath, ["-e", script], { env: home.env, encoding: "utf8" });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout) as { used: boolean; rejected: boolean | undefined };
}

/**
 * Preloaded into a command of the copy: at exit, which of the copy's bundle files require's cache
 * holds (the fast path's files are put there by bin/local-cache.js) and whether Node's ES module
 * loader ran.
 */
function loadProbe(): string {
  const probe = join(home.dir, "probe.cjs");
  writeFileSync(
    probe,
    'process.on("exit", () => process.stderr.write("cjs=" + Object.keys(require("node:module")._cache).filter((file) => file.includes("/dist/bundle/")).map((file) => file.split("/").pop()).sort().join(",") + " esm=" + process.moduleLoadList.includes("NativeModule internal/modules/esm/translators") + "\\n"));\n',
  );
  return probe;
}

/** An embedded command of the copy (the host from embedded.cjs), with loadProbe's line on stderr. */
const embeddedList = () =>
  runProcess(process.execPath, [join(copy, "bin", "ze-harness.js"), "session", "list", "--embedded"], { env: { ...home.env, NODE_OPTIONS: `--require ${loadProbe()}` }, cwd: home.root });

/** The fast path's answer to a line it leaves to oclif, from the copy. */
const fastPath = () => runProcess(process.execPath, [join(copy, "bin", "ze-harness.js"), "session", "list", "--no-such-flag"], { env: home.env, cwd: home.root });

describe("the fast path's code cache", () => {
  it("the build's cache is used and V8 accepts it", async () => {
    expect(cacheState()).toEqual({ used: true, rejected: false });
    const result = await fastPath();
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain("Nonexistent flag: --no-such-flag");
  });

  it("--embedded takes the fast path too: the host comes from embedded.cjs, with its cache, and no ES module loads", async () => {
    expect(cacheState("embedded.cjs")).toEqual({ used: true, rejected: false });
    expect(await embeddedList()).toMatchObject({ code: 0, stdout: "[]\n", stderr: "cjs=embedded.cjs,local.cjs esm=false\n" });
  });

  it("embedded.cjs's cache, made by an embedded one-shot in the build, holds more than the file's top level, and the files are ASCII alone", () => {
    const bytes = readFileSync(join(copy, "dist", "bundle", "embedded.cjs"));
    const cache = readFileSync(join(copy, "dist", "bundle", "embedded.cjs.cache"));
    // Read as Latin-1 (bin/local-cache.js): the same text as UTF-8 only for an ASCII file.
    expect(bytes.every((byte) => byte < 0x80)).toBe(true);
    expect(readFileSync(join(copy, "dist", "bundle", "local.cjs")).every((byte) => byte < 0x80)).toBe(true);
    // A top-level-only cache of the file is ≈ 1.3 MiB; one made after a Turn holds that Turn's functions too.
    const topLevel = spawnSync(
      process.execPath,
      ["-e", `const { compile, sourceText } = require(${JSON.stringify(join(copy, "bin", "local-cache.js"))}); const file = ${JSON.stringify(join(copy, "dist", "bundle", "embedded.cjs"))}; process.stdout.write(String(compile(file, sourceText(require("node:fs").readFileSync(file)), undefined).createCachedData().length));`],
      { encoding: "utf8" },
    );
    expect(topLevel.status, topLevel.stderr).toBe(0);
    expect(cache.length).toBeGreaterThan(Number(topLevel.stdout) * 2);
  });

  it("local.cjs and embedded.cjs, loaded as bin/local-cache.js loads them, run in strict mode, as the ES modules they are built from do", () => {
    // Their banner comes before esbuild's "use strict", which is then no directive: the code would
    // run sloppy (a write to a frozen object ignored instead of a TypeError, `this` the global
    // object in a plain call). An ordinary function of sloppy code has its own `caller`; a strict
    // one has none (reading it throws).
    const script = [
      `const { loadLocal } = require(${JSON.stringify(join(copy, "bin", "local-cache.js"))});`,
      `const sloppy = {};`,
      `for (const name of ["local.cjs", "embedded.cjs"]) {`,
      `  const exported = Object.values(loadLocal(${JSON.stringify(join(copy, "dist", "bundle"))} + "/" + name));`,
      `  const ordinary = exported.filter((value) => typeof value === "function" && Object.hasOwn(value, "prototype") && !/^class\\b/.test(Function.prototype.toString.call(value)));`,
      `  if (ordinary.length === 0) throw new Error(name + " exports no ordinary function to look at");`,
      `  sloppy[name] = ordinary.filter((fn) => Object.hasOwn(fn, "caller")).map((fn) => fn.name);`,
      `}`,
      `process.stdout.write(JSON.stringify(sloppy));`,
    ].join("\n");
    const child = spawnSync(process.execPath, ["-e", script], { env: home.env, cwd: home.root, encoding: "utf8" });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ "local.cjs": [], "embedded.cjs": [] });
  });

  it("a corrupt embedded.cjs cache is not used, and the embedded command answers as with the build's", async () => {
    const file = join(copy, "dist", "bundle", "embedded.cjs.cache");
    const original = readFileSync(file);
    const flipped = Buffer.from(original);
    flipped[flipped.length >> 1]! ^= 0x5a;
    try {
      writeFileSync(file, flipped);
      expect(cacheState("embedded.cjs")).toEqual({ used: false, rejected: undefined });
      expect(await embeddedList()).toMatchObject({ code: 0, stdout: "[]\n", stderr: "cjs=embedded.cjs,local.cjs esm=false\n" });
    } finally {
      writeFileSync(file, original);
    }
  });

  it("a missing, stale, corrupt or other-Node cache is not used, and the fast path answers as with the build's", async () => {
    const expected = await fastPath();
    const newline = built.indexOf(10);
    const header = JSON.parse(built.toString("utf8", 0, newline)) as Record<string, unknown>;
    const data = built.subarray(newline + 1);
    const flipped = Buffer.from(data);
    for (const at of [40, data.length >> 1, data.length - 10]) flipped[at]! ^= 0x5a;
    const withHeader = (fields: Record<string, unknown>, bytes: Buffer): Buffer => Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, ...fields })}\n`), bytes]);
    const cases: Record<string, Buffer | undefined> = {
      missing: undefined,
      // Made for another local.cjs: the source digest differs (V8 would only compare lengths).
      stale: withHeader({ source: "0".repeat(40) }, data),
      // Bytes flipped inside V8's data under the build's header: V8 itself does not check them.
      corrupt: withHeader({}, flipped),
      truncated: built.subarray(0, built.length - 1000),
      "another Node": withHeader({ node: "v0.0.0" }, data),
      "no header": data,
      empty: Buffer.alloc(0),
    };
    try {
      for (const [name, bytes] of Object.entries(cases)) {
        rmSync(cacheFile, { force: true });
        if (bytes !== undefined) writeFileSync(cacheFile, bytes);
        expect(cacheState(), name).toEqual({ used: false, rejected: undefined });
        expect(await fastPath(), name).toEqual(expected);
      }
    } finally {
      writeFileSync(cacheFile, built);
    }
    expect(cacheState()).toEqual({ used: true, rejected: false });
  });

  it("the copy's local.cjs changed after the build: its cache is stale and not used", async () => {
    const local = join(copy, "dist", "bundle", "local.cjs");
    const original = readFileSync(local);
    try {
      // Same length (V8's only check of the source), other text (a comment's): the digest tells them apart.
      const text = original.toString("utf8");
      expect(text).toContain("// cli/main.ts\n");
      writeFileSync(local, text.replace("// cli/main.ts\n", "// cli/MAIN.ts\n"));
      expect(cacheState()).toEqual({ used: false, rejected: undefined });
      const result = await fastPath();
      expect(result.stderr).toContain("Nonexistent flag: --no-such-flag");
    } finally {
      writeFileSync(local, original);
    }
  });

  it("bin/ changed its wrapper after the build (same length, other parameters): the cache is not used", async () => {
    const loader = join(copy, "bin", "local-cache.js");
    const original = readFileSync(loader, "utf8");
    try {
      // A bin/ updated without a rebuild of dist/ (a pulled checkout): the wrapper's first two
      // parameters swapped, and the call with them. The wrapped text keeps its length, V8's only
      // check of the source, so V8 would run the old wrapper's bytecode with the new arguments.
      const wrapper = "(function (exports, require, module,";
      const call = "call(loaded.exports, loaded.exports, Module.createRequire(file), loaded,";
      expect(original).toContain(wrapper);
      expect(original).toContain(call);
      writeFileSync(loader, original.replace(wrapper, "(function (require, exports, module,").replace(call, "call(loaded.exports, Module.createRequire(file), loaded.exports, loaded,"));
      expect(cacheState()).toEqual({ used: false, rejected: undefined });
      const result = await fastPath();
      expect(result.stderr).toContain("Nonexistent flag: --no-such-flag");
    } finally {
      writeFileSync(loader, original);
    }
  });
});
