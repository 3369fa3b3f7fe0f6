// An ACP session's modes (the primary agents, such as build and plan) and config options (the
// model and the reasoning effort), read from the Session's agent list and model catalog. Without
// a catalog (a host that answers 503 for it) the model option lists the model in use only.
import type * as acp from "@agentclientprotocol/sdk/unstable";
import { sdk, unwrap, type CatalogSnapshot, type ReasoningEffort, type SessionAgentsResponse, type ZeClient } from "../../clients/index.js";

export const MODEL_OPTION = "model";
export const EFFORT_OPTION = "reasoning_effort";
/** The reasoning effort value that sends none (the model's default). */
export const DEFAULT_EFFORT = "default";
/** The model value shown while the model in use is not known yet (no catalog, no Turn). */
export const DEFAULT_MODEL = "default";

const ALL_EFFORTS: readonly ReasoningEffort[] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

export interface SessionChoices {
  /** Primary-capable agents. */
  readonly agents: SessionAgentsResponse;
  /** The model catalog, when the host has one. */
  readonly catalog: CatalogSnapshot | undefined;
}

export async function readChoices(api: ZeClient, server: string, sessionId: string): Promise<SessionChoices> {
  const path = { server, sessionId };
  const [agents, catalog] = await Promise.all([
    unwrap(sdk.sessionAgents({ client: api.client, path })),
    unwrap(sdk.sessionModels({ client: api.client, path })).catch(() => undefined),
  ]);
  return { agents, catalog };
}

export function defaultMode(choices: SessionChoices): string {
  return choices.agents.defaultAgent ?? primaryAgents(choices)[0]?.id ?? "build";
}

const primaryAgents = (choices: SessionChoices) => choices.agents.agents.filter((agent) => agent.mode !== "subagent");

export function modeState(choices: SessionChoices, current: string): acp.SessionModeState {
  return {
    currentModeId: current,
    availableModes: primaryAgents(choices).map((agent) => ({ id: agent.id, name: agent.displayName, ...(agent.description ? { description: agent.description } : {}) })),
  };
}

export function isMode(choices: SessionChoices, id: string): boolean {
  return primaryAgents(choices).some((agent) => agent.id === id);
}

/** The models a client may pick: the catalog's available ones, else the model in use. */
export function modelChoices(choices: SessionChoices, current: string | undefined): acp.SessionConfigSelectOption[] {
  const models = (choices.catalog?.models ?? []).filter((model) => model.availability.status === "available");
  const options = models.map((model) => ({ value: model.ref, name: model.displayName, description: model.ref }));
  if (current !== undefined && !options.some((option) => option.value === current)) options.unshift({ value: current, name: current, description: current });
  if (options.length === 0) options.push({ value: DEFAULT_MODEL, name: "Default model", description: "the host's configured model" });
  return options;
}

function effortChoices(choices: SessionChoices, model: string | undefined): readonly ReasoningEffort[] {
  const entry = choices.catalog?.models.find((candidate) => candidate.ref === model);
  return entry?.capabilities.reasoningEfforts ?? ALL_EFFORTS;
}

export function configOptions(choices: SessionChoices, model: string | undefined, effort: ReasoningEffort | undefined): acp.SessionConfigOption[] {
  const models = modelChoices(choices, model);
  const options: acp.SessionConfigOption[] = [];
  options.push({ id: MODEL_OPTION, name: "Model", category: "model", type: "select", currentValue: model ?? models[0]!.value, options: models });
  const efforts = effortChoices(choices, model);
  options.push({
    id: EFFORT_OPTION,
    name: "Reasoning effort",
    category: "thought_level",
    type: "select",
    currentValue: effort ?? DEFAULT_EFFORT,
    options: [{ value: DEFAULT_EFFORT, name: "Default" }, ...efforts.map((value) => ({ value, name: value }))],
  });
  return options;
}

export function isEffort(value: string): value is ReasoningEffort {
  return (ALL_EFFORTS as readonly string[]).includes(value);
}
