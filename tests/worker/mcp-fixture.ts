// Test entry for tests/worker/mcp.test.ts: a Worker whose `POST /run` composes a WorkerMcpHost
// (worker/mcp.ts) over the posted `mcp` entries with the Worker's bindings as the environment,
// connects, runs the posted Tool calls through the `<server>_<tool>` ToolDefinitions, closes,
// and answers what it saw: statuses, Tool ids and schemas, and each call's result or failure.
import type { McpServer } from "../../services/config/types.js";
import { WorkerMcpHost } from "../../worker/mcp.js";
// Tool inputs are checked by the Worker's interpreter, as worker/tools.ts installs it in the real Worker.
import "../../worker/validation.js";

interface Run {
  readonly servers: McpServer[];
  readonly calls: { readonly tool: string; readonly input: Record<string, unknown> }[];
}

const context = (signal: AbortSignal) =>
  ({
    workdir: "/workspace",
    sessionId: "00000000-0000-4000-8000-000000000001",
    turnId: "00000000-0000-4000-8000-000000000002",
    toolCallId: "call-1",
    signal,
    artifactsDirectory: "/workspace/.ze-harness/tool-output",
    reportActivity: () => undefined,
    askQuestion: async () => {
      throw new Error("no questions here");
    },
  }) as unknown as Parameters<ReturnType<WorkerMcpHost["tools"]>[number]["execute"]>[1];

export default {
  async fetch(request: Request, env: Record<string, unknown>): Promise<Response> {
    const run = (await request.json()) as Run;
    const strings = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
    const host = new WorkerMcpHost({ servers: run.servers, env: strings });
    await host.start();
    const tools = host.tools();
    const results: unknown[] = [];
    for (const call of run.calls) {
      const tool = tools.find((candidate) => candidate.id === call.tool);
      if (tool === undefined) {
        results.push({ missing: call.tool });
        continue;
      }
      try {
        results.push({ ok: (await tool.execute(call.input, context(new AbortController().signal))).result });
      } catch (error) {
        const failure = error as { code?: string; message?: string };
        results.push({ failed: failure.code ?? "thrown", message: failure.message });
      }
    }
    const statuses = host.statuses();
    await host.close();
    return Response.json({
      statuses,
      tools: tools.map((tool) => ({ id: tool.id, inputSchema: tool.inputSchema, permissions: tool.permissions({}, {} as never) })),
      results,
      closed: host.statuses(),
    });
  },
};
