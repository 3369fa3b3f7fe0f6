import { describe, expect, it } from "vitest";
import type { Question } from "../../generated/client/types.gen.js";
import { QuestionDismissedError, pauseTool, questionTool } from "../../services/tools/index.js";
import { call, context, text, failureOf } from "./helpers.js";

const questions: Question[] = [
  { question: "Which database?", header: "Database", options: [{ label: "libSQL", description: "embedded" }, { label: "Postgres", description: "" }] },
  { question: "Which features?", header: "Features", multiple: true, options: [{ label: "auth", description: "" }, { label: "billing", description: "" }] },
];


describe("question", () => {
  it("asks through the context and returns the answers in order", async () => {
    const ctx = context("/", { askQuestion: () => Promise.resolve([["Postgres"], ["auth", "billing"]]) });
    const out = text(await call(questionTool, { questions }, ctx));
    expect(ctx.questions).toEqual([questions]);
    expect(out).toBe(
      "The user answered:\n1. [Database] Which database?\n   → Postgres\n2. [Features] Which features?\n   → auth, billing",
    );
  });

  it("a dismissal fails with question_dismissed", async () => {
    const ctx = context("/", { askQuestion: () => Promise.reject(new QuestionDismissedError()) });
    const failure = await failureOf(call(questionTool, { questions }, ctx));
    expect(failure.toFault()).toEqual({ code: "question_dismissed", message: "The user dismissed this question." });
  });

  it("a reply with the wrong number of answers counts as dismissed", async () => {
    const ctx = context("/", { askQuestion: () => Promise.resolve([["Postgres"]]) });
    expect((await failureOf(call(questionTool, { questions }, ctx))).code).toBe("question_dismissed");
  });

  it("projects the default question/* check", () => {
    expect(questionTool.permissions({ questions }, context("/"))).toEqual([{ action: "question", resources: ["*"], save: ["*"] }]);
  });
});

describe("pause", () => {
  it("waits and succeeds", async () => {
    const started = Date.now();
    expect(text(await call(pauseTool, { durationMs: 30 }, context("/")))).toBe("Paused for 30 ms.");
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it("an abort ends the wait with interrupted", async () => {
    const ctx = context("/");
    const waiting = call(pauseTool, { durationMs: 600_000, reason: "wait for build" }, ctx);
    ctx.controller.abort();
    expect((await failureOf(waiting)).code).toBe("interrupted");
  });

  it("projects the default pause/* check", () => {
    expect(pauseTool.permissions({ durationMs: 1 }, context("/"))).toEqual([{ action: "pause", resources: ["*"], save: ["*"] }]);
  });
});
