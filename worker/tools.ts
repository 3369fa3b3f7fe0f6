// The Worker host's tool set: the built-in tools that run without Node — `question`, `pause`,
// and Core's own `task` and `skill` (each works only with the capability Core hands it) — plus
// a `shell` that answers its typed unavailable outcome: a Worker cannot spawn local processes,
// and without a container binding there is nowhere to run a command. The /workspace file tools
// and CodeMode's `execute` (worker/files/, worker/codemode.ts) register here when they exist.
//
// Only the tools' own modules are imported: `services/tools/index.ts` would bring the Node
// `shell`, `read`, `write` and `edit` (node:child_process, node:fs) into the Worker bundle.
import { pauseTool } from "../services/tools/pause.js";
import { questionTool } from "../services/tools/question.js";
import { skillTool } from "../services/tools/skill.js";
import { taskTool } from "../services/tools/task.js";
import { ToolFailure, type AnyToolDefinition, type ToolDefinition } from "../services/tools/tool.js";
// Tool inputs are checked by an interpreting validator here: workerd forbids Ajv's generated code
// once startup is over (worker/validation.ts installs it for every schema).
import "./validation.js";

/** Said by `shell` when the server has no container to run commands in. */
export const SHELL_UNAVAILABLE =
  "shell is unavailable on this Cloudflare Worker host: Workers cannot spawn local processes and no container binding is configured, so nothing ran";

interface ShellInput {
  readonly command: string;
  readonly timeoutMs?: number;
  readonly description?: string;
  readonly tty?: boolean;
}

/**
 * `shell` where no container is bound: the same input schema and permission (a permission the
 * user answered is not wasted on a different shape), then the typed `spawn_failed` outcome —
 * the reference's code for "the process or container execution errored". Never a fake success.
 */
export const unavailableShellTool: ToolDefinition<ShellInput> = {
  id: "shell",
  description: `Run a shell command. ${SHELL_UNAVAILABLE}.`,
  inputSchema: {
    type: "object",
    properties: {
      command: { type: "string", minLength: 1, description: "The command line." },
      timeoutMs: { type: "integer", minimum: 1, maximum: 2_147_483_647, description: "Time limit in milliseconds." },
      description: { type: "string", maxLength: 200, description: "A few words saying what the command does." },
      tty: { type: "boolean", description: "Run in a real terminal." },
    },
    required: ["command"],
    additionalProperties: false,
  },
  permissions(input) {
    if (input.command.includes("\0")) throw new ToolFailure("invalid_input", "Tool input validation failed: input/command must not contain NUL.");
    return [{ action: "shell", resources: [input.command], save: [input.command] }];
  },
  async execute() {
    throw new ToolFailure("spawn_failed", SHELL_UNAVAILABLE);
  },
};

const BASE_TOOLS: Readonly<Record<string, AnyToolDefinition>> = {
  shell: unavailableShellTool as AnyToolDefinition,
  question: questionTool as AnyToolDefinition,
  pause: pauseTool as AnyToolDefinition,
  task: taskTool as AnyToolDefinition,
  skill: skillTool as AnyToolDefinition,
};

export interface WorkerToolOptions {
  /** Tools a later slice supplies (the /workspace file tools, CodeMode's `execute`), by id; they replace same-named ones. */
  readonly extra?: Readonly<Record<string, AnyToolDefinition>>;
}

/** The tools every Turn of a Worker server is offered (by id). */
export function workerTools(options: WorkerToolOptions = {}): Record<string, AnyToolDefinition> {
  return { ...BASE_TOOLS, ...options.extra };
}
