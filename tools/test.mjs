// npm test: build (the CLI tests spawn the built binary), run every vitest suite,
// and end with a plain `N passed, M failed` line for CI.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { buildIsCurrent } from "./build-stamp.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const extra = process.argv.slice(2);

// Build unless dist/ is already the build of this tree (tools/build-stamp.mjs: a content
// fingerprint; on a fresh clone `npm ci` has just built it through `prepare`).
if (buildIsCurrent()) {
  console.log("build: dist/ is the build of this tree (tools/build-stamp.mjs); not rebuilding");
} else {
  const build = spawnSync(npm, ["run", "build", "--silent"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) {
    console.log("0 passed, 1 failed");
    process.exit(build.status ?? 1);
  }
}

mkdirSync(join(root, ".tmp"), { recursive: true });
const report = join(root, ".tmp", "vitest-report.json");
rmSync(report, { force: true });
const run = spawnSync(
  join(root, "node_modules", ".bin", "vitest"),
  ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...extra],
  { cwd: root, stdio: "inherit" },
);

let passed = 0;
let failed = 0;
if (existsSync(report)) {
  const result = JSON.parse(readFileSync(report, "utf8"));
  passed = result.numPassedTests ?? 0;
  failed = result.numFailedTests ?? 0;
  // A suite that failed to load has no failed tests but must still count as a failure.
  for (const file of result.testResults ?? []) if (file.status === "failed" && (file.assertionResults ?? []).length === 0) failed += 1;
} else {
  failed = 1;
}
if (passed + failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
