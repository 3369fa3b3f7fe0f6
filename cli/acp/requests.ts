// A Turn's permission requests and questions, asked of the ACP client. A permission request
// becomes `session/request_permission` with Allow once / Always allow in this session (only when
// the Tool proposes save patterns) / Reject, answered through Ze's replyPermission once / always /
// reject. A question becomes a form elicitation when the client advertised form elicitation, and
// is dismissed (rejectQuestion) otherwise. Each request is asked once.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { sdk, unwrap, type PermissionReply, type PermissionRequest, type Question, type QuestionRequest, type ZeClient } from "../../clients/index.js";
import { toolCall, toolKind, type ToolPart } from "./tool-calls.js";

export interface RequestContext {
  readonly api: ZeClient;
  readonly server: string;
  /** The ACP session (also the Ze Session) the requests belong to. */
  readonly sessionId: string;
  readonly workdir: string;
  /** Sends a request to the ACP client. */
  readonly ask: AskClient;
  /** Whether the client advertised form elicitations. */
  readonly forms: boolean;
  readonly log: (line: string) => void;
}

export interface AskClient {
  permission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse>;
  elicit(params: acp.CreateElicitationRequest): Promise<acp.CreateElicitationResponse>;
}

export const PERMISSION_OPTIONS = {
  once: { optionId: "once", name: "Allow once", kind: "allow_once" },
  always: { optionId: "always", name: "Always allow in this session", kind: "allow_always" },
  reject: { optionId: "reject", name: "Reject", kind: "reject_once" },
} as const satisfies Record<PermissionReply, acp.PermissionOption>;

export class TurnRequests {
  private readonly seen = new Set<string>();
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly context: RequestContext) {}

  /** Asks every pending request of the Turn's tool parts not asked yet. */
  scan(parts: readonly ToolPart[]): void {
    for (const part of parts) {
      const approval = part.approval;
      if (approval.state === "pending") {
        const view = toolCall(part, this.context.workdir);
        this.track(approval.request.id, () => this.permission(approval.request, { ...view, title: `${view.title} (${approval.request.action} ${approval.request.resources.join(" ")})` }));
      }
      if (part.question?.state === "pending") {
        const request = part.question.request;
        this.track(request.id, () => this.question(request, part.id));
      }
    }
  }

  /** A pending permission request of a sub-agent (a descendant Session running `agent`). */
  permissionRequest(request: PermissionRequest, agent?: string): void {
    const title = `[sub-agent${agent !== undefined ? ` ${agent}` : ""}] ${request.action} ${request.resources.join(" ")}`;
    this.track(request.id, () => this.permission(request, { toolCallId: request.toolCallId, title, kind: toolKind(request.toolId), status: "pending" }));
  }

  /** A pending question of a sub-agent. */
  questionRequest(request: QuestionRequest): void {
    this.track(request.id, () => this.question(request, undefined));
  }

  /** Resolves when every request asked so far was answered. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private track(id: string, ask: () => Promise<void>): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    const running: Promise<void> = ask()
      .catch((error: unknown) => this.context.log(`ze-harness acp: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  }

  private async permission(request: PermissionRequest, view: acp.ToolCallUpdate): Promise<void> {
    const { api, server } = this.context;
    const options: acp.PermissionOption[] = [PERMISSION_OPTIONS.once, ...((request.save?.length ?? 0) > 0 ? [PERMISSION_OPTIONS.always] : []), PERMISSION_OPTIONS.reject];
    let reply: PermissionReply = "reject";
    let message: string | undefined;
    try {
      const answer = await this.context.ask.permission({
        sessionId: this.context.sessionId,
        toolCall: { ...view, status: "pending" },
        options,
      });
      if (answer.outcome.outcome === "selected") {
        const chosen = options.find((option) => option.optionId === (answer.outcome as { optionId: string }).optionId);
        if (chosen) reply = chosen.optionId as PermissionReply;
        else message = "the client chose an option that was not offered";
      } else message = "the prompt was cancelled";
    } catch (error) {
      message = "the client did not answer the permission request";
      this.context.log(`ze-harness acp: permission request ${request.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const path = { server, sessionId: request.sessionId, permissionRequestId: request.id };
    // A request settled meanwhile (the Turn was cancelled) answers 409: nothing is left to do.
    await unwrap(sdk.replyPermission({ client: api.client, path, body: { reply, ...(message !== undefined ? { message } : {}) } })).catch(() => {});
  }

  private async question(request: QuestionRequest, toolCallId: string | undefined): Promise<void> {
    const { api, server } = this.context;
    const path = { server, sessionId: request.sessionId, questionRequestId: request.id };
    const dismiss = async (): Promise<void> => {
      await unwrap(sdk.rejectQuestion({ client: api.client, path })).catch(() => {});
    };
    if (!this.context.forms) {
      this.context.log(`ze-harness acp: question dismissed (the client does not support form elicitation): ${request.questions.map((question) => question.header).join(", ")}`);
      return dismiss();
    }
    let answer: acp.CreateElicitationResponse;
    try {
      answer = await this.context.ask.elicit({
        mode: "form",
        sessionId: this.context.sessionId,
        ...(toolCallId !== undefined ? { toolCallId } : {}),
        message: request.questions.map((question) => question.question).join("\n"),
        requestedSchema: questionSchema(request.questions),
      });
    } catch (error) {
      this.context.log(`ze-harness acp: question ${request.id}: ${error instanceof Error ? error.message : String(error)}`);
      return dismiss();
    }
    const answers = answer.action === "accept" ? questionAnswers(request.questions, (answer as { content?: Record<string, unknown> | null }).content ?? {}) : undefined;
    if (!answers) return dismiss();
    await unwrap(sdk.replyQuestion({ client: api.client, path, body: { answers } })).catch(() => {});
  }
}

/** One form: per question `answer_<i>` (its options) and, when custom answers are allowed, `custom_<i>`. */
export function questionSchema(questions: readonly Question[]): acp.ElicitationSchema {
  const properties: Record<string, acp.ElicitationPropertySchema> = {};
  const required: string[] = [];
  questions.forEach((question, index) => {
    const choices = question.options.map((option) => ({ const: option.label, title: option.label, ...(option.description ? { description: option.description } : {}) }));
    const custom = question.custom !== false;
    if (choices.length > 0) {
      properties[`answer_${index}`] = question.multiple
        ? { type: "array", title: question.header, description: question.question, items: { anyOf: choices } }
        : { type: "string", title: question.header, description: question.question, oneOf: choices };
      if (!custom) required.push(`answer_${index}`);
    }
    if (custom) {
      properties[`custom_${index}`] = { type: "string", title: choices.length > 0 ? `${question.header}: your own answer` : question.header, description: question.question };
      if (choices.length === 0) required.push(`custom_${index}`);
    }
  });
  return { type: "object", properties, required };
}

/** The accepted form as Ze's answers (one list of labels per question), or undefined when one is missing. */
export function questionAnswers(questions: readonly Question[], content: Record<string, unknown>): string[][] | undefined {
  const answers: string[][] = [];
  for (const [index, question] of questions.entries()) {
    const custom = content[`custom_${index}`];
    const picked = content[`answer_${index}`];
    if (question.custom !== false && typeof custom === "string" && custom.trim() !== "") answers.push([custom.trim()]);
    else if (typeof picked === "string" && picked !== "") answers.push([picked]);
    else if (Array.isArray(picked) && picked.length > 0 && picked.every((item) => typeof item === "string")) answers.push(picked as string[]);
    else return undefined;
  }
  return answers;
}
