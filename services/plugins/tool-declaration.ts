// A plugin's `ToolDeclaration`, checked at setup and adapted into a services/tools definition:
// inputs and results cross the boundary as owned JSON copies, projections are validated and
// de-duplicated, activity updates checked, thrown values mapped to safe failures (`publicMessage`
// of a `PluginError`, else `Tool execution failed.`; a dismissed question keeps its code).
import { PluginError, type JournalEntry, type PermissionProjection as PluginProjection, type ToolDeclaration, type ToolExecutionContext, type ToolModelContext } from "../../plugin/index.js";
import {
  defaultProjection,
  interrupted,
  jsonResult,
  textResult,
  ToolFailure,
  type AnyToolDefinition,
  type PermissionProjection,
  type ToolActivityUpdate,
  type ToolContext,
  type ToolFailureCode,
  type ToolOutput,
  type ToolPermissionContext,
} from "../tools/tool.js";
import { copyJson, hasTag, isRecord, jsonProblem, publicMessageOf, schemaProblem } from "./checks.js";
import type { Checked } from "./declarations.js";
import type { JournalCall } from "./journal.js";

/** Tool ids Core reserves for itself. */
export const RESERVED_TOOL_IDS: readonly string[] = ["skill", "task"];

/** A tool name every provider accepts (OpenAI's function-name rule, the strictest). */
const TOOL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * A plugin tool as the tool registry holds it. Unlike a built-in tool, `permissions` may return a
 * promise (a plugin projector is async): the Turn loop must await it.
 */
export interface PluginToolDefinition extends Omit<AnyToolDefinition, "permissions"> {
  readonly pluginId: string;
  /** The declaration's per-model filter, when it has one (the loop evaluates it per request). */
  readonly availableForModel?: (model: ToolModelContext) => boolean;
  permissions(input: unknown, ctx: ToolPermissionContext): PermissionProjection[] | Promise<PermissionProjection[]>;
}

const failure = (code: string, message: string): ToolFailure => new ToolFailure(code as ToolFailureCode, message);

/** Checks a declaration's shape: id, description, schema (restricted keywords, object root), functions. */
export function checkToolDeclaration(raw: unknown): Checked<ToolDeclaration<never>> {
  if (!isRecord(raw)) return { ok: false, message: "a tool declaration must be an object" };
  const id = raw["id"];
  if (typeof id !== "string" || !TOOL_ID.test(id)) return { ok: false, message: `invalid tool id ${JSON.stringify(id)}: 1 to 64 letters, digits, "_" or "-"` };
  const at = `tool ${JSON.stringify(id)}`;
  if (typeof raw["description"] !== "string" || raw["description"].trim() === "") return { ok: false, message: `${at}: description must be non-empty` };
  const schema = schemaProblem(raw["inputSchema"]);
  if (schema) return { ok: false, message: `${at}: inputSchema: ${schema}` };
  for (const key of ["availableForModel", "permissions"] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== "function") return { ok: false, message: `${at}: ${key} must be a function` };
  }
  if (typeof raw["execute"] !== "function") return { ok: false, message: `${at}: execute must be a function` };
  for (const key of ["discoversWorkspaceInstructions", "directOnly"] as const) {
    if (raw[key] !== undefined && raw[key] !== true) return { ok: false, message: `${at}: ${key} must be true when present` };
  }
  return { ok: true, value: raw as unknown as ToolDeclaration<never> };
}

const hasUndefinedMember = (value: Record<string, unknown>): boolean => Object.values(value).some((member) => member === undefined);

/** A projection as Core accepts it, or a problem. */
function projectionOf(raw: unknown): PermissionProjection | string {
  if (!isRecord(raw) || hasUndefinedMember(raw)) return "a projection must be an object without undefined members";
  const { action, resources, save, metadata } = raw;
  if (typeof action !== "string" || action === "") return "action must be a non-empty string";
  if (!Array.isArray(resources) || resources.length === 0 || !resources.every((r) => typeof r === "string" && r !== "")) return "resources must be a non-empty list of non-empty strings";
  if (save !== undefined && (!Array.isArray(save) || !save.every((s) => typeof s === "string" && s !== ""))) return "save must be a list of non-empty strings";
  if (metadata !== undefined && (!isRecord(metadata) || jsonProblem(metadata) !== undefined)) return "metadata must be a plain JSON object";
  return { action, resources: [...resources] as [string, ...string[]], ...(save !== undefined ? { save: [...save] } : {}), ...(metadata !== undefined ? { metadata: copyJson(metadata) } : {}) };
}

function validProjections(raw: unknown): PermissionProjection[] {
  if (!Array.isArray(raw) || raw.length === 0) throw failure("invalid_permissions", "The tool's permission projection is not a non-empty list.");
  const out: PermissionProjection[] = [];
  const seen = new Set<string>();
  for (const item of raw) {
    const projection = projectionOf(item);
    if (typeof projection === "string") throw failure("invalid_permissions", `The tool's permission projection is invalid: ${projection}.`);
    const key = JSON.stringify(projection);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(projection);
  }
  return out;
}

const isArtifactPath = (path: unknown): boolean =>
  typeof path === "string" && path !== "" && !path.startsWith("/") && !path.includes("\\") && path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function activityProblem(raw: unknown): string | undefined {
  if (!isRecord(raw) || hasUndefinedMember(raw)) return "an activity update must be an object without undefined members";
  if (!Number.isSafeInteger(raw["observedBytes"]) || (raw["observedBytes"] as number) < 0) return "observedBytes must be a non-negative integer";
  if (typeof raw["truncated"] !== "boolean") return "truncated must be a boolean";
  if (raw["message"] !== undefined && (typeof raw["message"] !== "string" || raw["message"].length > 1024)) return "message must be at most 1,024 characters";
  if (raw["preview"] !== undefined && (typeof raw["preview"] !== "string" || Buffer.byteLength(raw["preview"], "utf8") > 51_200)) return "preview must be at most 50 KiB";
  const artifact = raw["artifact"];
  if (artifact !== undefined) {
    if (!isRecord(artifact) || hasUndefinedMember(artifact)) return "artifact must be an object";
    if (typeof artifact["id"] !== "string" || !UUID.test(artifact["id"])) return "artifact.id must be a UUID";
    if (!isArtifactPath(artifact["path"])) return "artifact.path must be a normalized relative path";
    if (!Number.isSafeInteger(artifact["observedBytes"]) || (artifact["observedBytes"] as number) < 0) return "artifact.observedBytes must be a non-negative integer";
    if (!["writing", "complete", "incomplete"].includes(artifact["state"] as string)) return "artifact.state must be writing, complete or incomplete";
  }
  return undefined;
}

/** A thrown value as the call's safe failure. */
function failureOf(error: unknown, signal: AbortSignal): ToolFailure {
  if (signal.aborted) return interrupted();
  if (hasTag(error, "QuestionDismissedError")) return failure("question_dismissed", "The user dismissed this question.");
  if (hasTag(error, "PluginError")) return failure("tool_error", publicMessageOf(error) ?? "Tool execution failed.");
  return failure("tool_error", "Tool execution failed.");
}

export interface ToolAdapterOptions {
  readonly pluginId: string;
  /** This plugin's `reportJournal`. */
  readonly reportJournal: (call: JournalCall, entry: JournalEntry) => Promise<void>;
}

/** The registry definition of a checked declaration. */
export function adaptTool(declaration: ToolDeclaration<never>, options: ToolAdapterOptions): PluginToolDefinition {
  const decl = declaration as unknown as ToolDeclaration<Record<string, unknown>>;
  const permissionContext = (ctx: ToolPermissionContext) => ({ sessionId: ctx.sessionId, turnId: ctx.turnId, workdir: ctx.workdir, toolCallId: ctx.toolCallId, signal: ctx.signal });
  const definition: PluginToolDefinition = {
    id: decl.id,
    description: decl.description,
    inputSchema: copyJson(decl.inputSchema) as AnyToolDefinition["inputSchema"],
    pluginId: options.pluginId,
    ...(decl.discoversWorkspaceInstructions === true ? { discoversWorkspaceInstructions: true as const } : {}),
    ...(decl.directOnly === true ? { directOnly: true as const } : {}),
    ...(decl.availableForModel ? { availableForModel: (model: ToolModelContext) => decl.availableForModel!({ ...model }) } : {}),
    permissions(input, ctx) {
      if (!decl.permissions) return defaultProjection(decl.id);
      const project = decl.permissions;
      return (async () => {
        let projected: unknown;
        try {
          projected = await project(copyJson(input) as Record<string, unknown>, permissionContext(ctx));
        } catch (error) {
          throw failureOf(error, ctx.signal);
        }
        return validProjections(projected);
      })();
    },
    async execute(input, ctx: ToolContext): Promise<ToolOutput> {
      const permissions = (ctx.permissions ?? defaultProjection(decl.id)).map((projection) => copyJson(projection)) as unknown as PluginProjection[];
      const call: JournalCall = { sessionId: ctx.sessionId, turnId: ctx.turnId, toolCallId: ctx.toolCallId };
      const context: ToolExecutionContext = {
        ...permissionContext(ctx),
        permissions,
        reportActivity: async (update) => {
          const problem = activityProblem(update);
          if (problem) throw new PluginError({ message: `The activity update is invalid: ${problem}.` });
          await ctx.reportActivity(copyJson(update) as ToolActivityUpdate);
        },
        askQuestion: async (questions) => (await ctx.askQuestion(copyJson(questions) as unknown as Parameters<ToolContext["askQuestion"]>[0])) as unknown as Awaited<ReturnType<ToolExecutionContext["askQuestion"]>>,
        reportJournal: (entry) => options.reportJournal(call, entry),
      };
      let value: unknown;
      try {
        value = await decl.execute(copyJson(input) as Record<string, unknown>, context);
      } catch (error) {
        throw failureOf(error, ctx.signal);
      }
      if (ctx.signal.aborted) throw interrupted();
      const problem = jsonProblem(value);
      if (problem !== undefined) throw failure("invalid_output", "The tool returned a value that is not JSON.");
      const output = typeof value === "string" ? textResult(value) : jsonResult(copyJson(value));
      if (!decl.discoversWorkspaceInstructions) return output;
      const read = permissions.find((projection) => projection.action === "read" && typeof projection.metadata?.["canonicalPath"] === "string");
      const kind = typeof value === "string" ? "file" : isRecord(value) ? value["kind"] : undefined;
      if (!read || (kind !== "file" && kind !== "directory")) throw failure("workspace_instruction_failed", "The tool's result does not name the file or directory it read.");
      return { ...output, instructionTarget: { path: read.metadata!["canonicalPath"] as string, isDirectory: kind === "directory" } };
    },
  };
  return Object.freeze(definition);
}
