// The model catalog in the TUI: the runtime snapshot (no Session yet) or the viewed Session's
// snapshot (`models` / `sessionModels`), read at start, on opening a Session, after a provider
// connects and on Ctrl+R in the model picker. It feeds the model picker (available models,
// favorites and recent models first, a typed PROVIDER/MODEL), the effort levels a model
// advertises (`/effort`, Ctrl+X E, the prompt after picking a model), and the header's model
// (the picked one, else the Session's or the catalog's default).
import { watchRuntimeModels, watchSessionModels, type CatalogModel, type CatalogSnapshot, type ReasoningEffort, type WatchModelsOptions } from "../../../clients/index.js";
import type { PickerItem } from "../components/picker.js";
import type { Controller, PickerSpec } from "./controller.js";

export const EFFORTS: readonly ReasoningEffort[] = ["none", "minimal", "low", "medium", "high", "xhigh", "max"];

/** Reads the catalog the next Turn will see and re-renders (the header's default model). */
export async function loadCatalog(controller: Controller): Promise<CatalogSnapshot> {
  const sessionId = controller.sessionId;
  const snapshot = await controller.backend.models(sessionId);
  // A reply for a Session the user has left is dropped.
  if (controller.sessionId === sessionId) {
    controller.catalog = snapshot;
    controller.update({});
  }
  return snapshot;
}

/**
 * Keeps the catalog current while the TUI shows it: a new host revision (a provider connected
 * from another client, a config reload) is read again. Returns the stop function.
 */
export function watchCatalog(controller: Controller): () => void {
  const abort = new AbortController();
  const sessionId = controller.sessionId;
  const options: WatchModelsOptions = {
    signal: abort.signal,
    knownRevision: controller.catalog?.hostRevision,
    onSnapshot: (snapshot) => {
      if (abort.signal.aborted || controller.sessionId !== sessionId) return;
      controller.catalog = snapshot;
      controller.update({});
    },
  };
  const api = controller.backend.api;
  const watching = sessionId === undefined ? watchRuntimeModels(api, options) : watchSessionModels(api, { sessionId, server: controller.backend.server }, options);
  watching.catch(() => undefined); // the catalog read on demand (pickers, Ctrl+R) still works
  return () => abort.abort();
}

/** True when the catalog has at least one model that can be used now. */
export function hasUsableModel(snapshot: CatalogSnapshot): boolean {
  return snapshot.models.some((model) => model.availability.status === "available");
}

const why = (model: CatalogModel): string => (model.availability.status === "available" ? "" : model.availability.reason.replace(/_/g, " "));

export function modelPicker(controller: Controller, query = ""): PickerSpec {
  return {
    title: "Models",
    hint: "↑/↓ move · Enter select · Tab favorite · Ctrl+R refresh · Esc close",
    query,
    freeform: /^[^/\s]+\/\S+$/,
    load: async () => {
      const { favorites, recent } = controller.preferences.get();
      const rank = (ref: string): number => (favorites.includes(ref) ? 0 : recent.includes(ref) ? 1 : 2);
      const order = (a: string, b: string): number =>
        rank(a) - rank(b) || (rank(a) === 1 ? recent.indexOf(a) - recent.indexOf(b) : rank(a) === 0 ? favorites.indexOf(a) - favorites.indexOf(b) : a.localeCompare(b));
      const snapshot = await loadCatalog(controller);
      const byRef = new Map(snapshot.models.map((model) => [model.ref, model]));
      // Available models, plus remembered ones (also when the catalog no longer lists them).
      const refs = new Set([...snapshot.models.filter((model) => model.availability.status === "available").map((model) => model.ref), ...favorites, ...recent]);
      return [...refs].sort(order).map((ref): PickerItem => {
        const model = byRef.get(ref);
        const notes = [
          model?.displayName,
          favorites.includes(ref) ? "favorite" : recent.includes(ref) ? "recent" : undefined,
          ref === snapshot.defaultModel ? "default" : undefined,
          model === undefined ? "not in the catalog" : why(model) || undefined,
          model?.capabilities.reasoningEfforts?.length ? `effort ${model.capabilities.reasoningEfforts.join("/")}` : undefined,
        ].filter((note) => note !== undefined);
        return { id: ref, label: `${favorites.includes(ref) ? "★ " : ""}${ref}`, detail: notes.join(" · ") };
      });
    },
    tab: (item) => {
      controller.preferences.toggleFavorite(item.id);
      const overlay = controller.state.overlay;
      if (overlay?.kind === "picker") void controller.loadPicker(overlay.spec);
    },
    choose: (item) => {
      controller.closeOverlay();
      const remembered = controller.preferences.get().efforts[item.id];
      controller.update({ next: { ...controller.state.next, model: item.id, effort: remembered } });
      controller.preferences.used(item.id);
      const efforts = effortsOf(controller, item.id);
      if (efforts !== undefined && efforts.length > 0) controller.openPicker(effortPicker(controller, item.id, efforts));
    },
  };
}

/** The levels `model` advertises; undefined when the catalog does not know the model. */
function effortsOf(controller: Controller, model: string | undefined): readonly ReasoningEffort[] | undefined {
  if (model === undefined) return undefined;
  const entry = controller.catalog?.models.find((candidate) => candidate.ref === model);
  return entry === undefined ? undefined : (entry.capabilities.reasoningEfforts ?? []);
}

/**
 * The model the next Turn will use, by the server's precedence: the prompt's (picked in this
 * run), the agent's, the Session's default, then the configured (catalog) default.
 */
export function nextModel(controller: Controller): string | undefined {
  const view = controller.view;
  const agent = controller.state.next.agent ?? view?.session?.agent ?? controller.state.defaultAgent;
  return controller.state.next.model ?? (agent !== undefined ? controller.agentModels.get(agent) : undefined) ?? view?.session?.defaultModel ?? controller.catalog?.defaultModel;
}

/** The effort the next Turn will use: the one chosen in this run, else the one remembered for its model. */
export function nextEffort(controller: Controller): ReasoningEffort | undefined {
  if (controller.state.next.effort !== undefined) return controller.state.next.effort;
  const model = nextModel(controller);
  return model === undefined ? undefined : controller.preferences.get().efforts[model];
}

function setEffort(controller: Controller, model: string | undefined, effort: ReasoningEffort | undefined): void {
  controller.update({ next: { ...controller.state.next, effort } });
  if (model !== undefined) controller.preferences.setEffort(model, effort);
}

export function effortPicker(controller: Controller, model: string | undefined, efforts: readonly ReasoningEffort[]): PickerSpec {
  return {
    title: `Reasoning effort${model ? ` for ${model}` : ""}`,
    hint: "↑/↓ move · Enter select · Esc close",
    load: async () => [{ id: "default", label: "default" }, ...efforts.map((effort) => ({ id: effort, label: effort }))],
    choose: (item) => {
      controller.closeOverlay();
      setEffort(controller, model, item.id === "default" ? undefined : (item.id as ReasoningEffort));
    },
  };
}

/** The model and its levels, reading the catalog when it was not read yet. A model the catalog knows without levels is refused. */
async function modelLevels(controller: Controller, what: string): Promise<{ model: string | undefined; efforts: readonly ReasoningEffort[] | undefined }> {
  if (controller.catalog === undefined) await loadCatalog(controller);
  const model = nextModel(controller);
  const efforts = effortsOf(controller, model);
  if (efforts !== undefined && efforts.length === 0) throw new Error(`${model} advertises no reasoning effort levels (${what})`);
  return { model, efforts };
}

/** `/effort [LEVEL|default]`: bare, the effort picker; `default` clears the level. */
export async function effortCommand(controller: Controller, argument: string): Promise<void> {
  if (argument === "default") return setEffort(controller, nextModel(controller), undefined);
  if (argument !== "" && !EFFORTS.includes(argument as ReasoningEffort)) throw new Error(`/effort takes one of ${EFFORTS.join(", ")} or default`);
  const { model, efforts } = await modelLevels(controller, "pick another model with /models");
  // A model the catalog does not know (a typed PROVIDER/MODEL) is offered every level.
  const offered = efforts ?? EFFORTS;
  if (argument === "") return controller.openPicker(effortPicker(controller, model, offered));
  if (!offered.includes(argument as ReasoningEffort)) throw new Error(`${model} advertises the effort levels ${offered.join(", ")}`);
  setEffort(controller, model, argument as ReasoningEffort);
}

/** Ctrl+X E: the next advertised level of the selected model (after the last: default). */
export async function cycleEffort(controller: Controller): Promise<void> {
  const { model, efforts } = await modelLevels(controller, "Ctrl+X E has nothing to cycle");
  const levels = efforts ?? EFFORTS;
  const current = nextEffort(controller);
  const index = current === undefined ? -1 : levels.indexOf(current);
  setEffort(controller, model, index + 1 < levels.length ? levels[index + 1] : undefined);
  controller.info(`reasoning effort for ${model ?? "the next Turn"}: ${nextEffort(controller) ?? "default"}`);
}
