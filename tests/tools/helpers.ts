// Real temporary workdirs and a recording ToolContext for the built-in tool tests.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Question } from "../../generated/client/types.gen.js";
import { expect } from "vitest";
import {
  ToolFailure,
  validateToolInput,
  type PermissionProjection,
  type ToolFailureCode,
  type ToolActivityUpdate,
  type ToolContext,
  type ToolDefinition,
  type ToolOutput,
} from "../../services/tools/index.js";

export interface Workspace {
  /** Canonical temp root holding the workdir and an `outside` sibling. */
  readonly root: string;
  readonly workdir: string;
  readonly outside: string;
  write(relative: string, content: string | Buffer, base?: string): string;
  read(relative: string, base?: string): string;
  dispose(): void;
}

export function workspace(): Workspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "ze-tools-test-")));
  const workdir = join(root, "work");
  const outside = join(root, "outside");
  mkdirSync(workdir);
  mkdirSync(outside);
  return {
    root,
    workdir,
    outside,
    write(relative, content, base = workdir) {
      const file = join(base, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    read(relative, base = workdir) {
      return readFileSync(join(base, relative), "utf8");
    },
    dispose() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface RecordingContext extends ToolContext {
  readonly activity: ToolActivityUpdate[];
  readonly questions: (readonly Question[])[];
  readonly controller: AbortController;
  /** Resolves with the first activity update satisfying `predicate` (past or future). */
  activityWhere(predicate: (update: ToolActivityUpdate) => boolean): Promise<ToolActivityUpdate>;
}

export function context(
  workdir: string,
  overrides: Partial<Pick<ToolContext, "askQuestion" | "reportActivity" | "permissions" | "artifactsDirectory">> = {},
): RecordingContext {
  const controller = new AbortController();
  const activity: ToolActivityUpdate[] = [];
  const questions: (readonly Question[])[] = [];
  const waiters: { predicate: (u: ToolActivityUpdate) => boolean; resolve: (u: ToolActivityUpdate) => void }[] = [];
  const ctx: RecordingContext = {
    workdir,
    sessionId: "00000000-0000-4000-8000-000000000001",
    turnId: "00000000-0000-4000-8000-000000000002",
    toolCallId: "call-1",
    signal: controller.signal,
    controller,
    artifactsDirectory: overrides.artifactsDirectory ?? join(workdir, ".ze-harness", "tool-output"),
    ...(overrides.permissions && { permissions: overrides.permissions }),
    activity,
    questions,
    reportActivity(update) {
      activity.push(update);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(update)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(update);
        }
      }
      return overrides.reportActivity?.(update);
    },
    askQuestion(qs) {
      questions.push(qs);
      if (overrides.askQuestion) return overrides.askQuestion(qs);
      return Promise.resolve(qs.map((q) => [q.options[0]!.label]));
    },
    activityWhere(predicate) {
      const seen = activity.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
  };
  return ctx;
}

/** Validates, projects and executes like Core would (authorization is the caller's business). */
export async function call<I>(tool: ToolDefinition<I>, input: unknown, ctx: ToolContext): Promise<ToolOutput> {
  const validated = validateToolInput(tool, input);
  if (!validated.ok) throw validated.failure;
  const permissions: PermissionProjection[] = tool.permissions(validated.input, ctx);
  return tool.execute(validated.input, { ...ctx, permissions: ctx.permissions ?? permissions, reportActivity: ctx.reportActivity.bind(ctx), askQuestion: ctx.askQuestion.bind(ctx) });
}

export function text(output: ToolOutput): string {
  if (output.result.format !== "text") throw new Error(`expected a text result, got ${output.result.format}`);
  return output.result.value;
}

export function json(output: ToolOutput): Record<string, unknown> {
  if (output.result.format !== "json") throw new Error(`expected a json result, got ${output.result.format}`);
  return output.result.value as Record<string, unknown>;
}

/** The ToolFailure a call rejects with (fails the test when it resolves or throws anything else). */
export async function failureOf(promise: Promise<unknown>): Promise<ToolFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return error as ToolFailure;
}

export const expectCode = async (promise: Promise<unknown>, code: ToolFailureCode): Promise<void> =>
  expect((await failureOf(promise)).code).toBe(code);

/** Whether a process exists and is not a zombie (nothing may reap orphans in a container). */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}
