// Local MCP servers over stdio against the real everything and filesystem servers: the catalog,
// Tool results (text, images, structured content), environment isolation, startup failures,
// limits and process-tree shutdown.
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isToolFailure, validateToolInput } from "../../services/tools/index.js";
import { everything, FILESYSTEM, fixture, host, processesWith, toolContext } from "./support.js";

const find = (tools: { id: string }[], id: string) => {
  const tool = tools.find((candidate) => candidate.id === id);
  if (!tool) throw new Error(`no tool ${id} among ${tools.map((t) => t.id).join(", ")}`);
  return tool as ReturnType<ReturnType<typeof host>["tools"]>[number];
};

async function failure(promise: Promise<unknown>): Promise<{ _tag: string; code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { _tag: string; code: string; message: string };
  }
  throw new Error("expected a failure");
}

describe("stdio servers", () => {
  it("lists the catalog of connected servers in order, without private metadata", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "ze-mcp-fs-")));
    const mcp = host({
      servers: [
        everything({ order: 2 }),
        { kind: "local", id: "fs", name: "files", order: 1, transport: { kind: "stdio", command: process.execPath, arguments: [FILESYSTEM, dir] } },
      ],
    });
    await mcp.start();
    const catalog = mcp.catalog();
    expect(catalog.servers.map((server) => server.name)).toEqual(["files", "everything"]);
    const server = catalog.servers[1]!;
    expect(server).toMatchObject({ origin: "host", serverId: "everything", order: 2, protocolVersion: "2025-06-18" });
    expect(server.capabilities.tools.supported).toBe(true);
    expect(server.capabilities.prompts.supported).toBe(true);
    expect(server.catalog.tools.map((tool) => tool.name)).toContain("echo");
    expect(server.catalog.prompts.find((prompt) => prompt.name === "args-prompt")).toMatchObject({
      title: "Arguments Prompt",
      arguments: [
        { name: "city", required: true },
        { name: "state", required: false },
      ],
    });
    expect(server.catalog.resources.length).toBeGreaterThan(0);
    expect(server.catalog.resourceTemplates.map((template) => template.uriTemplate)).toContain("demo://resource/dynamic/text/{resourceId}");
    expect(catalog.revision).toBeGreaterThan(0);
    const text = JSON.stringify(catalog);
    expect(text).not.toContain("_meta");
    expect(text).not.toContain('"icons"');
    expect(catalog.servers[0]!.catalog.tools.map((tool) => tool.name)).toContain("read_text_file");
  });

  it("projects Tools as <name>_<tool>, sanitized, with read-resource only when enabled", async () => {
    const mcp = host({ servers: [everything({ name: "every.thing" }), everything({ id: "plain", name: "plain", resourceReadTool: true })] });
    await mcp.start();
    const ids = mcp.tools().map((tool) => tool.id);
    expect(ids).toContain("every_thing_echo");
    expect(ids).toContain("plain_get-tiny-image");
    expect(ids).toContain("plain_read-resource");
    expect(ids).not.toContain("every_thing_read-resource");
    expect(mcp.toolEntries().find((entry) => entry.tool.id === "plain_echo")?.source).toEqual({ kind: "mcp", server: "plain" });
    // Stable definitions across requests while the catalog is unchanged.
    expect(mcp.tools()[0]).toBe(mcp.tools()[0]);
    const echo = find(mcp.tools(), "plain_echo");
    expect(echo.permissions({ message: "x" }, toolContext())).toEqual([{ action: "plain_echo", resources: ["*"], save: ["*"], metadata: { mcpServer: "plain", mcpTool: "echo" } }]);
    // Every schema compiles with the Turn's validator (defaults, $schema and friends removed).
    for (const tool of mcp.tools()) expect(() => validateToolInput(tool, {})).not.toThrow();
    expect(validateToolInput(echo, {}).ok).toBe(false);
  });

  it("maps text, image and structured results", async () => {
    const mcp = host({ servers: [everything()] });
    await mcp.start();
    const tools = mcp.tools();
    expect((await find(tools, "everything_echo").execute({ message: "hi" }, toolContext())).result).toEqual({ format: "text", value: "Echo: hi" });

    const image = (await find(tools, "everything_get-tiny-image").execute({}, toolContext())).result;
    expect(image.format).toBe("content");
    if (image.format !== "content") throw new Error("not content");
    expect(image.value.map((part) => part.type)).toEqual(["text", "image", "text"]);
    const picture = image.value[1]!;
    expect(picture.type === "image" && picture.source.type === "base64" && picture.source.mimeType).toBe("image/png");

    const structured = (await find(tools, "everything_get-structured-content").execute({ location: "New York" }, toolContext())).result;
    expect(structured.format).toBe("json");
    expect(structured.value).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
  });

  it("refuses Tool images over images.maxBase64Bytes as a tool failure asking for smaller output", async () => {
    const mcp = host({ servers: [everything()], images: { maxBase64Bytes: { kind: "finite", value: 100 } } });
    await mcp.start();
    const error = await failure(find(mcp.tools(), "everything_get-tiny-image").execute({}, toolContext()));
    expect(isToolFailure(error)).toBe(true);
    expect(error.code).toBe("mcp_image_too_large");
    expect(error.message).toContain("images.maxBase64Bytes");
  });

  it("reads files through the filesystem server", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "ze-mcp-fs-")));
    writeFileSync(join(dir, "note.txt"), "hello from a file\n");
    const mcp = host({ servers: [{ kind: "local", id: "fs", name: "fs", transport: { kind: "stdio", command: process.execPath, arguments: [FILESYSTEM, dir] } }] });
    await mcp.start();
    const out = await find(mcp.tools(), "fs_read_text_file").execute({ path: join(dir, "note.txt") }, toolContext());
    // The filesystem server answers text plus the same text as structuredContent: a JSON tool result.
    expect(out.result).toEqual({ format: "json", value: { content: "hello from a file\n" } });
    const outside = await failure(find(mcp.tools(), "fs_read_text_file").execute({ path: "/etc/hostname" }, toolContext()));
    expect(outside.code).toBe("mcp_tool_error");
    expect(outside.message).toMatch(/denied|outside|not allowed/i);
  });

  it("gives a local server only its declared environment plus PATH and temp variables", async () => {
    const mcp = host({
      env: { PATH: process.env["PATH"] ?? "", TMPDIR: "/tmp", HOME: "/home/someone", HOST_ONLY_SECRET: "do-not-leak", SOURCE_VALUE: "granted", NODE_OPTIONS: "--no-warnings" },
      servers: [everything({}, { MY_VAR: { kind: "environment", reference: "SOURCE_VALUE" } })],
    });
    await mcp.start();
    const out = await find(mcp.tools(), "everything_get-env").execute({}, toolContext());
    if (out.result.format !== "text") throw new Error("expected text");
    const env = JSON.parse(out.result.value) as Record<string, string>;
    expect(env["MY_VAR"]).toBe("granted");
    expect(env["PATH"]).toBe(process.env["PATH"]);
    expect(env["TMPDIR"]).toBe("/tmp");
    expect(env["HOST_ONLY_SECRET"]).toBeUndefined();
    expect(env["SOURCE_VALUE"]).toBeUndefined();
    expect(env["HOME"]).toBeUndefined();
    expect(env["NODE_OPTIONS"]).toBeUndefined();
  });

  it("reports an unresolved environment reference without starting the server", async () => {
    const mcp = host({ servers: [everything({}, { MY_VAR: { kind: "environment", reference: "NOT_SET_ANYWHERE" } })] });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", reason: "credential_unresolved", retrying: false });
    expect(JSON.stringify(mcp.servers())).toContain("NOT_SET_ANYWHERE");
  });

  it("reports a server that cannot start, and the others keep working", async () => {
    const mcp = host({ servers: [{ kind: "local", id: "broken", name: "broken", transport: { kind: "stdio", command: "/nonexistent/mcp-server" } }, everything()] });
    await mcp.start();
    const [broken, ok] = mcp.servers();
    expect(broken).toMatchObject({ name: "broken", status: { state: "failed", reason: "spawn_failed", retrying: false } });
    expect(broken!.status.state === "failed" && broken!.status.message).toContain("ENOENT");
    expect(ok!.status).toEqual({ state: "connected", protocolVersion: "2025-06-18" });
    expect(mcp.catalog().servers.map((server) => server.name)).toEqual(["everything"]);
    expect(mcp.tools().every((tool) => tool.id.startsWith("everything_"))).toBe(true);
    await expect(mcp.prompt("broken", "anything")).rejects.toMatchObject({ body: { _tag: "UnavailableError" } });
    expect((await find(mcp.tools(), "everything_echo").execute({ message: "still" }, toolContext())).result).toEqual({ format: "text", value: "Echo: still" });
  });

  it("keeps a disabled server listed but never starts it", async () => {
    const mcp = host({ servers: [everything({ enabled: false })] });
    await mcp.start();
    expect(mcp.servers()[0]).toMatchObject({ enabled: false, status: { state: "disabled" } });
    expect(mcp.catalog().servers).toEqual([]);
    expect(mcp.catalog().unavailable).toEqual([{ origin: "host", serverId: "everything", name: "everything", order: 0, state: "disabled" }]);
    expect(mcp.tools()).toEqual([]);
  });

  it("adds servers to a started host (a background plugin generation's): they connect at once, in server order; a reused name is refused", async () => {
    const mcp = host({ servers: [everything({ id: "b", name: "b" })] });
    await mcp.start();
    mcp.add([everything({ id: "a", name: "a" })]);
    await mcp.ready();
    expect(mcp.servers().map((server) => [server.name, server.status.state])).toEqual([
      ["a", "connected"],
      ["b", "connected"],
    ]);
    expect(mcp.catalog().servers.map((server) => server.name)).toEqual(["a", "b"]);
    expect(() => mcp.add([everything({ id: "c", name: "a" })])).toThrow(/already the name/);
    expect(mcp.servers()).toHaveLength(2);
  });

  it("fails a Tool call that reaches executionMs, and the server stays usable", async () => {
    const mcp = host({ servers: [everything({ limits: { startupMs: { kind: "unlimited" }, catalogMs: { kind: "unlimited" }, executionMs: { kind: "finite", value: 300 } } })] });
    await mcp.start();
    const started = Date.now();
    const error = await failure(find(mcp.tools(), "everything_trigger-long-running-operation").execute({ duration: 30, steps: 3 }, toolContext()));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error).toMatchObject({ _tag: "ToolFailure", code: "mcp_limit_reached" });
    expect(error.message).toContain("300 ms");
    expect((await find(mcp.tools(), "everything_echo").execute({ message: "after" }, toolContext())).result).toEqual({ format: "text", value: "Echo: after" });
  });

  it("stops a Tool call when the Turn's signal aborts", async () => {
    const mcp = host({ servers: [everything()] });
    await mcp.start();
    const controller = new AbortController();
    const call = find(mcp.tools(), "everything_trigger-long-running-operation").execute({ duration: 30, steps: 3 }, toolContext(controller.signal));
    controller.abort();
    expect(await failure(call)).toMatchObject({ code: "interrupted" });
  });

  it("fails a server that does not answer within startupMs and reaps its process", async () => {
    const marker = `ze-silent-${process.pid}-${Date.now()}`;
    const mcp = host({ servers: [fixture("silent", "silent.mjs", [marker], { limits: { startupMs: { kind: "finite", value: 300 }, catalogMs: { kind: "unlimited" }, executionMs: { kind: "unlimited" } } })] });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", reason: "limit_reached", retrying: false });
    expect(processesWith(marker)).toEqual([]);
  });

  it("rejects a server answering an unaccepted protocol version, without retrying", async () => {
    const mcp = host({ servers: [fixture("old", "old-protocol.mjs", [], { reconnect: { kind: "retry", delayMs: 1, maxAttempts: { kind: "unlimited" } } })] });
    await mcp.start();
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", reason: "protocol_version", retrying: false, attempts: 1 });
  });

  it("shuts the whole process tree down on close, even a child that ignores SIGTERM", async () => {
    const marker = `ze-tree-${process.pid}-${Date.now()}`;
    const { EVERYTHING } = await import("./support.js");
    const mcp = host({ servers: [fixture("tree", "tree.mjs", [marker, EVERYTHING])], lifecycle: { sigtermMs: 300, cleanupMs: 5_000 } });
    await mcp.start();
    expect(mcp.servers()[0]!.status.state).toBe("connected");
    expect(processesWith(marker).length).toBe(2);
    await mcp.close();
    expect(processesWith(marker)).toEqual([]);
    expect(mcp.servers()[0]!.status).toEqual({ state: "closed" });
  });

  it("resolves prompts and reads advertised resources", async () => {
    const mcp = host({ servers: [everything()] });
    expect(await mcp.prompt("everything", "args-prompt", { city: "Paris", state: "Texas" })).toEqual([{ type: "text", text: "What's weather in Paris, Texas?" }]);
    await expect(mcp.prompt("everything", "args-prompt", {})).rejects.toMatchObject({ body: { _tag: "ValidationError", message: expect.stringContaining("(/arguments/city)") } });
    await expect(mcp.prompt("everything", "args-prompt", { city: "A", country: "B" })).rejects.toMatchObject({ body: { _tag: "ValidationError", message: expect.stringContaining("(/arguments/country)") } });
    await expect(mcp.prompt("everything", "no-such-prompt")).rejects.toMatchObject({ body: { _tag: "NotFoundError", resource: "mcp_prompt" } });
    await expect(mcp.prompt("nobody", "x")).rejects.toMatchObject({ body: { _tag: "NotFoundError", resource: "mcp_server" } });

    const listed = mcp.catalog().servers[0]!.catalog.resources[0]!;
    const read = await mcp.readResource("everything", listed.uri);
    expect(read.contents[0]).toMatchObject({ uri: listed.uri });
    expect(typeof (read.contents[0] as { text?: unknown }).text === "string" || typeof (read.contents[0] as { blob?: unknown }).blob === "string").toBe(true);
    const templated = await mcp.readResource("everything", "demo://resource/dynamic/text/7");
    expect(templated.contents[0]).toMatchObject({ uri: "demo://resource/dynamic/text/7", text: expect.any(String) });
    await expect(mcp.readResource("everything", "demo://not/advertised")).rejects.toMatchObject({ body: { _tag: "NotFoundError", resource: "mcp_resource" } });
  });

  it("reads resources through <name>_read-resource, projecting the URI", async () => {
    const mcp = host({ servers: [everything({ resourceReadTool: true })] });
    await mcp.start();
    const tool = find(mcp.tools(), "everything_read-resource");
    expect(tool.permissions({ uri: "demo://resource/dynamic/text/1" }, toolContext())).toMatchObject([
      { action: "everything_read-resource", resources: ["demo://resource/dynamic/text/1"], save: ["demo://resource/dynamic/text/1"] },
    ]);
    expect(tool.describe?.({ subagents: [] })).toContain("demo://resource/");
    const out = await tool.execute({ uri: "demo://resource/dynamic/text/1" }, toolContext());
    expect(out.result.format).toBe("text");
    expect(out.result.value).toContain("1");
  });
});

describe("a server's life", () => {
  it("reconnects after the server process dies, and re-reads its catalog when it announces a change", async () => {
    const mcp = host({ servers: [fixture("mortal", "mortal.mjs", [], { reconnect: { kind: "retry", delayMs: 1, maxAttempts: { kind: "unlimited" } } })] });
    await mcp.start();
    const before = mcp.catalog().revision;
    expect(await find(mcp.tools(), "mortal_grow").execute({}, toolContext())).toEqual({ result: { format: "text", value: "grown 1" } });
    await mcp.until((h) => h.tools().some((tool) => tool.id === "mortal_extra-1"));
    expect(mcp.catalog().revision).toBeGreaterThan(before);
    expect(mcp.catalog().servers[0]!.catalog.revision).toBe(2);

    const died = await failure(find(mcp.tools(), "mortal_die").execute({}, toolContext()));
    expect(died._tag).toBe("ToolFailure");
    await mcp.until((h) => h.servers()[0]!.status.state === "failed");
    expect(mcp.servers()[0]!.status).toMatchObject({ state: "failed", reason: "disconnected", retrying: true });
    await mcp.until((h) => h.servers()[0]!.status.state === "connected");
    expect((await find(mcp.tools(), "mortal_echo").execute({ text: "back" }, toolContext())).result).toEqual({ format: "text", value: "back" });
    // A fresh process: the Tool added to the old one is gone.
    expect(mcp.tools().some((tool) => tool.id === "mortal_extra-1")).toBe(false);
  });

  it("fails error results and unsupported images as typed tool failures", async () => {
    const mcp = host({ servers: [fixture("mortal", "mortal.mjs")] });
    await mcp.start();
    expect(await failure(find(mcp.tools(), "mortal_fails").execute({}, toolContext()))).toMatchObject({ _tag: "ToolFailure", code: "mcp_tool_error", message: "it went wrong" });
    expect(await failure(find(mcp.tools(), "mortal_broken-image").execute({}, toolContext()))).toMatchObject({ code: "mcp_unsupported_image" });
  });
});
