// How the build makes embedded.cjs's code cache (tools/bundle-code-cache.mjs): one real embedded
// one-shot in a temp home. That run is the build's, not the builder's: nothing of the builder's
// surroundings configures it — in particular no project config (`ze-harness.config.json`) in a
// folder above the temp directory (by default /tmp, where any local user can put one), whose
// plugins would otherwise run inside `npm run build`. The script runs in a copy of the built
// package (bin/, dist/bundle/, package.json, the tool), whose caches it rewrites.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { assertBuilt, copyBuiltPackage, runProcess } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

let home: TempHome;
let copy: string;

beforeAll(() => {
  assertBuilt();
  home = tempHome("ze-cli-code-cache-build-");
  copy = copyBuiltPackage(join(home.dir, "package"), [join("tools", "bundle-code-cache.mjs")]);
});
afterAll(() => home?.cleanup());

it("the build's embedded one-shot loads no project config found above its temp directory (no plugin of the builder's surroundings runs)", async () => {
  // The builder's temp directory, below a folder holding a project config with a plugin.
  const outer = join(home.dir, "outer");
  const tmp = join(outer, "tmp");
  mkdirSync(tmp, { recursive: true });
  const marker = join(home.dir, "plugin-ran");
  writeFileSync(join(outer, "plugin.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, process.cwd());\nexport default { id: "planted", setup() {} };\n`);
  writeFileSync(join(outer, "ze-harness.config.json"), JSON.stringify({ plugins: ["./plugin.mjs"] }));

  const result = await runProcess(process.execPath, [join(copy, "tools", "bundle-code-cache.mjs")], { env: { ...home.env, TMPDIR: tmp }, cwd: copy });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("embedded.cjs.cache");
  expect(result.stdout).toContain("what an embedded one-shot runs");
  expect(existsSync(marker) ? `the planted plugin ran (in ${readFileSync(marker, "utf8")})` : "no plugin ran").toBe("no plugin ran");
});
