// `task`: delegate a piece of work to a sub-agent. Each call runs one prompt to completion in a
// child Session pinned to the named agent (or continues an earlier child by `task_id`) and
// answers with the child's final text in opencode's envelope, so the model can continue the
// same child later. The work itself is Core's (`ctx.subagents`); this file only validates,
// reports the child's id as activity, and shapes the result.
import { ToolFailure, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface TaskInput {
  /** A short (3–5 word) description of the task. */
  readonly description: string;
  /** The task for the agent to perform. */
  readonly prompt: string;
  /** The agent to run it (one of those the description lists). */
  readonly subagent_type: string;
  /** Continue the earlier child Session this id names instead of starting a new one. */
  readonly task_id?: string;
}

const DESCRIPTION =
  "Launch a sub-agent to handle a complex, multi-step task on its own. It runs in its own Session with " +
  "the agent you choose, does the work, and returns its final answer (with a task_id you can pass to " +
  "continue that same sub-agent later). Give it a complete, self-contained prompt: it does not see this " +
  "conversation. Launch several at once when the tasks are independent.";

export const taskTool: ToolDefinition<TaskInput> = {
  id: "task",
  description: DESCRIPTION,
  directOnly: true,
  inputSchema: {
    type: "object",
    properties: {
      description: { type: "string", minLength: 1, maxLength: 200, description: "A short (3-5 word) description of the task." },
      prompt: { type: "string", minLength: 1, description: "The task for the agent to perform." },
      subagent_type: { type: "string", minLength: 1, maxLength: 128, description: "The type of agent to use for this task." },
      task_id: { type: "string", minLength: 1, description: "Continue the earlier sub-agent with this task_id instead of starting a new one." },
    },
    required: ["description", "prompt", "subagent_type"],
    additionalProperties: false,
  },
  describe(context) {
    if (context.subagents.length === 0) return `${DESCRIPTION}\n\nNo agent types are available here.`;
    return `${DESCRIPTION}\n\nAvailable agent types:\n${context.subagents.map((agent) => `- ${agent.id}: ${agent.description}`).join("\n")}`;
  },
  permissions(input) {
    return [{ action: "task", resources: [input.subagent_type], save: [input.subagent_type] }];
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    if (!ctx.subagents) throw new ToolFailure("subagent_failed", "Sub-agents are not available in this Session.");
    const result = await ctx.subagents.run({
      agent: input.subagent_type,
      prompt: input.prompt,
      description: input.description,
      ...(input.task_id !== undefined ? { taskId: input.task_id } : {}),
      onChild: (childSessionId) => void ctx.reportActivity({ message: input.description, observedBytes: 0, truncated: false, childSessionId }),
      signal: ctx.signal,
    });
    if (result.background) {
      return textResult(`task_id: ${result.childSessionId} (moved to the background; its result arrives as a new message when it finishes)`);
    }
    return textResult(`task_id: ${result.childSessionId} (for resuming to continue this task if needed)\n\n<task_result>\n${result.text}\n</task_result>`);
  },
};
