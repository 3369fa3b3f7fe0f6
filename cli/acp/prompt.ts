// One `session/prompt`: the ACP content as Ze prompt parts, a queued Turn run by the mode's
// agent with the session's reasoning effort, its growth streamed as session updates, its
// requests asked of the client, and its outcome as the prompt's stop reason.
import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { sdk, unwrap, watchTurn, type ImageMimeType, type PromptPart, type Turn, type ZeClient } from "../../clients/index.js";
import { DescendantRequests } from "../descendants.js";
import { configOptions, readChoices } from "./options.js";
import { promptUsage, stopReason, TurnProjector } from "./projection.js";
import { TurnRequests } from "./requests.js";
import type { LiveSession } from "./sessions.js";
import type { ToolPart } from "./tool-calls.js";

const IMAGE_TYPES: readonly string[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/** ACP content blocks as Ze prompt parts; content Ze cannot take is a clear invalid-params error. */
export function promptParts(blocks: readonly acp.ContentBlock[]): PromptPart[] {
  const parts: PromptPart[] = [];
  for (const block of blocks) {
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text });
        break;
      case "image": {
        if (!IMAGE_TYPES.includes(block.mimeType)) throw acp.RequestError.invalidParams(undefined, `image type ${block.mimeType} is not supported (JPEG, PNG, GIF or WebP)`);
        const mimeType = block.mimeType as ImageMimeType;
        if (block.data !== "") parts.push({ type: "image", source: { type: "base64", mimeType, data: block.data } });
        else if (block.uri) parts.push({ type: "image", source: { type: "url", url: block.uri, mimeType } });
        else throw acp.RequestError.invalidParams(undefined, "an image needs data or a uri");
        break;
      }
      case "resource_link":
        parts.push({ type: "text", text: `[${block.title ?? block.name}](${block.uri})` });
        break;
      case "resource": {
        const resource = block.resource;
        if ("text" in resource) parts.push({ type: "text", text: `<resource uri="${resource.uri}">\n${resource.text}\n</resource>` });
        else if (resource.mimeType && IMAGE_TYPES.includes(resource.mimeType)) {
          parts.push({ type: "image", source: { type: "base64", mimeType: resource.mimeType as ImageMimeType, data: resource.blob } });
        } else throw acp.RequestError.invalidParams(undefined, `binary resource ${resource.uri} is not supported`);
        break;
      }
      case "audio":
        throw acp.RequestError.invalidParams(undefined, "audio prompts are not supported");
      default:
        throw acp.RequestError.invalidParams(undefined, `content of type ${(block as { type: string }).type} is not supported`);
    }
  }
  if (parts.length === 0) throw acp.RequestError.invalidParams(undefined, "the prompt is empty");
  return parts;
}

export interface PromptContext {
  readonly api: ZeClient;
  readonly server: string;
  readonly client: acp.AgentContext;
  /** Whether the client advertised form elicitations. */
  readonly forms: boolean;
  readonly log: (line: string) => void;
}

const toolParts = (turn: Turn): ToolPart[] => turn.parts.filter((part): part is ToolPart => part.type === "tool");

/** A one-line title from the first prompt text (Sessions without one are hard to tell apart in a list). */
function titleOf(parts: readonly PromptPart[]): string | undefined {
  const text = parts.find((part) => part.type === "text")?.text ?? "";
  const line = text.split("\n").find((candidate) => candidate.trim() !== "")?.trim().replace(/[\p{Cc}\p{Cf}]/gu, " ");
  if (!line) return undefined;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export async function runPrompt(context: PromptContext, live: LiveSession, blocks: readonly acp.ContentBlock[]): Promise<acp.PromptResponse> {
  if (live.running) {
    throw acp.RequestError.invalidRequest({ sessionId: live.id }, "a Turn is already running in this session: ACP has no steering, so cancel it and send the prompt again");
  }
  const prompt = promptParts(blocks);
  const { api, server, client } = context;
  const turnId = randomUUID();
  const running = { turnId, cancelled: false, submitted: false };
  live.running = running;
  let updates: Promise<void> = Promise.resolve();
  const send = (update: acp.SessionUpdate): void => {
    updates = updates.then(() => client.notify("session/update", { sessionId: live.id, update })).catch((error: unknown) => context.log(`ze-harness acp: session/update: ${error instanceof Error ? error.message : String(error)}`));
  };
  try {
    await unwrap(
      sdk.submitPrompt({
        client: api.client,
        path: { server, sessionId: live.id },
        headers: { "x-ze-harness-client-id": api.clientId },
        body: { delivery: "queue", turnId, prompt, agent: live.mode, ...(live.effort !== undefined ? { reasoningEffort: live.effort } : {}) },
      }),
    );
    running.submitted = true;
    // A cancel that arrived while the prompt was being admitted.
    if (running.cancelled) await cancelTurn(context, live.id, turnId);
    if (live.title === undefined) {
      const title = titleOf(prompt);
      if (title !== undefined) {
        live.title = title;
        await unwrap(sdk.setSessionTitle({ client: api.client, path: { server, sessionId: live.id }, body: { title } }))
          .then(() => send({ sessionUpdate: "session_info_update", title }))
          .catch((error: unknown) => context.log(`ze-harness acp: setSessionTitle: ${error instanceof Error ? error.message : String(error)}`));
      }
    }
    const projector = new TurnProjector(live.workdir);
    const requests = new TurnRequests({
      api,
      server,
      sessionId: live.id,
      workdir: live.workdir,
      forms: context.forms,
      log: context.log,
      ask: {
        permission: (params) => client.request("session/request_permission", params),
        elicit: (params) => client.request("elicitation/create", params),
      },
    });
    const show = (turn: Turn): void => {
      for (const update of projector.updates(turn)) send(update);
      requests.scan(toolParts(turn));
    };
    // Sub-agents' requests (of the Sessions this Turn spawns) are asked too, so none waits unseen.
    const descendants = new DescendantRequests({ client: api, server }, live.id, requests);
    descendants.start();
    let final: Turn;
    try {
      final = await watchTurn(api, { server, sessionId: live.id, turnId, onEvent: (_event, held) => show(held) });
    } finally {
      descendants.stop();
    }
    show(final);
    if (live.model !== final.model) {
      // The model in use is known now (or changed): the client's model selector follows.
      live.model = final.model;
      const choices = await readChoices(api, server, live.id).catch(() => undefined);
      if (choices) send({ sessionUpdate: "config_option_update", configOptions: configOptions(choices, live.model, live.effort) });
    }
    await updates;
    const reason = running.cancelled && final.outcome?.kind !== "completed" ? "cancelled" : stopReason(final);
    if (reason === undefined) {
      const fault = final.outcome?.kind === "failed" ? final.outcome.fault : undefined;
      throw acp.RequestError.internalError(fault ? { code: fault.code } : undefined, fault ? `the Turn failed: ${fault.code}: ${fault.message}` : `the Turn ended in phase ${final.phase}`);
    }
    const usage = promptUsage(final);
    return { stopReason: reason, ...(usage ? { usage } : {}) };
  } finally {
    await updates;
    if (live.running === running) live.running = undefined;
  }
}

/** `session/cancel`: cancels the running Turn (the prompt then answers `cancelled`). */
export async function cancelPrompt(context: Pick<PromptContext, "api" | "server" | "log">, live: LiveSession): Promise<void> {
  const running = live.running;
  if (!running) return;
  running.cancelled = true;
  // Not admitted yet: runPrompt cancels it as soon as it is.
  if (running.submitted) await cancelTurn(context, live.id, running.turnId);
}

async function cancelTurn(context: Pick<PromptContext, "api" | "server" | "log">, sessionId: string, turnId: string): Promise<void> {
  await unwrap(
    sdk.cancelTurn({ client: context.api.client, path: { server: context.server, sessionId, turnId }, body: { reason: "cancelled by the ACP client" } }),
  ).catch((error: unknown) => context.log(`ze-harness acp: cancelTurn: ${error instanceof Error ? error.message : String(error)}`));
}
