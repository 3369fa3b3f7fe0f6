// `git status|diff` and `files list|read` (PATH positional or --path) through the built binary, against a real `serve`
// (--remote) and embedded, over a repository made with isomorphic-git in a temp directory.
import { randomUUID } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sdk, unwrap, watchWorkspaceFiles, type ZeClient } from "../../clients/index.js";
import { assertBuilt, runCli, succeeded, type CliOptions, type CliResult } from "../support/cli.js";
import { networkClient, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { b64, initRepo, unb64 } from "./repos.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const token = "cli-workspace-token";
let home: TempHome;
let options: CliOptions;
let serve: ServeProcess;
let api: ZeClient;
let sessionId: string;

beforeAll(async () => {
  assertBuilt();
  home = tempHome("ze-cli-ws-");
  options = { env: home.env, cwd: home.root };
  const repo = await initRepo(join(home.root, "repo"));
  repo.write("README.md", "# hi\n");
  repo.write("src/a.ts", "export const a = 1;\n");
  await repo.add("README.md");
  await repo.add("src/a.ts");
  await repo.commit();
  repo.write("src/a.ts", "export const a = 2;\n");
  repo.write("notes.txt", "new\n");
  mkdirSync(join(home.root, "repo", "docs"));
  symlinkSync("/etc", join(home.root, "repo", "etc-link"));
  serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  api = networkClient(serve.url, token);
  sessionId = randomUUID();
  await unwrap(sdk.createSession({ client: api.client, path: { server: "local", sessionId }, body: { workdir: "repo" } }));
});
afterAll(async () => {
  await serve?.stop();
  home?.cleanup();
});

const remote = (args: readonly string[]): Promise<CliResult> => runCli([...args, "--remote", serve.url, "--token", token], options);

describe("git commands", () => {
  it("git status prints the status, the same over --remote and embedded", async () => {
    const status = await succeeded<{ head: { oid: string }; branch: string; worktree: { path: { bytesBase64: string }; change: string }[]; untracked: { path: { bytesBase64: string } }[] }>(remote(["git", "status", sessionId]));
    expect(status.branch).toBe("main");
    expect(status.head.oid).toMatch(/^[0-9a-f]{40}$/);
    expect(status.worktree.map((entry) => `${entry.change} ${unb64(entry.path.bytesBase64)}`)).toEqual(["modified src/a.ts"]);
    expect(status.untracked.map((entry) => unb64(entry.path.bytesBase64))).toEqual(["etc-link", "notes.txt"]);
    const embedded = await succeeded(runCli(["git", "status", sessionId, "--embedded", "--database", join(home.dir, "serve.db")], options));
    expect(embedded).toEqual(status);
  });

  it("git diff prints one file's diff per area", async () => {
    const worktree = await succeeded<{ kind: string; patch: string }>(remote(["git", "diff", sessionId, "src/a.ts"]));
    expect(worktree).toMatchObject({ kind: "text", area: "worktree" });
    expect(worktree.patch).toContain("-export const a = 1;\n+export const a = 2;\n");
    expect(await succeeded(remote(["git", "diff", sessionId, "src/a.ts", "--area", "staged"]))).toMatchObject({ kind: "unchanged" });
    expect(await succeeded(remote(["git", "diff", sessionId, b64("notes.txt"), "--base64", "--area", "untracked"]))).toMatchObject({ kind: "text", patch: expect.stringContaining("+new\n") });
  });

  it("refuses escapes and bad areas with a typed error", async () => {
    const escape = await remote(["git", "diff", sessionId, "../outside"]);
    expect(escape.code).toBe(1);
    expect(escape.stderr).toMatch(/^error: ValidationError: .*'\.\.'/m);
    const absolute = await remote(["git", "diff", sessionId, "/etc/passwd"]);
    expect(absolute.stderr).toMatch(/^error: ValidationError: .*absolute/m);
    const area = await remote(["git", "diff", sessionId, "a", "--area", "sideways"]);
    expect(area.code).toBe(2);
  });
});

describe("watchWorkspaceFiles over HTTP", () => {
  it("is ready, reports a change, and stops when aborted", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    let readyResolve!: () => void;
    let changedResolve!: () => void;
    const ready = new Promise<void>((resolve) => (readyResolve = resolve));
    const changed = new Promise<void>((resolve) => (changedResolve = resolve));
    const done = watchWorkspaceFiles(api, {
      server: "local",
      sessionId,
      path: { bytesBase64: b64("docs") },
      signal: controller.signal,
      onEvent: (event) => {
        seen.push(event.type);
        if (event.type === "files.ready") readyResolve();
        if (event.type === "files.changed") changedResolve();
      },
    });
    await ready;
    writeFileSync(join(home.root, "repo", "docs", "page.md"), "# page\n");
    await changed;
    controller.abort();
    expect(await done).toBeUndefined();
    expect(seen[0]).toBe("files.ready");
  });
});

describe("files commands", () => {
  it("files list prints direct children, --all follows every page", async () => {
    const page = await succeeded<{ entries: { path: { bytesBase64: string }; kind: string }[]; next?: string }>(remote(["files", "list", sessionId]));
    expect(page.entries.map((entry) => `${entry.kind} ${unb64(entry.path.bytesBase64)}`)).toEqual(["directory docs", "symlink etc-link", "file notes.txt", "file README.md", "directory src"].sort((a, b) => Buffer.compare(Buffer.from(a.split(" ")[1]!), Buffer.from(b.split(" ")[1]!))));
    const src = await succeeded<{ entries: { path: { bytesBase64: string } }[] }>(remote(["files", "list", sessionId, "--path", "src", "--all"]));
    expect(src.entries.map((entry) => unb64(entry.path.bytesBase64))).toEqual(["src/a.ts"]);
    // The README's form: the directory as a positional PATH, the same page as --path.
    expect(await succeeded(remote(["files", "list", sessionId, "src", "--all"]))).toEqual(src);
    const both = await remote(["files", "list", sessionId, "src", "--path", "docs"]);
    expect(both).toMatchObject({ code: 2, stdout: "" });
    expect(both.stderr).toMatch(/PATH or as --path, not both/);
    const escape = await remote(["files", "list", sessionId, "--path", "etc-link"]);
    expect(escape.stderr).toMatch(/^error: ValidationError: .*symlink/m);
    const git = await remote(["files", "list", sessionId, "--path", ".git"]);
    expect(git.stderr).toMatch(/^error: ForbiddenError: /m);
  });

  it("files read prints verified text, and what it found otherwise", async () => {
    const read = await succeeded<{ kind: string; text: string; version: string; size: number }>(remote(["files", "read", sessionId, "src/a.ts"]));
    expect(read).toMatchObject({ kind: "text", text: "export const a = 2;\n", size: 20 });
    expect(await succeeded(remote(["files", "read", sessionId, "src/a.ts", "--expected-version", read.version]))).toMatchObject({ kind: "text", version: read.version });
    expect(await succeeded(remote(["files", "read", sessionId, "missing.txt"]))).toEqual({ kind: "absent" });
    expect(await succeeded(remote(["files", "read", sessionId, "docs"]))).toEqual({ kind: "unsupported", reason: "directory" });
    const escape = await remote(["files", "read", sessionId, "etc-link/passwd"]);
    expect(escape.stderr).toMatch(/^error: ValidationError: .*symlink/m);
  });
});
