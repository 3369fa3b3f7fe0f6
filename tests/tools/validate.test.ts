import { describe, expect, it } from "vitest";
import {
  BUILTIN_TOOL_IDS,
  ToolFailure,
  builtinTools,
  disallowedSchemaKeywords,
  validateToolInput,
  type AnyToolDefinition,
} from "../../services/tools/index.js";

describe("builtinTools", () => {
  it("registers the seven standard tools under their ids", () => {
    expect(BUILTIN_TOOL_IDS).toEqual(["read", "write", "edit", "shell", "webfetch", "question", "pause"]);
    for (const [id, tool] of Object.entries(builtinTools)) {
      expect(tool.id).toBe(id);
      expect(tool.description.length).toBeGreaterThan(0);
    }
    expect(builtinTools.read.discoversWorkspaceInstructions).toBe(true);
    expect(builtinTools.question.directOnly).toBe(true);
  });

  it("every input schema has an object root and only the allowed keywords", () => {
    for (const tool of Object.values(builtinTools) as AnyToolDefinition[]) {
      expect(tool.inputSchema.type).toBe("object");
      expect(disallowedSchemaKeywords(tool.inputSchema)).toEqual([]);
    }
  });

  it("disallowedSchemaKeywords finds forbidden keywords at any depth", () => {
    expect(
      disallowedSchemaKeywords({
        type: "object",
        properties: { a: { type: "string", pattern: "x" }, b: { type: "array", items: { type: "string", format: "uri" } } },
        default: {},
      }),
    ).toEqual(["/properties/a/pattern", "/properties/b/items/format", "/default"]);
  });
});

describe("validateToolInput", () => {
  const table: [keyof typeof builtinTools, unknown, string[]][] = [
    ["read", {}, ["input must NOT have fewer than 1 properties"]],
    ["read", { filePath: "" }, ["input/filePath must NOT have fewer than 1 characters"]],
    ["read", { filePath: "a", offset: 0 }, ["input/offset must be >= 1"]],
    ["read", { filePath: "a", limit: 1.5 }, ["input/limit must be integer"]],
    ["read", { filePath: "a", extra: true }, ['input has unknown property "extra"']],
    ["read", "a.txt", ["input must be object"]],
    ["read", null, ["input must be object"]],
    ["write", { filePath: "a" }, ['input is missing required property "content"']],
    ["write", { filePath: 1, content: 2 }, ["input/filePath must be string", "input/content must be string"]],
    ["edit", { filePath: "a", oldString: "", newString: "b" }, ["input/oldString must NOT have fewer than 1 characters"]],
    ["edit", { filePath: "a", oldString: "a", newString: "b", replaceAll: "yes" }, ["input/replaceAll must be boolean"]],
    ["shell", { command: "" }, ["input/command must NOT have fewer than 1 characters"]],
    ["shell", { command: "ls", timeoutMs: 2_147_483_648 }, ["input/timeoutMs must be <= 2147483647"]],
    ["webfetch", { url: "http://x/", format: "pdf" }, ['input/format must be one of "markdown", "text", "html"']],
    ["question", { questions: [] }, ["input/questions must NOT have fewer than 1 items"]],
    [
      "question",
      { questions: [{ question: "Q?", header: "x".repeat(31), options: [] }] },
      ["input/questions/0/header must NOT have more than 30 characters", "input/questions/0/options must NOT have fewer than 1 items"],
    ],
    ["question", { questions: [{ question: "Q?", header: "H", options: [{ label: "a" }] }] }, ['input/questions/0/options/0 is missing required property "description"']],
    ["pause", { durationMs: 600_001 }, ["input/durationMs must be <= 600000"]],
    ["pause", { durationMs: 0 }, ["input/durationMs must be >= 1"]],
  ];

  it.each(table)("%s %j", (id, input, problems) => {
    const result = validateToolInput(builtinTools[id] as AnyToolDefinition, input);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual(problems);
    expect(result.failure).toBeInstanceOf(ToolFailure);
    expect(result.failure.code).toBe("invalid_input");
    expect(result.failure.message).toBe(`Tool input validation failed: ${problems.join("; ")}.`);
  });

  it("accepts valid input unchanged (no defaults filled in)", () => {
    const input = { filePath: "a.txt" };
    const result = validateToolInput(builtinTools.read, input);
    expect(result).toEqual({ ok: true, input });
    expect(input).toEqual({ filePath: "a.txt" });
  });

  it("compiles each schema once and reuses it", () => {
    const tool = { ...builtinTools.pause };
    for (let i = 0; i < 3; i++) expect(validateToolInput(tool, { durationMs: 5 }).ok).toBe(true);
  });
});
