// `pause`: waits `durationMs` (1 ms to MAX_PAUSE_MS), then succeeds. Aborting the call ends the
// wait at once with `interrupted`.
import { MAX_PAUSE_MS, defaultProjection, interrupted, textResult, throwIfAborted, type ToolDefinition } from "./tool.js";

export interface PauseInput {
  readonly durationMs: number;
  readonly reason?: string;
}

export const pauseTool: ToolDefinition<PauseInput> = {
  id: "pause",
  description: `Wait for a number of milliseconds (at most ${MAX_PAUSE_MS}), e.g. before checking on a slow process again.`,
  inputSchema: {
    type: "object",
    properties: {
      durationMs: { type: "integer", minimum: 1, maximum: MAX_PAUSE_MS, description: "How long to wait, in milliseconds." },
      reason: { type: "string", maxLength: 1024, description: "Why you are waiting." },
    },
    required: ["durationMs"],
    additionalProperties: false,
  },
  permissions() {
    return defaultProjection("pause");
  },
  async execute(input, ctx) {
    throwIfAborted(ctx.signal);
    await new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        clearTimeout(timer);
        reject(interrupted());
      };
      const timer = setTimeout(() => {
        ctx.signal.removeEventListener("abort", onAbort);
        resolve();
      }, input.durationMs);
      ctx.signal.addEventListener("abort", onAbort, { once: true });
    });
    return textResult(`Paused for ${input.durationMs} ms.`);
  },
};
