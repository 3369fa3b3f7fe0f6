#!/usr/bin/env node
// Lays out a release the way downloads.ze.dev serves it (reference "Binary releases"):
//   OUT/releases/v<version>/{manifest.json, manifest.json.sig, checksums.txt, <archives>}
//   OUT/channels/<channel>.json   a pointer signed for that channel, with a monotonic sequence
//   OUT/install.sh                tools/release/install.sh with the release certificate stamped in
// Signatures are RSA/SHA-256 (node:crypto) by a key kept outside the repository.
//
//   npm run release:publish -- --dir OUT --key release-key.pem [--cert release.crt.pem] --channel stable|dev ARCHIVES…
//
// Archives are named ze-harness-<version>-<platform>.tar.gz (or .zip); all name one version.
// A pointer's sequence is one more than the channel's current one in OUT (or --sequence N): an
// installer refuses a pointer older than the one it last accepted (a replayed pointer).
import { createHash, createPrivateKey, createPublicKey, sign, X509Certificate } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const CHANNELS = ["stable", "dev"];
const ARCHIVE = /^ze-harness-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)-([a-z0-9]+-[a-z0-9]+)\.(tar\.gz|zip)$/;
const here = dirname(fileURLToPath(import.meta.url));

function fail(message) {
  process.stderr.write(`release:publish: ${message}\n`);
  process.exit(1);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { dir: { type: "string" }, key: { type: "string" }, cert: { type: "string" }, channel: { type: "string" }, sequence: { type: "string" } },
});
if (!values.dir || !values.key || !values.channel) fail("usage: --dir OUT --key KEY.pem [--cert CERT.pem] --channel stable|dev ARCHIVES…");
if (!CHANNELS.includes(values.channel)) fail(`--channel must be stable or dev, not ${values.channel}`);
if (positionals.length === 0) fail("name at least one archive");

const key = createPrivateKey(readFileSync(values.key));
const certPem = values.cert ? readFileSync(values.cert, "utf8") : undefined;
if (certPem) {
  // The workflow's check: the certificate must match the signing key before anything is published.
  const certKey = new X509Certificate(certPem).publicKey.export({ type: "spki", format: "der" });
  if (!certKey.equals(createPublicKey(key).export({ type: "spki", format: "der" }))) fail("the certificate does not match the signing key");
}

const signed = (bytes) => sign("sha256", bytes, key).toString("base64");
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

const archives = positionals.map((file) => {
  const match = ARCHIVE.exec(basename(file));
  if (!match) fail(`${basename(file)} is not named ze-harness-<version>-<platform>.tar.gz`);
  const bytes = readFileSync(file);
  return { file, name: basename(file), version: match[1], platform: match[2], sha256: sha256(bytes), size: bytes.length };
});
const version = archives[0].version;
if (archives.some((archive) => archive.version !== version)) fail("all archives must name one version");

// One archive per line: the POSIX-sh installer reads its platform's line without a JSON parser.
const manifestText = `{\n  "version": ${JSON.stringify(version)},\n  "archives": [\n${archives
  .map((a) => `    ${JSON.stringify({ name: a.name, platform: a.platform, sha256: a.sha256, size: a.size })}`)
  .join(",\n")}\n  ]\n}\n`;
const release = join(values.dir, "releases", `v${version}`);
mkdirSync(release, { recursive: true });
const manifestPath = join(release, "manifest.json");
if (existsSync(manifestPath) && readFileSync(manifestPath, "utf8") !== manifestText) fail(`v${version} is already published with other archives: publish a new version`);
for (const archive of archives) copyFileSync(archive.file, join(release, archive.name));
writeFileSync(manifestPath, manifestText);
writeFileSync(join(release, "manifest.json.sig"), `${signed(Buffer.from(manifestText))}\n`);
writeFileSync(join(release, "checksums.txt"), archives.map((a) => `${a.sha256}  ${a.name}\n`).join(""));

// The pointer: its payload (one line of JSON, bound to its channel) base64'd beside its signature.
const channels = join(values.dir, "channels");
mkdirSync(channels, { recursive: true });
const pointerPath = join(channels, `${values.channel}.json`);
let sequence = 1;
if (values.sequence !== undefined) sequence = Number.parseInt(values.sequence, 10);
else if (existsSync(pointerPath)) {
  const previous = JSON.parse(Buffer.from(JSON.parse(readFileSync(pointerPath, "utf8")).payload, "base64").toString("utf8"));
  sequence = previous.sequence + 1;
}
if (!Number.isSafeInteger(sequence) || sequence < 1) fail("--sequence must be a positive integer");
const payload = Buffer.from(JSON.stringify({ channel: values.channel, version, sequence, manifest: `releases/v${version}/manifest.json`, manifestSha256: sha256(Buffer.from(manifestText)) }));
const pointer = `${JSON.stringify({ payload: payload.toString("base64"), signature: signed(payload) })}\n`;
writeFileSync(`${pointerPath}.tmp`, pointer);
renameSync(`${pointerPath}.tmp`, pointerPath);

if (certPem) {
  const installer = readFileSync(join(here, "install.sh"), "utf8");
  if (!installer.includes("@RELEASE_CERTIFICATE@")) fail("install.sh has no certificate placeholder");
  writeFileSync(join(values.dir, "install.sh"), installer.replace("@RELEASE_CERTIFICATE@", certPem.trim()), { mode: 0o755 });
  const der = new X509Certificate(certPem).raw;
  mkdirSync(join(values.dir, "keys"), { recursive: true });
  writeFileSync(join(values.dir, "keys", `${sha256(der)}.crt`), der);
}
process.stdout.write(`${JSON.stringify({ version, channel: values.channel, sequence, archives: archives.map((a) => ({ name: a.name, sha256: a.sha256 })) })}\n`);
