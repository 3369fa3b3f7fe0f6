// A loopback npm registry for installing the packed package with no network: its packuments are
// built from package-lock.json (every locked version with its dependencies, platforms and
// integrity) and its tarballs are read from npm's own content cache by that integrity (npm ci
// put them there). A package missing from the cache answers 404, so an install needing it fails.
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { readFile } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface LockRegistry {
  readonly url: string;
  /** Tarballs served so far. */
  readonly served: readonly string[];
  close(): Promise<void>;
}

interface LockEntry {
  readonly version?: string;
  readonly integrity?: string;
  readonly link?: boolean;
  readonly name?: string;
  readonly [field: string]: unknown;
}

/** Lock-only fields that are not part of a published manifest. */
const LOCK_ONLY = new Set(["resolved", "integrity", "dev", "optional", "devOptional", "peer", "inBundle", "extraneous", "link"]);

/** Where npm's cache (cacache, content-v2) keeps the bytes of `integrity` (`<algorithm>-<base64>`). */
function contentPath(cache: string, integrity: string): string {
  const [algorithm, digest] = integrity.split(/\s+/)[0]!.split("-", 2) as [string, string];
  const hex = Buffer.from(digest, "base64").toString("hex");
  return join(cache, "content-v2", algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** npm's content cache: `npm config get cache` (default ~/.npm) + `_cacache`. */
function npmCache(): string {
  try {
    return join(execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim(), "_cacache");
  } catch {
    return join(homedir(), ".npm", "_cacache");
  }
}

export async function startLockRegistry(lockPath: string, cache = npmCache()): Promise<LockRegistry> {
  const lock = JSON.parse(readFileSync(lockPath, "utf8")) as { packages: Record<string, LockEntry> };
  const served: string[] = [];
  const integrities = new Map<string, string>();
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0]!);
    const tarball = /^\/-\/tarball\/(.+)$/.exec(path);
    if (tarball) {
      const integrity = integrities.get(tarball[1]!);
      if (integrity === undefined) return void response.writeHead(404).end();
      readFile(contentPath(cache, integrity))
        .then((data) => {
          served.push(tarball[1]!);
          response.writeHead(200, { "content-type": "application/octet-stream", "content-length": data.length }).end(data);
        })
        .catch(() => response.writeHead(404).end());
      return;
    }
    const packument = packuments.get(path.slice(1));
    if (packument === undefined) return void response.writeHead(404, { "content-type": "application/json" }).end("{}");
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("registry: no port");
  const url = `http://127.0.0.1:${address.port}`;

  const packuments = new Map<string, { name: string; versions: Record<string, unknown>; "dist-tags": Record<string, string> }>();
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (!location.includes("node_modules/") || entry.link || entry.version === undefined || entry.integrity === undefined) continue;
    const name = entry.name ?? location.slice(location.lastIndexOf("node_modules/") + "node_modules/".length);
    const manifest: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(entry)) if (!LOCK_ONLY.has(field)) manifest[field] = value;
    const key = `${name}/${entry.version}`;
    integrities.set(key, entry.integrity);
    const packument = packuments.get(name) ?? { name, versions: {}, "dist-tags": {} };
    packument.versions[entry.version] = { ...manifest, name, version: entry.version, dist: { integrity: entry.integrity, tarball: `${url}/-/tarball/${key}` } };
    packument["dist-tags"]["latest"] ??= entry.version;
    packuments.set(name, packument);
  }
  return { url, served, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
