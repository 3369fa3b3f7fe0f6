// `Package` Session plugin sources from an npm registry, without a package manager: the
// packument (`GET <registry>/<name>`) names the exact version (the requested one, a dist-tag, or
// `latest`), its tarball and the registry's `dist.integrity` (SRI, sha512). The tarball is
// downloaded (bounded), verified against that integrity before anything is written, and unpacked
// with `tar` (no absolute paths, no `..`, regular files and directories only) into the artifact
// cache. Nothing from the package runs here: no lifecycle script (`preinstall`, `install`,
// `postinstall`, `prepare`) is ever executed. The package must be self-contained: dependencies
// other than the plugin contract must be bundled (`bundleDependencies`), since nothing else is
// installed. Errors are the contract's: 400 for what the registry does not have, 409
// `declared_mismatch` for bytes that do not match the registry's integrity, 503 for a registry
// that cannot be reached in time.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { x as extract } from "tar";
import { conflict, unavailable, validationFailure } from "../contract/failure.js";
import { ArtifactTooLarge, type ArtifactCache } from "./artifact-cache.js";
import { isRecord } from "./checks.js";
import { makeDirectory } from "../contract/directory.js";

export const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/";

/** The registry: the configured one, else `ZE_HARNESS_NPM_REGISTRY`, else npm's `npm_config_registry`, else the public registry. */
export function registryFrom(configured: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const value = configured ?? env["ZE_HARNESS_NPM_REGISTRY"] ?? env["npm_config_registry"] ?? env["NPM_CONFIG_REGISTRY"] ?? DEFAULT_NPM_REGISTRY;
  return value.endsWith("/") ? value : `${value}/`;
}

export interface RegistryOptions {
  readonly registry: string;
  /** Bounds the packument request (default unlimited). */
  readonly resolveTimeoutMs?: number | undefined;
  /** Bounds the tarball download and unpacking (default unlimited). */
  readonly installTimeoutMs?: number | undefined;
}

/** An exact registry artifact. */
export interface NpmResolution {
  readonly name: string;
  readonly version: string;
  /** The registry's SRI (`sha512-<base64>`). */
  readonly integrity: string;
  readonly tarball: string;
}

const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const DIST_TAG = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

/** The cache key of an artifact: its name, version and integrity. */
export const npmCacheKey = (resolution: NpmResolution): string =>
  createHash("sha256").update(`${resolution.name}@${resolution.version}\n${resolution.integrity}`).digest("hex").slice(0, 40);

function httpUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw validationFailure(`${what} ${JSON.stringify(text)} is not a URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw validationFailure(`${what} must be an http(s) URL.`);
  if (url.username !== "" || url.password !== "") throw validationFailure(`${what} must not carry credentials.`);
  return url;
}

async function request(url: URL, what: string, timeoutMs: number | undefined, accept: string): Promise<Response> {
  const signal = timeoutMs !== undefined ? AbortSignal.timeout(timeoutMs) : undefined;
  try {
    return await fetch(url, { headers: { accept }, redirect: "follow", ...(signal ? { signal } : {}) });
  } catch (error) {
    if (signal?.aborted) throw unavailable(`${what} did not answer within ${timeoutMs} ms.`);
    throw unavailable(`${what} at ${url.origin} cannot be reached: ${error instanceof Error ? ((error.cause as { code?: string } | undefined)?.code ?? error.message) : String(error)}.`);
  }
}

/** The body, at most `limit` bytes. */
async function boundedBody(response: Response, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of response.body ?? []) {
    total += chunk.byteLength;
    if (total > limit) throw new ArtifactTooLarge(`${what} is larger than ${limit} bytes.`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** Resolves `name` (at `requested`: an exact version or a dist-tag; default `latest`) to an exact registry artifact. */
export async function resolveNpmPackage(name: string, requested: string | undefined, options: RegistryOptions, maxBytes: number): Promise<NpmResolution> {
  if (requested !== undefined && !EXACT_VERSION.test(requested) && !DIST_TAG.test(requested)) {
    throw validationFailure(`requestedVersion ${JSON.stringify(requested)} must be an exact version or a dist-tag.`);
  }
  const registry = httpUrl(options.registry, "The npm registry");
  const url = new URL(name.replace("/", "%2f"), registry);
  const response = await request(url, "The npm registry", options.resolveTimeoutMs, "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8");
  if (response.status === 404) throw validationFailure(`The npm registry has no package ${name}.`);
  if (!response.ok) throw unavailable(`The npm registry answered ${response.status} for package ${name}.`);
  let packument: unknown;
  try {
    packument = JSON.parse((await boundedBody(response, maxBytes, `The packument of ${name}`)).toString("utf8"));
  } catch (error) {
    if (error instanceof ArtifactTooLarge) throw validationFailure(error.message);
    throw unavailable(`The npm registry answered an unreadable packument for ${name}.`);
  }
  if (!isRecord(packument) || !isRecord(packument["versions"])) throw unavailable(`The npm registry answered an unreadable packument for ${name}.`);
  const tags = isRecord(packument["dist-tags"]) ? packument["dist-tags"] : {};
  const wanted = requested === undefined ? "latest" : requested;
  const version = EXACT_VERSION.test(wanted) ? wanted : tags[wanted];
  if (typeof version !== "string") throw validationFailure(`Package ${name} has no dist-tag ${JSON.stringify(wanted)}.`);
  const manifest = packument["versions"][version];
  if (!isRecord(manifest)) throw validationFailure(`Package ${name} has no version ${version}.`);
  const dist = isRecord(manifest["dist"]) ? manifest["dist"] : {};
  const integrity = typeof dist["integrity"] === "string" ? strongest(dist["integrity"]) : undefined;
  if (integrity === undefined) throw validationFailure(`The npm registry gives ${name}@${version} no sha512 integrity; it cannot be pinned.`);
  if (typeof dist["tarball"] !== "string") throw unavailable(`The npm registry names no tarball for ${name}@${version}.`);
  httpUrl(dist["tarball"], `The tarball of ${name}@${version}`);
  return { name, version, integrity, tarball: dist["tarball"] };
}

/** The sha512 hash of an SRI string (`sha512-<base64>`), if it has one. */
function strongest(sri: string): string | undefined {
  return sri.split(/\s+/).find((token) => /^sha512-[A-Za-z0-9+/]{86}==$/.test(token.split("?")[0]!))?.split("?")[0];
}

const sriOf = (bytes: Uint8Array): string => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

/**
 * The installed package directory of `resolution`, downloading, verifying and unpacking it into
 * the cache when missing. Nothing is cached when the bytes do not match the integrity.
 */
export async function installNpmPackage(resolution: NpmResolution, cache: ArtifactCache, options: RegistryOptions): Promise<string> {
  const what = `${resolution.name}@${resolution.version}`;
  const work = cache.ensure("npm", npmCacheKey(resolution), async (directory) => {
    const response = await request(httpUrl(resolution.tarball, `The tarball of ${what}`), `The tarball of ${what}`, undefined, "application/octet-stream");
    if (!response.ok) throw unavailable(`The npm registry answered ${response.status} for the tarball of ${what}.`);
    const bytes = await boundedBody(response, cache.bounds.maxDownloadBytes, `The tarball of ${what}`).catch((error: unknown) => {
      throw error instanceof ArtifactTooLarge ? validationFailure(error.message) : unavailable(`The tarball of ${what} could not be downloaded.`);
    });
    const actual = sriOf(bytes);
    if (actual !== resolution.integrity) {
      throw conflict(`declared_mismatch: the tarball of ${what} has integrity ${actual}, not the registry's ${resolution.integrity}; nothing was installed.`);
    }
    await unpack(bytes, join(directory, "package"), cache, what);
    await checkManifest(join(directory, "package"), resolution);
  });
  if (options.installTimeoutMs === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(`Installing ${what} did not finish within ${options.installTimeoutMs} ms.`)), options.installTimeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function unpack(bytes: Buffer, directory: string, cache: ArtifactCache, what: string): Promise<void> {
  await makeDirectory(directory, 0o700);
  let files = 0;
  let size = 0;
  let refused: string | undefined;
  await new Promise<void>((resolvePromise, reject) => {
    const stream = extract({
      cwd: directory,
      strip: 1,
      strict: true,
      // Regular files and directories only; the sizes and counts are bounded.
      filter: (_path, entry) => {
        const type = "type" in entry ? entry.type : undefined;
        if (type !== "File" && type !== "OldFile" && type !== "Directory") return false;
        files += 1;
        size += "size" in entry && typeof entry.size === "number" ? entry.size : 0;
        if (files > cache.bounds.maxFiles || size > cache.bounds.maxUnpackedBytes) {
          refused ??= `The tarball of ${what} unpacks to more than ${cache.bounds.maxFiles} files or ${cache.bounds.maxUnpackedBytes} bytes.`;
          return false;
        }
        return true;
      },
    });
    stream.on("error", reject);
    stream.on("close", () => resolvePromise());
    stream.end(bytes);
  }).catch((error: unknown) => {
    throw validationFailure(`The tarball of ${what} is not a valid package archive: ${error instanceof Error ? error.message : String(error)}`);
  });
  if (refused !== undefined) throw validationFailure(refused);
}

/** The unpacked package.json names the resolved package and bundles what it depends on. */
async function checkManifest(root: string, resolution: NpmResolution): Promise<void> {
  const what = `${resolution.name}@${resolution.version}`;
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
  } catch {
    throw validationFailure(`The tarball of ${what} has no readable package.json.`);
  }
  if (!isRecord(manifest) || manifest["name"] !== resolution.name || manifest["version"] !== resolution.version) {
    throw validationFailure(`The tarball of ${what} holds another package than the registry named.`);
  }
  const missing = unbundledDependencies(manifest);
  if (missing.length > 0) {
    throw validationFailure(`Package ${what} depends on ${missing.join(", ")} without bundling it; Session plugin packages are installed without their dependencies, so bundle them (bundleDependencies) or build the plugin into one file.`);
  }
}

/** The packages that provide the plugin contract, which the host maps to its own (alias.ts). */
const CONTRACT_PACKAGES: readonly string[] = ["ze-harness", "@zephyrcloudio/harness-plugin"];

/** Dependencies a self-contained plugin package would lack (the plugin contract is provided). */
export function unbundledDependencies(manifest: Record<string, unknown>): string[] {
  const dependencies = isRecord(manifest["dependencies"]) ? Object.keys(manifest["dependencies"]) : [];
  const bundled = manifest["bundleDependencies"] ?? manifest["bundledDependencies"];
  const bundledNames = bundled === true ? dependencies : Array.isArray(bundled) ? bundled.filter((name): name is string => typeof name === "string") : [];
  return dependencies.filter((name) => !bundledNames.includes(name) && !CONTRACT_PACKAGES.includes(name));
}
