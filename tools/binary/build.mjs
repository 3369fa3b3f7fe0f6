// npm run build:binary (after npm run build): the single executable and its release archive,
// dist/release/ze-harness-<version>-<platform>-<arch>.tar.gz holding ze-harness-<version>-<platform>-<arch>/
// with `ze-harness`, `LICENSE` and `THIRD_PARTY_LICENSES.txt`.
//
// A Node single-executable application (SEA): this Node's own binary with a blob injected by
// postject. The blob's main script is tools/binary/bootstrap.cjs; its assets are `payload` (every
// run-time file of the package, tools/binary/payload.mjs, back to back) and
// `manifest` (where each file sits in it). The bootstrap extracts them on first use.
//
// --no-archive: the executable only (dist/release/ze-harness), no licences or archive.
// --out=DIR: write into DIR instead of dist/release/ (the tests, which must not race `npm pack`).
// --version=X.Y.Z: build this release number instead of package.json's (the embedded package.json
// says it, so `--version`, the daemon and `update` all see it): a second, newer release of the same
// tree for the end-to-end update test (tests/release/native.test.ts) without a commit bumping it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { writeLicenses } from "./licenses.mjs";
import { payloadEntries } from "./payload.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const archive = !process.argv.includes("--no-archive");
const override = process.argv.find((argument) => argument.startsWith("--version="))?.slice("--version=".length);
if (override !== undefined && !/^\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$/.test(override)) throw new Error(`--version must look like 1.2.3, not ${override}`);
const packageJson = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const version = override ?? packageJson.version;
const target = `${process.platform}-${process.arch}`;
const out = process.argv.find((argument) => argument.startsWith("--out="));
const release = out !== undefined ? resolve(out.slice("--out=".length)) : join(root, "dist", "release");
const work = join(release, "work");
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The payload blob and its manifest: files back to back, each at [offset, offset + size). */
function pack() {
  const { files, links, directories, packages } = payloadEntries(root);
  const buffers = [];
  const entries = [];
  let offset = 0;
  for (const [name, mode] of files) {
    // The release number lives in the package manifest the CLI reads (services/contract/package.ts).
    const bytes = name === "package.json" && override !== undefined ? Buffer.from(`${JSON.stringify({ ...packageJson, version }, null, 2)}\n`) : readFileSync(join(root, name));
    entries.push([name, offset, bytes.length, mode]);
    buffers.push(bytes);
    offset += bytes.length;
  }
  const raw = Buffer.concat(buffers);
  const hash = createHash("sha256").update(raw).update(JSON.stringify([entries, links])).digest("hex").slice(0, 16);
  return { raw, manifest: { version, hash, directories, files: entries, links }, packages };
}

// Only what an earlier build wrote here is replaced (--out may name a folder holding more).
mkdirSync(release, { recursive: true });
for (const name of readdirSync(release)) if (name === "work" || name === "ze-harness" || /^ze-harness-.+-.+-.+/.test(name)) rmSync(join(release, name), { recursive: true, force: true });
mkdirSync(work);
if (statSync(join(root, "dist", "bundle", "main.js"), { throwIfNoEntry: false }) === undefined) {
  throw new Error("dist/bundle/main.js is missing: run npm run build first");
}

const { raw, manifest, packages } = pack();
// Stored, not compressed: a first run would spend more on gunzip (≈ 1 s) than it saves, and
// the release archive is compressed anyway.
writeFileSync(join(work, "payload"), raw);
writeFileSync(join(work, "manifest.json"), JSON.stringify(manifest));
const config = {
  main: join(root, "tools", "binary", "bootstrap.cjs"),
  output: join(work, "sea.blob"),
  disableExperimentalSEAWarning: true,
  useCodeCache: false,
  useSnapshot: false,
  assets: { payload: join(work, "payload"), manifest: join(work, "manifest.json") },
};
writeFileSync(join(work, "sea-config.json"), JSON.stringify(config));
execFileSync(process.execPath, ["--experimental-sea-config", join(work, "sea-config.json")], { stdio: ["ignore", "ignore", "inherit"] });

const executable = join(release, "ze-harness");
copyFileSync(process.execPath, executable);
chmodSync(executable, 0o755);
execFileSync(
  process.execPath,
  [join(root, "node_modules", "postject", "dist", "cli.js"), executable, "NODE_SEA_BLOB", config.output, "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"],
  // postject warns about ELF note sections it does not need ("Can't find string offset"): shown only on failure.
  { stdio: ["ignore", "ignore", "pipe"] },
);
rmSync(work, { recursive: true, force: true });
console.log(`binary: ${relative(root, executable)} (${mib(statSync(executable).size)}; payload ${manifest.files.length} files, ${mib(raw.length)}, ${packages.length} packages) in ${elapsed()}`);

if (archive) {
  const name = `ze-harness-${version}-${target}`;
  const folder = join(release, name);
  mkdirSync(folder);
  copyFileSync(executable, join(folder, "ze-harness"));
  chmodSync(join(folder, "ze-harness"), 0o755);
  copyFileSync(join(root, "LICENSE"), join(folder, "LICENSE"));
  await writeLicenses(root, join(folder, "THIRD_PARTY_LICENSES.txt"));
  const tarball = join(release, `${name}.tar.gz`);
  execFileSync("tar", ["-czf", tarball, "-C", release, "--owner=0", "--group=0", "--numeric-owner", name]);
  rmSync(folder, { recursive: true, force: true });
  console.log(`archive: ${relative(root, tarball)} (${mib(statSync(tarball).size)}) in ${elapsed()}`);
}
