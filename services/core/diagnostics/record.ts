// What the Turn runner records for `diagnostics` and `context`: each failed model request attempt
// (a model-step failure, with the safe wording the provider room gives it — never a provider
// body) and each prepared Main request, grouped by message role and tool schema with the same
// estimate the context check uses (UTF-16 characters / 4). Recording never fails a Turn: a
// storage error here is dropped (the record is observational).
import type { ModelMessage, ModelTool } from "../../providers/index.js";
import { diagnostics as store, type StorageHandle } from "../../storage/index.js";

/** The estimator `fitContext` uses, named as the model_context limit names it. */
export const ESTIMATOR = "utf16-chars/4";
const estimate = (characters: number): number => Math.ceil(characters / 4);

export interface ContextGroupRecord {
  readonly role: "system" | "user" | "assistant" | "tool";
  readonly messages: number;
  readonly characters: number;
  readonly estimatedTokens: number;
}

export interface ContextToolRecord {
  readonly name: string;
  readonly characters: number;
  readonly estimatedTokens: number;
}

export interface ContextReportRecord {
  readonly groups: readonly ContextGroupRecord[];
  readonly tools: readonly ContextToolRecord[];
  readonly estimatedInputTokens: number;
  readonly contextUnits: number | null;
}

/** Groups one request by role (system first, then user, assistant, tool) and tool schema. */
export function contextReport(request: { readonly system: string | undefined; readonly messages: readonly ModelMessage[]; readonly tools: readonly ModelTool[] }, contextUnits: number | undefined): ContextReportRecord {
  const groups = new Map<ContextGroupRecord["role"], { messages: number; characters: number }>();
  const add = (role: ContextGroupRecord["role"], characters: number): void => {
    const group = groups.get(role) ?? { messages: 0, characters: 0 };
    group.messages += 1;
    group.characters += characters;
    groups.set(role, group);
  };
  if (request.system !== undefined) add("system", request.system.length);
  for (const message of request.messages) add(message.role, JSON.stringify(message).length);
  const order: ContextGroupRecord["role"][] = ["system", "user", "assistant", "tool"];
  const tools = request.tools.map((tool) => {
    const characters = JSON.stringify(tool).length;
    return { name: tool.name, characters, estimatedTokens: estimate(characters) };
  });
  // The same total `fitContext` checks against the window.
  const total = JSON.stringify(request.messages).length + (request.system?.length ?? 0) + JSON.stringify(request.tools).length;
  return {
    groups: order.filter((role) => groups.has(role)).map((role) => ({ role, ...groups.get(role)!, estimatedTokens: estimate(groups.get(role)!.characters) })),
    tools,
    estimatedInputTokens: estimate(total),
    contextUnits: contextUnits ?? null,
  };
}

export class RunRecords {
  constructor(
    private readonly storage: StorageHandle,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a prepared Main request; resolves its context sequence (undefined when recording failed). */
  async prepared(sessionId: string, turnId: string, model: string, report: ContextReportRecord): Promise<number | undefined> {
    return store.insertContext(this.storage, { sessionId, turnId, model, report, preparedAt: this.now() }).catch(() => undefined);
  }

  async usage(sessionId: string, sequence: number | undefined, inputTokens: number): Promise<void> {
    if (sequence === undefined || !Number.isFinite(inputTokens)) return;
    await store.setContextUsage(this.storage, sessionId, sequence, inputTokens).catch(() => {});
  }

  async modelStepFailed(sessionId: string, turnId: string, attempt: number, failure: { code: string; message: string; providerCode: string | undefined }): Promise<void> {
    await store
      .insertDiagnostic(this.storage, {
        sessionId,
        kind: "model_step",
        turnId,
        eventRevision: null,
        attempt,
        code: failure.code,
        message: failure.message,
        providerCode: failure.providerCode ?? null,
        limitName: null,
        recordedAt: this.now(),
      })
      .catch(() => {});
  }
}
