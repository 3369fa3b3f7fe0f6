// The build's fingerprint: a SHA-256 over every file the build reads (sources, the generated
// contract, the build scripts, the lockfile), so `npm test` and CI rebuild only when dist/ is not
// already the build of this tree. Content, not mtimes: a checkout or a copy can reset mtimes.
//   node tools/build-stamp.mjs begin    fingerprint the tree as the build starts (dist/.build-stamp.pending)
//   node tools/build-stamp.mjs commit   the build finished: the pending fingerprint becomes dist/.build-stamp
//   node tools/build-stamp.mjs check    exit 0 when dist/.build-stamp matches the tree now, else 1
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const INPUT_DIRECTORIES = ["bin", "cli", "clients", "generated", "plugin", "sdk", "services", "tools", "worker"];
const INPUT_FILES = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
const stampPath = join(root, "dist", ".build-stamp");
const pendingPath = `${stampPath}.pending`;

function* files(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") yield* files(path);
    } else if (entry.isFile() && !entry.name.endsWith(".md")) yield path;
  }
}

/** @returns {string} */
export function fingerprint() {
  const paths = [...INPUT_DIRECTORIES.filter((name) => existsSync(join(root, name))).flatMap((name) => [...files(join(root, name))]), ...INPUT_FILES.map((name) => join(root, name)).filter((path) => existsSync(path))];
  const hash = createHash("sha256");
  for (const path of paths.map((path) => relative(root, path)).sort()) {
    hash.update(path).update("\0").update(readFileSync(join(root, path))).update("\0");
  }
  return hash.digest("hex");
}

/** True when dist/ holds the build of the tree as it is now. */
export function buildIsCurrent() {
  return existsSync(stampPath) && readFileSync(stampPath, "utf8").trim() === fingerprint();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2];
  if (command === "begin") {
    mkdirSync(dirname(pendingPath), { recursive: true });
    writeFileSync(pendingPath, `${fingerprint()}\n`);
  } else if (command === "commit") {
    renameSync(pendingPath, stampPath);
  } else if (command === "check") {
    process.exit(buildIsCurrent() ? 0 : 1);
  } else {
    console.error("usage: node tools/build-stamp.mjs begin|commit|check");
    process.exit(2);
  }
}
