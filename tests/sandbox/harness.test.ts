// The sandbox through a real harness (`createHarness({ sandbox })`, as `--sandbox` passes it) and
// the scripted test model: a Turn's shell call (pipes and `tty: true`) and a client-opened
// terminal all run under bubblewrap; the terminal's wrapper still drains every byte before the
// hang-up; closing a sandboxed terminal ends it; where bubblewrap cannot run, the shell call fails
// `sandbox_unavailable` and openTerminal answers 503 `sandbox_unavailable`, creating nothing.
import { randomUUID } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sdk, type TerminalStreamEvent, type ToolTurnPart, type Turn } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { readSse, terminalBytes } from "../support/terminals.js";
import { queue, runToEnd, server } from "../turns/helpers.js";
import { SECRET } from "./support.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const done = { events: [{ type: "text" as const, text: "Done." }] };
const shellCall = (command: string, extra: Record<string, unknown> = {}) => ({ events: [{ type: "tool_call" as const, name: "shell", arguments: { command, ...extra } }] });
const toolPart = (turn: Turn): ToolTurnPart => turn.parts.find((part): part is ToolTurnPart => part.type === "tool")!;
const resultOf = (turn: Turn): string => String(toolPart(turn).canonicalResult?.value ?? "");

async function followTerminal(h: ModelHarness, sessionId: string, terminalId: string): Promise<TerminalStreamEvent[]> {
  const path = `/v1/servers/${server}/sessions/${sessionId}/terminals/${terminalId}/output/events`;
  return readSse<TerminalStreamEvent>(await h.fetch(new Request(`http://localhost${path}`)), path, (event) => event.type === "terminal.closed");
}

describe("a sandboxed harness", () => {
  let h: ModelHarness;
  let secretFile: string;
  beforeAll(async () => {
    h = await startModelHarness({ harness: { sandbox: "workspace-write" } });
    secretFile = join(h.home.dir, "outside-secret.txt");
    writeFileSync(secretFile, `${SECRET}\n`);
  });
  afterAll(async () => {
    await h.close();
  });

  it("runs a Turn's shell call in the sandbox: the workdir is writable, the secret beside it unreadable", async () => {
    const [head, tail] = [secretFile.slice(0, 4), secretFile.slice(4)];
    h.model.enqueue(shellCall(`exec 2>&1; echo made > made.txt; cat $(printf ${head})${tail}; echo "cat: $?"`), done);
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Try it");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(toolPart(turn)).toMatchObject({ toolId: "shell", state: "completed" });
    expect(resultOf(turn)).not.toContain(SECRET);
    expect(resultOf(turn)).toMatch(/No such file or directory\ncat: 1\n\(exit code 0\)$/);
    expect(existsSync(join(h.home.root, "made.txt"))).toBe(true);
  });

  it("runs a tty: true call in a sandboxed terminal", async () => {
    h.model.enqueue(shellCall(`if [ -t 1 ]; then echo tty; fi; ls -A ${h.home.env["XDG_DATA_HOME"]} 2>&1 | head -1; echo x > /etc/ze-tty-probe; echo "write: $?"`, { tty: true }), done);
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "In a terminal");
    const { turn } = await runToEnd(h, sessionId, turnId);
    const text = resultOf(turn);
    expect(text).toMatch(/^\(Ran in terminal [0-9a-f-]{36}\.\)\ntty\n/);
    expect(text).toContain("No such file or directory"); // the state directory (under the private /tmp) is not there
    expect(text).toMatch(/Read-only file system\nwrite: [12]\n\(exit code 0\)$/);
  });

  it("a client-opened terminal runs sandboxed and its wrapper still delivers every byte before the hang-up", async () => {
    const sessionId = await h.createSession();
    const terminalId = randomUUID();
    await ok(sdk.openTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: { command: ["/bin/sh", "-c", "seq 1 20000; (echo x > /usr/ze-probe) 2>/dev/null || echo refused"] } }));
    const events = await followTerminal(h, sessionId, terminalId);
    const bytes = terminalBytes(events).replaceAll("\r\n", "\n");
    expect(bytes.startsWith("1\n2\n3\n")).toBe(true);
    expect(bytes.endsWith("19999\n20000\nrefused\n")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "terminal.closed", exitCode: 0 });
  });

  it("closing a sandboxed interactive shell ends it", async () => {
    const sessionId = await h.createSession();
    const terminalId = randomUUID();
    await ok(sdk.openTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: { command: ["/bin/sh", "-i"] } }));
    const closed = await ok(sdk.closeTerminal({ client: h.api.client, path: { server, sessionId, terminalId }, body: { signal: "SIGINT" } }));
    expect(closed.terminal.status).toBe("exited");
  });
});

describe("a sandboxed harness without bubblewrap", () => {
  let h: ModelHarness;
  beforeAll(async () => {
    h = await startModelHarness({ harness: { sandbox: "workspace-write" } });
    // The sandbox reads its binary from the host environment: point it at nothing.
    (h.home.env as Record<string, string>)["ZE_HARNESS_BWRAP"] = join(h.home.dir, "no-such-bwrap");
  });
  afterAll(async () => {
    await h.close();
  });

  it("fails the Turn's shell call sandbox_unavailable and runs nothing", async () => {
    h.model.enqueue(shellCall("touch ran.txt"), done);
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Try");
    const { turn } = await runToEnd(h, sessionId, turnId);
    expect(toolPart(turn)).toMatchObject({ toolId: "shell", state: "failed", fault: { code: "sandbox_unavailable" } });
    expect(toolPart(turn).fault?.message).toContain("bubblewrap cannot run here");
    expect(existsSync(join(h.home.root, "ran.txt"))).toBe(false);
  });

  it("answers openTerminal 503 sandbox_unavailable and creates no terminal", async () => {
    const sessionId = await h.createSession();
    const response = await h.fetch(
      new Request(`http://localhost/v1/servers/${server}/sessions/${sessionId}/terminals/${randomUUID()}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ command: ["/bin/sh", "-c", "touch opened.txt"] }),
      }),
    );
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ _tag: "UnavailableError", reason: "sandbox_unavailable" });
    expect((await ok(sdk.listTerminals({ client: h.api.client, path: { server, sessionId } }))).terminals).toEqual([]);
    expect(existsSync(join(h.home.root, "opened.txt"))).toBe(false);
  });
});
