// The Node host's capabilities in a plugin's context: workspace files (safe codes, only
// resolvePath applies the workdir), the shell (exit, timeout, tail and artifact) and bounded web
// fetching against a local server.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isWebFetchError, isWorkspaceFileError, MAX_SHELL_OUTPUT_BYTES } from "../../plugin/index.js";
import { createNodeCapabilities, type HostCapabilities } from "../../services/plugins/index.js";
import { pluginDir, type PluginDir } from "./helpers.js";

let dir: PluginDir;
let host: HostCapabilities;
const signal = new AbortController().signal;
beforeEach(() => {
  dir = pluginDir("ze-capabilities-");
  host = createNodeCapabilities({ root: dir.dir });
});
afterEach(() => dir.cleanup());

const code = async (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: unknown) => (isWorkspaceFileError(error) || isWebFetchError(error) || (error as { _tag?: string })._tag === "WorkspaceShellError" ? (error as { code: string }).code : `other: ${String(error)}`),
  );

describe("workspaceFiles", () => {
  it("resolves against the workdir, and reads, writes, lists and removes on the host root", async () => {
    mkdirSync(join(dir.dir, "work"));
    symlinkSync(join(dir.dir, "outside"), join(dir.dir, "work", "link"));
    const files = host.workspaceFiles;
    expect(await files.resolvePath({ filePath: "a/b.txt", cwd: "work" })).toEqual({ canonicalPath: join(dir.dir, "work", "a", "b.txt"), resource: "a/b.txt" });
    expect(await files.resolvePath({ filePath: "link/x", cwd: "work" })).toEqual({
      canonicalPath: join(dir.dir, "outside", "x"),
      resource: join(dir.dir, "outside", "x"),
      externalDirectory: { resource: `${join(dir.dir, "outside")}/*`, save: `${join(dir.dir, "outside")}/*` },
    });
    expect(await code(files.resolvePath({ filePath: "x", cwd: "../escape" }))).toBe("invalid_path");
    expect(await code(files.resolvePath({ filePath: "" }))).toBe("invalid_path");

    expect(await files.writeText({ filePath: "notes/deep/n.md", content: "héllo", signal })).toEqual({ filePath: "notes/deep/n.md", byteLength: 6 });
    expect(await files.readText({ filePath: join(dir.dir, "notes/deep/n.md"), signal })).toEqual({ filePath: join(dir.dir, "notes/deep/n.md"), content: "héllo", byteLength: 6 });
    expect(await code(files.readText({ filePath: "notes/deep/n.md", maxBytes: 3, signal }))).toBe("max_bytes_exceeded");
    writeFileSync(join(dir.dir, "big.txt"), "x".repeat(51_201));
    writeFileSync(join(dir.dir, "bin.dat"), Buffer.from([0xff, 0xfe]));
    expect(await code(files.readText({ filePath: "big.txt", signal }))).toBe("too_large");
    expect(await code(files.readText({ filePath: "bin.dat", signal }))).toBe("invalid_utf8");
    expect(await code(files.readText({ filePath: "missing.txt", signal }))).toBe("not_found");
    expect(await code(files.readText({ filePath: "notes", signal }))).toBe("not_file");
    expect(await code(files.removeFile({ filePath: "notes", signal }))).toBe("not_file");

    const page = await files.readDirectory({ dirPath: ".", offset: 2, limit: 2, signal });
    expect(page).toEqual({ dirPath: ".", entries: [{ name: "bin.dat", kind: "file" }, { name: "notes", kind: "directory" }], offset: 2, totalEntries: 4, truncated: true });
    expect(await code(files.readDirectory({ dirPath: ".", offset: 0, signal }))).toBe("invalid_path");
    expect(await files.removeFile({ filePath: "big.txt", signal })).toEqual({ filePath: "big.txt" });
    expect(existsSync(join(dir.dir, "big.txt"))).toBe(false);
    const aborted = new AbortController();
    aborted.abort(new Error("stop"));
    expect(await code(files.readText({ filePath: "bin.dat", signal: aborted.signal }))).toBe("other: Error: stop");
  });
});

describe("workspaceShell", () => {
  it("runs a command to completion, reports output, and keeps a bounded tail with an artifact", async () => {
    const shell = host.workspaceShell;
    const updates: unknown[] = [];
    const done = await shell.execute({ command: "printf 'hi'; echo err >&2; exit 3", signal, onOutput: (update) => void updates.push(update) });
    expect(done).toMatchObject({ exitCode: 3, signal: null, timedOut: false, truncated: false });
    expect(done.output.split("").sort().join("")).toBe("\nehirr".split("").sort().join(""));
    expect(updates.at(-1)).toMatchObject({ observedBytes: 6, truncated: false });
    const timed = await shell.execute({ command: "sleep 5", timeoutMs: 50, signal });
    expect(timed).toMatchObject({ exitCode: null, timedOut: true });
    const big = await shell.execute({ command: `head -c ${MAX_SHELL_OUTPUT_BYTES + 100} /dev/zero | tr '\\0' 'a'`, cwd: ".", signal });
    expect(big.truncated).toBe(true);
    expect(Buffer.byteLength(big.output)).toBe(MAX_SHELL_OUTPUT_BYTES);
    expect(big.artifact).toMatchObject({ path: expect.stringMatching(/^\.ze-harness\/tool-output\/[0-9a-f-]{36}\.log$/), observedBytes: MAX_SHELL_OUTPUT_BYTES + 100, state: "complete" });
    expect(readFileSync(join(dir.dir, big.artifact!.path), "utf8")).toHaveLength(MAX_SHELL_OUTPUT_BYTES + 100);
    expect(await code(shell.execute({ command: "", signal }))).toBe("invalid_command");
    expect(await code(shell.execute({ command: "true", timeoutMs: 0, signal }))).toBe("invalid_timeout");
  });
});

describe("webFetch", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === "/text") response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(`accept=${request.headers.accept?.split(",")[0]}`);
      else if (request.url === "/image") response.writeHead(200, { "content-type": "image/png" }).end("x");
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("fetches bounded text and fails with safe codes", async () => {
    const fetched = await host.webFetch.fetchText({ url: `${base}/text`, format: "text", signal });
    expect(fetched).toEqual({ content: "accept=text/plain;q=1.0", contentType: "text/plain; charset=utf-8", byteLength: 23 });
    expect(await code(host.webFetch.fetchText({ url: `${base}/image`, format: "text", signal }))).toBe("unsupported_content_type");
    expect(await code(host.webFetch.fetchText({ url: `${base}/missing`, format: "text", signal }))).toBe("http_status");
    expect(await code(host.webFetch.fetchText({ url: "ftp://example.com/x", format: "text", signal }))).toBe("invalid_url");
    expect(await code(host.webFetch.fetchText({ url: `${base}/text`, format: "text", timeoutMs: 120_001, signal }))).toBe("invalid_timeout");
  });
});
