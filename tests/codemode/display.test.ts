// Display: source formatting, result rendering and tool signatures.
import { describe, expect, it } from "vitest";
import { formatCodeMode, makeCodeModeFormatter, renderResult, schemaType, toolSignature } from "../../services/codemode/index.js";

describe("formatCodeMode", () => {
  it("re-indents by bracket nesting and trims whitespace", async () => {
    const source = "\r\n\r\nconst r = await Promise.all([\r\ntools.read({ filePath: 'a' }),\r\n      tools.read({ filePath: 'b' }),\r\n]);   \r\nif (r.length) {\r\nfor (const x of r) {\r\nconsole.log(x)\r\n}\r\n}\r\n\r\n\r\n\r\nreturn r\r\n";
    expect(await formatCodeMode(source)).toBe(
      "const r = await Promise.all([\n  tools.read({ filePath: 'a' }),\n  tools.read({ filePath: 'b' }),\n]);\nif (r.length) {\n  for (const x of r) {\n    console.log(x)\n  }\n}\n\nreturn r",
    );
  });

  it("indents once for brackets opened on one line, and continues method chains", async () => {
    expect(await formatCodeMode("items.forEach((x) => {\nconsole.log(x)\n})\nconst y = list\n.filter(Boolean)\n.map(String)")).toBe(
      "items.forEach((x) => {\n  console.log(x)\n})\nconst y = list\n  .filter(Boolean)\n  .map(String)",
    );
  });

  it("keeps template literals and block comments exactly, and ignores brackets in strings, comments and regexes", async () => {
    const source = "const t = `line one\n    { kept }\n`;\n/* a {\n   comment */\nif (/[{(]/.test(\"}\")) { // ) ]\nreturn '{'\n}";
    expect(await formatCodeMode(source)).toBe("const t = `line one\n    { kept }\n`;\n/* a {\n   comment */\nif (/[{(]/.test(\"}\")) { // ) ]\n  return '{'\n}");
  });

  it("accepts TypeScript", async () => {
    expect(await formatCodeMode("function f(x: Array<string>): number {\nreturn x.length as number\n}")).toBe("function f(x: Array<string>): number {\n  return x.length as number\n}");
  });

  it.each([["an unbalanced bracket", "if (x) {\n  return 1"], ["a mismatched bracket", "f(]"], ["an unterminated string", "const s = 'abc\n"], ["an unterminated template", "const t = `abc"], ["an unterminated comment", "/* never ends"]])(
    "leaves %s unchanged",
    async (_, source) => {
      expect(await formatCodeMode(source)).toBe(source);
    },
  );

  it("makes a reusable formatter", () => {
    const formatter = makeCodeModeFormatter();
    expect(formatter.format("{\nx\n}")).toBe("{\n  x\n}");
    expect(formatter.format("{\nx\n}")).toBe("{\n  x\n}");
    expect(formatter.format("{")).toBe("{");
  });
});

describe("renderResult", () => {
  it("renders strings as themselves, other values as JSON, then the console", () => {
    expect(renderResult({ value: "hello", logs: [] })).toBe("hello");
    expect(renderResult({ value: { a: [1] }, logs: [] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(renderResult({ value: null, logs: ["x", "[warn] y"] })).toBe("null\n\nConsole:\nx\n[warn] y");
    expect(renderResult({ value: undefined, logs: ["only"] })).toBe("Console:\nonly");
    expect(renderResult({ value: undefined, logs: [] })).toBe("(no return value)");
  });
});

describe("signatures", () => {
  it("renders input schemas as TypeScript-like types", () => {
    const schema = {
      type: "object",
      properties: {
        path: { type: "string" },
        mode: { enum: ["a", "b|c"] },
        tags: { type: "array", items: { type: ["string", "null"] } },
        pair: { type: "array", prefixItems: [{ type: "integer" }, { type: "boolean" }], items: false },
        "odd-name": { anyOf: [{ type: "object", properties: { x: { const: 1 } } }, { type: "null" }] },
      },
      required: ["path"],
      additionalProperties: false,
    };
    expect(toolSignature("read", "Read.", schema)).toEqual({
      id: "read",
      path: "tools.read",
      description: "Read.",
      signature: 'tools.read(input: { path: string; mode?: "a" | "b|c"; tags?: (string | null)[]; pair?: [number, boolean]; "odd-name"?: { x?: 1 } | null }): Promise<unknown>',
      inputSchema: schema,
    });
    expect(toolSignature("my-tool", "", { type: "object" }).signature).toBe('tools["my-tool"](input: { [key: string]: unknown }): Promise<unknown>');
  });

  it("abbreviates schemas nested deeper than 8 levels", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) schema = { type: "object", properties: { n: schema }, required: ["n"], additionalProperties: false };
    const type = schemaType(schema);
    expect(type.split("{").length - 1).toBe(8);
    expect(type).toContain("n: …");
  });
});
