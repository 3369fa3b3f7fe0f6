// Local stand-ins for where Session plugin packages come from, on 127.0.0.1 only: an npm registry
// (static packuments and tarballs made by `npm pack` of a fixture plugin) and a Git smart-HTTP
// server (`git http-backend` as CGI behind a tiny Node server; the test uses the git binary to
// build and serve repositories, the harness never runs it).
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";

const run = promisify(execFile);

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** `npm pack` of the package in `directory` (scripts ignored); the tarball's bytes. */
export async function npmPack(directory: string): Promise<Buffer> {
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", directory], { cwd: directory, env: { ...process.env, npm_config_update_notifier: "false" } });
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  return readFileSync(join(directory, filename));
}

export const sriOf = (bytes: Uint8Array): string => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

export interface RegistryVersion {
  /** The tarball served. */
  readonly tarball: Buffer;
  /** The packument's `dist.integrity` (default: the tarball's). */
  readonly integrity?: string;
}

export interface Registry {
  readonly url: string;
  /** Every request path, in order. */
  readonly requests: string[];
  publish(name: string, versions: Record<string, RegistryVersion>, tags?: Record<string, string>): void;
  close(): Promise<void>;
}

/** A static npm registry: `GET /<name>` (scoped `@s%2fn`) answers the packument, `GET /<name>/-/<file>.tgz` the tarball. */
export async function startRegistry(): Promise<Registry> {
  const packages = new Map<string, { versions: Record<string, RegistryVersion>; tags: Record<string, string> }>();
  const requests: string[] = [];
  let base = "";
  const server = createServer((request, response) => {
    const path = decodeURIComponent(request.url ?? "/");
    requests.push(path);
    const tarball = /^\/(.+)\/-\/.+-(\d+\.\d+\.\d+[^/]*)\.tgz$/.exec(path);
    if (tarball) {
      const version = packages.get(tarball[1]!)?.versions[tarball[2]!];
      if (!version) return void response.writeHead(404).end();
      return void response.writeHead(200, { "content-type": "application/octet-stream" }).end(version.tarball);
    }
    const name = path.slice(1);
    const entry = packages.get(name);
    if (!entry) return void response.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
    const file = name.split("/").at(-1)!;
    const versions = Object.fromEntries(
      Object.entries(entry.versions).map(([version, spec]) => [
        version,
        { name, version, dist: { integrity: spec.integrity ?? sriOf(spec.tarball), tarball: `${base}/${name}/-/${file}-${version}.tgz` } },
      ]),
    );
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, "dist-tags": entry.tags, versions }));
  });
  base = await listen(server);
  return {
    url: base,
    requests,
    publish: (name, versions, tags = { latest: Object.keys(versions).at(-1)! }) => void packages.set(name, { versions, tags }),
    close: () => closeServer(server),
  };
}

/** Runs git in `cwd` (test set-up only) and returns its trimmed stdout. */
export async function gitIn(cwd: string, ...args: string[]): Promise<string> {
  const env = { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com", GIT_CONFIG_NOSYSTEM: "1", HOME: cwd };
  return (await run("git", args, { cwd, env })).stdout.trim();
}

export interface GitServer {
  /** `<url>/<repository directory name>` clones the repository under `root`. */
  readonly url: string;
  close(): Promise<void>;
}

/** Smart HTTP for the repositories under `root`: each request runs `git http-backend` as CGI. */
export async function startGitServer(root: string): Promise<GitServer> {
  const server = createServer((request: IncomingMessage, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env["PATH"] ?? "",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        HOME: root,
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: request.method ?? "GET",
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    request.pipe(child.stdin);
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("close", () => {
      const output = Buffer.concat(chunks);
      const split = output.indexOf("\r\n\r\n");
      const head = output.subarray(0, split).toString("latin1");
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.split("\r\n")) {
        const colon = line.indexOf(":");
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else headers[key] = value;
      }
      response.writeHead(status, headers).end(output.subarray(split + 4));
    });
  });
  const url = await listen(server);
  return { url, close: () => closeServer(server) };
}

/** One entry of a hand-made tarball: a regular file (`body`) or a symbolic link (`link`). */
export interface RawTarEntry {
  readonly name: string;
  readonly body?: string;
  readonly link?: string;
}

/** A gzipped ustar archive of `entries`, names written as given (`..` included): for hostile tarballs. */
export function rawTarball(entries: readonly RawTarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? "");
    const header = Buffer.alloc(512);
    const put = (text: string, offset: number, length: number) => header.write(text, offset, length, "utf8");
    put(entry.name, 0, 100);
    put("0000644\0", 100, 8);
    put("0000000\0", 108, 8);
    put("0000000\0", 116, 8);
    put(`${(entry.link !== undefined ? 0 : body.length).toString(8).padStart(11, "0")}\0`, 124, 12);
    put("00000000000\0", 136, 12);
    put(entry.link !== undefined ? "2" : "0", 156, 1);
    if (entry.link !== undefined) put(entry.link, 157, 100);
    put("ustar\0", 257, 6);
    put("00", 263, 2);
    header.fill(" ", 148, 156);
    const sum = header.reduce((total, byte) => total + byte, 0);
    put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
    blocks.push(header);
    if (entry.link === undefined) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
