// The file home port in Node (worker/files/home.ts, store.ts): WorkspaceFileStore over an
// embedder's home canonicalises and confines every path before the home sees it, enforces the
// WorkspaceFileError codes itself, checks the home's answers (never trusting them), keeps only a
// home failure's code, builds glob and grep on list/readBytes, and reports changes from the home
// when it has onChange, else its own writes. A malformed `workspace.files` is refused naming it.
import { describe, expect, it } from "vitest";
import { WorkspaceFileError } from "../../plugin/index.js";
import { WorkspaceFileStore, type WorkspaceFileHome, type WorkspaceFileHomeChild } from "../../worker/files/index.js";
import { workspaceProblem } from "../../worker/host-workspace.js";

type Node = { kind: "directory" } | { kind: "file"; bytes: Uint8Array };
const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf("/")));

function mapHome(extra: Partial<WorkspaceFileHome> = {}) {
  const nodes = new Map<string, Node>([["/workspace", { kind: "directory" }]]);
  const calls: string[] = [];
  const home: WorkspaceFileHome = {
    stat: (path) => {
      calls.push(`stat ${path}`);
      const node = nodes.get(path);
      return node === undefined ? undefined : { kind: node.kind, size: node.kind === "file" ? node.bytes.length : 0 };
    },
    list: (path) => {
      calls.push(`list ${path}`);
      return [...nodes].filter(([at]) => at !== path && parentOf(at) === path).map(([at, node]): WorkspaceFileHomeChild => ({ name: at.slice(path.length + 1), kind: node.kind, size: node.kind === "file" ? node.bytes.length : 0 }));
    },
    readBytes: (path) => {
      calls.push(`readBytes ${path}`);
      const node = nodes.get(path);
      if (node?.kind !== "file") throw new Error("missing");
      return node.bytes;
    },
    writeBytes: (path, bytes) => {
      calls.push(`writeBytes ${path}`);
      for (let parent = parentOf(path); parent !== "/workspace"; parent = parentOf(parent)) if (!nodes.has(parent)) nodes.set(parent, { kind: "directory" });
      nodes.set(path, { kind: "file", bytes: bytes.slice() });
    },
    remove: (path) => {
      calls.push(`remove ${path}`);
      nodes.delete(path);
    },
    ...extra,
  };
  return { home, nodes, calls };
}

const code = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    return error instanceof WorkspaceFileError ? error.code : `not a WorkspaceFileError: ${String(error)}`;
  }
  return undefined;
};
const text = (value: string): Uint8Array => new TextEncoder().encode(value);

describe("WorkspaceFileStore over an embedder's file home", () => {
  it("confines paths before the home sees them and enforces the codes itself", () => {
    const { home, nodes, calls } = mapHome();
    const store = new WorkspaceFileStore(home, { maxFileBytes: 16 });
    for (const path of ["/workspace/../etc/passwd", "/etc/passwd", "/workspace/a/../../x", "a\0b", ""]) expect(code(() => store.writeBytes(path, text("x")))).toBe("invalid_path");
    expect(code(() => store.readBytes("/workspace/../../etc/passwd"))).toBe("invalid_path");
    expect(calls).toEqual([]);

    expect(store.writeBytes("/workspace/./src//a.txt", text("hello"))).toEqual({ replaced: false });
    expect(calls.filter((call) => call.startsWith("writeBytes"))).toEqual(["writeBytes /workspace/src/a.txt"]);
    expect(store.writeBytes("/workspace/src/a.txt", text("again"))).toEqual({ replaced: true });
    calls.length = 0;
    expect(code(() => store.writeBytes("/workspace/src/a.txt/under", text("x")))).toBe("not_file");
    expect(code(() => store.writeBytes("/workspace/src", text("x")))).toBe("not_file");
    expect(code(() => store.writeBytes("/workspace", text("x")))).toBe("not_file");
    expect(code(() => store.writeBytes("/workspace/big", new Uint8Array(17)))).toBe("too_large");
    expect(calls.some((call) => call.startsWith("writeBytes"))).toBe(false);
    expect(code(() => store.readBytes("/workspace/src/a.txt/under"))).toBe("not_file");
    expect(code(() => store.readBytes("/workspace/missing"))).toBe("not_found");
    expect(code(() => store.list("/workspace/src/a.txt"))).toBe("not_file");
    expect([...nodes.keys()].sort()).toEqual(["/workspace", "/workspace/src", "/workspace/src/a.txt"]);
    expect(new TextDecoder().decode(store.readBytes("/workspace/src/a.txt"))).toBe("again");
  });

  it("checks the home's answers and keeps only a failure's code", () => {
    const secret = "home-secret-91f2";
    const { home } = mapHome();
    const store = new WorkspaceFileStore(home);
    store.writeBytes("/workspace/a.txt", text("four"));
    const liar = new WorkspaceFileStore({
      ...home,
      readBytes: () => new Uint8Array(2 * 1024 * 1024 + 1), // more than it said, and than the limit asked for
      list: () => [
        { name: "b", kind: "file", size: 1 },
        { name: "..", kind: "directory", size: 0 },
        { name: "x/y", kind: "file", size: 1 },
        { name: "", kind: "file", size: 1 },
        { name: "odd", kind: "socket", size: 0 } as never,
        { name: "neg", kind: "file", size: -1 },
        { name: "é", kind: "file", size: 1 },
        { name: "b", kind: "file", size: 9 },
        { name: "Z", kind: "directory", size: 0 },
      ],
    });
    expect(code(() => liar.readBytes("/workspace/a.txt", 1024))).toBe("too_large");
    expect(liar.list("/workspace").map((entry) => entry.name)).toEqual(["Z", "b", "é"]);
    const thrower = new WorkspaceFileStore({
      ...home,
      stat: () => {
        throw new Error(`disk at /srv/${secret} failed`);
      },
    });
    let caught: unknown;
    try {
      thrower.stat("/workspace/a.txt");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(WorkspaceFileError);
    expect((caught as WorkspaceFileError).code).toBe("io");
    expect(JSON.stringify({ message: (caught as Error).message })).not.toContain(secret);
    const typed = new WorkspaceFileStore({
      ...home,
      readBytes: () => {
        throw new WorkspaceFileError({ code: "too_large" });
      },
    });
    expect(code(() => typed.readBytes("/workspace/a.txt"))).toBe("too_large");
    expect(code(() => new WorkspaceFileStore({ ...home, readBytes: () => "text" as never }).readBytes("/workspace/a.txt"))).toBe("io");
    expect(code(() => new WorkspaceFileStore({ ...home, stat: () => ({ kind: "file", size: "big" }) as never }).stat("/workspace/a.txt"))).toBe("io");
  });

  it("builds glob, grep and chunked reads on the primitives", async () => {
    const { home } = mapHome();
    const store = new WorkspaceFileStore(home);
    store.writeBytes("/workspace/a-c.ts", text("const a = 1;\n"));
    store.writeBytes("/workspace/a/b.ts", text("let needle = 2;\n"));
    store.writeBytes("/workspace/a/deep/c.md", text("needle in docs\n"));
    expect(store.glob("**/*.ts").paths).toEqual(["/workspace/a-c.ts", "/workspace/a/b.ts"]);
    expect(store.glob("*.md", "/workspace/a/deep").paths).toEqual(["/workspace/a/deep/c.md"]);
    expect(store.grep("needle").matches).toEqual([
      { path: "/workspace/a/b.ts", line: 1, text: "let needle = 2;" },
      { path: "/workspace/a/deep/c.md", line: 1, text: "needle in docs" },
    ]);
    const next = store.chunks("/workspace/a/b.ts");
    expect(new TextDecoder().decode(await next())).toBe("let needle = 2;\n");
    expect(await next()).toBeUndefined();
    // A home's own pieces: at most the size it stated, however many it offers.
    const pieces = new WorkspaceFileStore({ ...home, readChunk: () => text("0123456789") });
    const paged = pieces.chunks("/workspace/a/b.ts");
    const read: string[] = [];
    for (let chunk = await paged(); chunk !== undefined; chunk = await paged()) read.push(new TextDecoder().decode(chunk));
    expect(read.join("")).toBe("0123456789012345");
  });

  it("reports changes from a home's onChange, else its own writes and removals", async () => {
    const own = new WorkspaceFileStore(mapHome().home);
    const heard: string[] = [];
    own.onChange((path) => heard.push(path));
    own.writeBytes("/workspace/d/e/f.txt", text("x"));
    await own.removeFile({ filePath: "/workspace/d/e/f.txt", signal: new AbortController().signal });
    expect(heard).toEqual(["/workspace/d", "/workspace/d/e", "/workspace/d/e/f.txt", "/workspace/d/e/f.txt"]);

    const listeners = new Set<(path: string) => void>();
    const reporting = new WorkspaceFileStore(mapHome({ onChange: (listener) => (listeners.add(listener), () => listeners.delete(listener)) }).home);
    const reported: string[] = [];
    const stop = reporting.onChange((path) => reported.push(path));
    reporting.writeBytes("/workspace/g.txt", text("x")); // the home did not report it: not heard twice
    for (const listener of listeners) for (const path of ["/workspace/synced.txt", "/etc/passwd", "/workspace/../x", "/workspace/a/"]) listener(path);
    expect(reported).toEqual(["/workspace/synced.txt"]);
    stop();
    expect(listeners.size).toBe(0);
  });

  it("refuses a malformed workspace.files naming the option", () => {
    expect(workspaceProblem({ files: mapHome().home })).toBeUndefined();
    expect(workspaceProblem({ files: "home" })).toContain("files");
    const { remove: _remove, ...partial } = mapHome().home;
    expect(workspaceProblem({ files: partial })).toBe("files must have a remove function");
    expect(workspaceProblem({ files: { ...mapHome().home, onChange: 3 } })).toContain("files.onChange");
  });
});
