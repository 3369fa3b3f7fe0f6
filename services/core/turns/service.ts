// Longer than ~400 lines on purpose: `submit` is one admission path (replay by identity,
// validation, model and agent choice, the atomic write) that reads top to bottom.
// Turn admission and reads: submitPrompt (queue and steer), getTurn, listSessionTurns and
// cancelTurn. Every admission is committed before it is acknowledged and replays by its
// identity: the same body returns the original receipt, a different one is a conflict.
import { randomUUID } from "node:crypto";
import type {
  Attribution,
  ListSessionTurnsData,
  PromptReceipt,
  QueuePromptRequest,
  SessionTurnsResponse,
  Steer,
  SteerPromptRequest,
  Turn,
  TurnPolicy,
} from "../../../generated/client/types.gen.js";
import type { Config } from "../../config/index.js";
import { turns as store, getSession, type AdmissionClaim, type SessionRow, type StorageHandle, type TurnRow } from "../../storage/index.js";
import type { ActivityHub } from "../events/hub.js";
import { Failure, conflict, notFound, validationFailure } from "../../contract/failure.js";
import { requestHash, toSession } from "../sessions.js";
import { isTerminal, toTurn } from "./codec.js";
import { resolvePolicy } from "./policy.js";
import { checkModelReference, checkPrompt } from "../validation.js";
import { agentRules, chooseTurnAgent } from "./agents.js";
import { admissionInstructions, checkSelectedSkills, type StoredInstructions, type TurnCatalogs } from "./admission.js";
import { absoluteWorkdir } from "../../contract/paths.js";
import { checkHistorySelection } from "../history/visibility.js";
import { queueReceipt, steerReceipt } from "./receipts.js";
import { titleFrom } from "./title.js";
import { SessionHints, StaleSessionHint, hintKey } from "./session-hints.js";

/** Decides whether a model can serve Turns; throws a typed Failure when it cannot. */
export interface ModelAvailability {
  /** `sessionId`, `workdir`: the Session asking and its absolute workdir (its project's or overlay's plugins may serve the model). */
  check(model: string, sessionId?: string, workdir?: string): void | Promise<void>;
  /**
   * Work that may reach the network (discovering a provider's models for a model the catalog
   * lacks), done before the admission transaction so it never holds the write lock.
   */
  prepare?(model: string): Promise<void>;
  /** The host's default model when nothing names one: the catalog's first available model. */
  defaultModel?(): Promise<string | undefined>;
}

/** The agent a prompt would run with, or undefined when the choice is invalid (admission reports it). */
function tryAgent<T>(choose: () => T): T | undefined {
  try {
    return choose();
  } catch {
    return undefined;
  }
}

export interface TurnServiceOptions {
  readonly storage: StorageHandle;
  readonly config: Config;
  readonly hub: ActivityHub;
  readonly models: ModelAvailability;
  readonly now?: () => number;
  /** Asks the local runner to stop a running Turn now (it settles the Turn as cancelled). */
  readonly interrupt?: (turnId: string, reason?: string) => void;
  /** The local runner's side of an admission: the claim to start it with, and the launch. */
  readonly runner?: AdmissionRunner | undefined;
  /** The config file where `model` would be set (named when no model is configured). */
  readonly configFile?: string | undefined;
  /** Agents and Skills; absent, Turns run without an agent (every tool, no agent rules). */
  readonly catalogs?: TurnCatalogs | undefined;
  /** Session workdirs resolve against this root (AGENTS.md and Skills are read at admission). */
  readonly serverRoot?: string | undefined;
  /** The configuration of the project a Session's absolute workdir belongs to, resolved before each admission (a typed Failure when it cannot be loaded); absent, `config`, `catalogs` and `configFile` serve every Session. */
  readonly project?: ((workdir: string) => Promise<AdmissionProject>) | undefined;
  /** Reads the Session workdir's AGENTS.md at admission (a Failure when it cannot be applied); absent, from the disk. A host without one (the Worker's `/workspace` store) supplies its own. */
  readonly instructions?: ((workdir: string) => Promise<StoredInstructions | null>) | undefined;
}

/** What admission reads from one project's configuration. */
export interface AdmissionProject {
  readonly config: Config;
  readonly catalogs?: TurnCatalogs | undefined;
  readonly configFile?: string | undefined;
}

/** What admission needs from the local Turn runner (implemented by TurnRunner). */
export interface AdmissionRunner {
  admissionClaim(sessionId: string): AdmissionClaim | undefined;
  onAdmitted(turn: TurnRow, session: SessionRow, claimed: boolean): void;
  /**
   * A Turn the admission claimed, at its COMMIT: the runner may start it before the admission is
   * durable, letting nothing out (no model request, hook or tool) before `durable` resolves.
   * Returns false when it does not (then `onAdmitted` follows once durable).
   */
  launchAdmitted?(turn: TurnRow, session: SessionRow, durable: Promise<void>): boolean;
}

/** No model anywhere: say every way to give one. */
function noModel(configFile: string | undefined): Failure {
  const where = configFile !== undefined ? ` in ${configFile}` : "";
  return validationFailure(
    `Invalid request: no model for this Turn: pass \`model\` (the CLI's --model PROVIDER/MODEL), set the Session's default model, or set "model": "PROVIDER/MODEL"${where}`,
  );
}

/** Largest page `listSessionTurns` returns. */
export const MAX_TURN_PAGE = 100;
export const DEFAULT_TURN_PAGE = 50;

const turnNotFound = (turnId: string): Failure => notFound("turn", `Turn ${turnId} does not exist`);

function parseCount(value: string | undefined, name: string, minimum: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw validationFailure(`Invalid request: query.${name}: must be a non-negative integer`);
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw validationFailure(`Invalid request: query.${name}: ${value} is too large (at most ${Number.MAX_SAFE_INTEGER})`);
  if (parsed < minimum) throw validationFailure(`Invalid request: query.${name}: must be at least ${minimum}`);
  return parsed;
}

function attributionOf(clientId: string, authorId: string | undefined): Attribution {
  return authorId !== undefined ? { clientId, authorId } : { clientId };
}

export class TurnService {
  private readonly storage: StorageHandle;
  private readonly config: Config;
  private readonly hub: ActivityHub;
  private readonly models: ModelAvailability;
  private readonly now: () => number;
  private readonly interrupt: (turnId: string, reason?: string) => void;
  private readonly runner: AdmissionRunner | undefined;
  private readonly configFiles: string | undefined;
  private readonly catalogs: TurnCatalogs | undefined;
  private readonly serverRoot: string | undefined;
  private readonly project: ((workdir: string) => Promise<AdmissionProject>) | undefined;
  /** The Session rows recent admissions locked: the next prompt's pre-transaction read (session-hints.ts). */
  private readonly hints = new SessionHints();
  private readonly readInstructions: (workdir: string) => Promise<StoredInstructions | null>;

  constructor(options: TurnServiceOptions) {
    this.storage = options.storage;
    this.config = options.config;
    this.hub = options.hub;
    this.models = options.models;
    this.now = options.now ?? Date.now;
    this.interrupt = options.interrupt ?? (() => {});
    this.runner = options.runner;
    this.configFiles = options.configFile;
    this.catalogs = options.catalogs;
    this.serverRoot = options.serverRoot;
    this.project = options.project;
    this.readInstructions = options.instructions ?? admissionInstructions;
  }

  /** The configuration, catalogs and config file that apply to a Session in `workdir`. */
  private async projectOf(workdir: string | undefined): Promise<{ config: Config; catalogs: TurnCatalogs | undefined; configFile: string | undefined }> {
    if (this.project && workdir !== undefined) {
      const project = await this.project(workdir);
      return { config: project.config, catalogs: project.catalogs, configFile: project.configFile };
    }
    return { config: this.config, catalogs: this.catalogs, configFile: this.configFiles };
  }

  private async session(server: string, sessionId: string) {
    const row = await getSession(this.storage, server, sessionId);
    if (!row) throw notFound("session", `Session ${sessionId} does not exist`);
    return row;
  }

  private async turnRow(server: string, sessionId: string, turnId: string): Promise<TurnRow> {
    await this.session(server, sessionId);
    const row = await store.getTurn(this.storage, sessionId, turnId);
    if (!row) throw turnNotFound(turnId);
    return row;
  }

  private async render(row: TurnRow): Promise<Turn> {
    const [parts, steers] = await Promise.all([store.listParts(this.storage, [row.id]), store.listSteers(this.storage, [row.id])]);
    return toTurn(row, parts, steers);
  }

  async get(server: string, sessionId: string, turnId: string): Promise<Turn> {
    return this.render(await this.turnRow(server, sessionId, turnId));
  }

  async submit(server: string, sessionId: string, clientId: string, request: QueuePromptRequest | SteerPromptRequest): Promise<PromptReceipt> {
    return request.delivery === "queue" ? this.queue(server, sessionId, clientId, request) : this.steer(server, sessionId, clientId, request);
  }

  private async queue(server: string, sessionId: string, clientId: string, request: QueuePromptRequest): Promise<PromptReceipt> {
    try {
      return await this.queueOnce(server, sessionId, clientId, request, true);
    } catch (error) {
      if (!(error instanceof StaleSessionHint)) throw error;
      this.hints.delete(server, sessionId);
      return this.queueOnce(server, sessionId, clientId, request, false);
    }
  }

  private async queueOnce(server: string, sessionId: string, clientId: string, request: QueuePromptRequest, useHint: boolean): Promise<PromptReceipt> {
    const hash = requestHash(request);
    const { delivery: _delivery, turnId, authorId, providerOptions, ...prompt } = request;
    try {
      // Work that may read files or the network runs before the admission transaction, never
      // under the write lock: the host's default model (when nothing else would name one),
      // discovery of the chosen model, its credential check, AGENTS.md and selected Skills. The
      // admission decides from the Session row it locks; what it finds computed here for the same
      // model and workdir it takes as is, anything else it computes itself.
      let hostDefault: string | undefined;
      const needed = request.model === undefined || this.serverRoot !== undefined;
      const hint = needed && useHint ? this.hints.get(server, sessionId) : undefined;
      const early = needed ? (hint ?? (await getSession(this.storage, server, sessionId))) : undefined;
      const workdir = early && this.serverRoot !== undefined ? absoluteWorkdir(this.serverRoot, early.workdir) : undefined;
      // The Session's project decides its rules, default model and agents (re-read when its file changed).
      const { config, catalogs, configFile } = await this.projectOf(workdir);
      const checks = this.admissionChecks(catalogs, sessionId, workdir);
      let model = request.model;
      if (model === undefined && (this.models.prepare || this.models.defaultModel)) {
        // The same model choice the admission makes below, from a read outside its transaction.
        const agent = early && catalogs ? tryAgent(() => chooseTurnAgent(catalogs.agents, early, request.agent)) : undefined;
        model = agent?.definition?.model ?? early?.defaultModel ?? config.model;
        if (model === undefined) model = hostDefault = await this.models.defaultModel?.();
      }
      if (model !== undefined) await this.models.prepare?.(model);
      await Promise.allSettled([
        model !== undefined ? checks.model(model) : undefined,
        workdir !== undefined ? checks.instructions(workdir) : undefined,
        workdir !== undefined && request.skills !== undefined ? checks.skills(workdir) : undefined,
      ]);
      const now = this.now();
      let launched = false;
      // One transaction: the Session row is read (and locked) by the admission itself, which
      // validates against it, writes the row, its events, the Session's first title and — when
      // this host runs the Session and it is idle — the claim that starts it.
      const admitted = await store.admitTurn(
        this.storage,
        { server, sessionId },
        async (sessionRow) => {
          // What was prepared above from a remembered row must match the row locked now.
          if (hint !== undefined && hintKey(hint) !== hintKey(sessionRow)) throw new StaleSessionHint();
          const session = toSession(sessionRow);
          checkModelReference(request.model, "/model");
          const agent = catalogs ? chooseTurnAgent(catalogs.agents, sessionRow, request.agent) : undefined;
          const model = request.model ?? agent?.definition?.model ?? session.defaultModel ?? config.model ?? hostDefault;
          if (model === undefined) throw noModel(configFile);
          await checks.model(model);
          const caseSensitive = config.permissionMatching?.caseSensitive ?? true;
          const policy = resolvePolicy(config, session, agentRules(agent?.definition, sessionRow, caseSensitive));
          checkPrompt(request.prompt, policy);
          // The history the Turn selects (`visibility`, `conversationEntry`): checked in this transaction (services/core/history).
          await checkHistorySelection(this.storage, sessionRow, request);
          const workdir = this.serverRoot !== undefined ? absoluteWorkdir(this.serverRoot, sessionRow.workdir) : undefined;
          if (request.skills !== undefined && catalogs && workdir !== undefined) {
            await checkSelectedSkills(checks.catalogs(catalogs), workdir, request.skills, agent?.definition, policy);
          }
          const instructions = workdir !== undefined ? await checks.instructions(workdir) : null;
          const title = sessionRow.title === null ? titleFrom(request.prompt) : undefined;
          return {
            row: {
              id: turnId,
              sessionId,
              phase: "pending",
              request: { sessionId, turnId, ...prompt, ...(agent ? { agent: agent.id } : {}) },
              instructions,
              attribution: attributionOf(clientId, authorId),
              model,
              modelLeaseId: `lease_${randomUUID().replaceAll("-", "")}`,
              requestOptionsId: randomUUID(),
              providerOptions: providerOptions ?? null,
              policy,
              acceptedAt: now,
              requestHash: hash,
            },
            events: [{ type: "turn.snapshot", data: null }],
            ...(title !== undefined ? { title: { title, updatedAt: now } } : {}),
          };
        },
        this.runner?.admissionClaim(sessionId),
        // The claimed Turn starts at COMMIT: its history, leases and setup overlap the WAL sync.
        (admission, durable) => {
          if (admission.claimed) launched = this.runner?.launchAdmitted?.(admission.turn, admission.session, durable) ?? false;
        },
      );
      if (!admitted) {
        this.hints.delete(server, sessionId);
        throw notFound("session", `Session ${sessionId} does not exist`);
      }
      this.hints.set(admitted.session);
      this.hub.changed(server, sessionId);
      if (!admitted.claimed) this.hub.workAvailable();
      // Decided when it runs: inside an outer transaction the launch above happens at its COMMIT, after this line.
      this.storage.afterCommit(() => launched || this.runner?.onAdmitted(admitted.turn, admitted.session, admitted.claimed));
      return queueReceipt(admitted.turn);
    } catch (error) {
      if (error instanceof StaleSessionHint) throw error;
      // A replay (or a concurrent admission of the same turnId that won) answers with the original receipt.
      const replay = await this.replayQueue(sessionId, turnId, hash);
      if (replay) return replay;
      throw error;
    }
  }

  /**
   * One admission's file and credential reads, each started at most once per input: run before
   * the transaction, then taken (settled) by the admission when its locked row asks for the same.
   */
  private admissionChecks(catalogs: TurnCatalogs | undefined, sessionId?: string, workdir?: string) {
    const memo = <T>(run: (key: string) => Promise<T>) => {
      const started = new Map<string, Promise<T>>();
      return (key: string): Promise<T> => {
        let promise = started.get(key);
        if (promise === undefined) {
          promise = Promise.resolve().then(() => run(key));
          promise.catch(() => {});
          started.set(key, promise);
        }
        return promise;
      };
    };
    const skills = memo((workdir) => catalogs!.skills(workdir));
    return {
      model: memo(async (model) => void (await this.models.check(model, sessionId, workdir))),
      instructions: memo(this.readInstructions),
      skills,
      catalogs: (catalogs: TurnCatalogs): TurnCatalogs => ({ agents: catalogs.agents, skills }),
    };
  }

  private async replayQueue(sessionId: string, turnId: string, hash: string): Promise<PromptReceipt | undefined> {
    const existing = await store.getTurnById(this.storage, turnId);
    if (!existing) return undefined;
    if (existing.sessionId !== sessionId || existing.requestHash !== hash) throw conflict(`Turn ${turnId} was already admitted with a different request`);
    return queueReceipt(existing);
  }

  private async steer(server: string, sessionId: string, clientId: string, request: SteerPromptRequest): Promise<PromptReceipt> {
    await this.session(server, sessionId);
    const hash = requestHash(request);
    const existing = await store.getSteer(this.storage, request.steerId);
    if (existing) {
      if (existing.sessionId !== sessionId || existing.requestHash !== hash) {
        throw new Failure({ _tag: "SteerConflictError", message: `Steer ${request.steerId} was already accepted with different content` });
      }
      return steerReceipt(existing.data as Steer);
    }
    const target = await store.getTurn(this.storage, sessionId, request.expectedTurnId);
    const guard: (turn: TurnRow | undefined) => asserts turn is TurnRow = (turn) => {
      if (!turn || turn.sessionId !== sessionId || turn.phase !== "running") {
        throw new Failure({ _tag: "TurnNotActiveError", message: `Turn ${request.expectedTurnId} is not the Session's running Turn` });
      }
      if (turn.steeringGate === "closed") {
        throw new Failure({ _tag: "TurnNotSteerableError", message: `Turn ${request.expectedTurnId} no longer accepts steering input` });
      }
    };
    guard(target);
    checkPrompt(request.prompt, target.policy as TurnPolicy);
    const attribution = attributionOf(clientId, request.authorId);
    const acceptedAt = this.now();
    const row = await store.insertSteer(
      this.storage,
      { steerId: request.steerId, sessionId, turnId: target.id, data: null, requestHash: hash },
      (sequence): Steer => ({
        sessionId,
        turnId: target.id,
        steerId: request.steerId,
        sequence,
        prompt: request.prompt,
        attribution,
        acceptedAt,
        state: { state: "accepted" },
      }),
      [{ type: "turn.snapshot", data: null }],
      guard,
    );
    this.hub.changed(server, sessionId);
    return steerReceipt(row.data as Steer);
  }

  async list(server: string, sessionId: string, query: ListSessionTurnsData["query"]): Promise<SessionTurnsResponse> {
    const sessionRow = await this.session(server, sessionId);
    const limit = Math.min(parseCount(query?.limit, "limit", 1) ?? DEFAULT_TURN_PAGE, MAX_TURN_PAGE);
    const afterSequence = parseCount(query?.afterSequence, "afterSequence", 0);
    const throughSequence = parseCount(query?.throughSequence, "throughSequence", 0) ?? (await store.lastTurnSequence(this.storage, sessionId));
    const activityCursor = parseCount(query?.snapshotActivityCursor, "snapshotActivityCursor", 0) ?? sessionRow.activityCursor;
    const rows = await store.listTurns(this.storage, sessionId, { afterSequence, throughSequence, limit: limit + 1 });
    const page = rows.slice(0, limit);
    const [parts, steers] = await Promise.all([
      store.listParts(this.storage, page.map((row) => row.id)),
      store.listSteers(this.storage, page.map((row) => row.id)),
    ]);
    const response: SessionTurnsResponse = {
      sessionId,
      boundary: { throughSequence, activityCursor },
      turns: page.map((row) => ({ activityCursor: row.activityCursor, workSequence: row.sequence, turn: toTurn(row, parts, steers) })),
    };
    if (rows.length > limit) response.nextAfterSequence = page[page.length - 1]!.sequence;
    return response;
  }

  /**
   * Cancels a Turn. A pending Turn settles as cancelled at once; a running one records the
   * request and its runner settles it; a finished Turn is returned unchanged (idempotent).
   */
  async cancel(server: string, sessionId: string, turnId: string, reason: string | undefined): Promise<Turn> {
    const row = await this.turnRow(server, sessionId, turnId);
    if (isTerminal(row.phase) || row.cancellation !== null) return this.render(row);
    const requestedAt = this.now();
    const cancellation = reason !== undefined ? { reason, requestedAt } : { requestedAt };
    if (row.phase === "pending") {
      const outcome = { kind: "cancelled" as const, turnId, ...(reason !== undefined ? { reason } : {}) };
      const changed = await store.changeTurn(this.storage, turnId, {
        patch: { phase: "cancelled", cancellation, outcome, completedAt: requestedAt, steeringGate: "closed" },
        events: [{ type: "turn.finished", data: { outcome, completedAt: requestedAt } }],
        expectPhases: ["pending"],
      });
      if (changed) {
        this.hub.changed(server, sessionId);
        this.hub.workAvailable();
        return this.render(await this.turnRow(server, sessionId, turnId));
      }
      // It started meanwhile: cancel it as a running Turn.
    }
    const changed = await store.changeTurn(this.storage, turnId, {
      patch: { cancellation },
      events: [{ type: "turn.snapshot", data: null }],
      expectPhases: ["running"],
    });
    this.interrupt(turnId, reason);
    if (changed) this.hub.changed(server, sessionId);
    return this.render(await this.turnRow(server, sessionId, turnId));
  }
}
