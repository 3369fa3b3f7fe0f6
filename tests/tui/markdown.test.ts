// The Markdown renderer of answers (cli/tui/markdown.ts): complete blocks vs the partial one, a
// half-received code fence, colour on and off, and a long streaming paragraph rendered from near
// its end.
import { stripVTControlCharacters } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { loadMarkdown, renderMarkdown, splitStable } from "../../cli/tui/markdown.js";

beforeAll(async () => {
  await loadMarkdown();
});

describe("splitStable", () => {
  it("cuts after the last blank line outside a code fence", () => {
    expect(splitStable("one\n\ntwo\n\nthr")).toEqual(["one\n\ntwo", "thr"]);
    expect(splitStable("intro\n\n```py\ndef f():\n\n  return 1")).toEqual(["intro", "```py\ndef f():\n\n  return 1"]);
    expect(splitStable("no blank line yet")).toEqual(["", "no blank line yet"]);
  });
});

describe("renderMarkdown", () => {
  it("renders emphasis, headings, lists, links, tables; a half-received fence is code to the end", () => {
    const out = renderMarkdown("# Head\n\n**bold** and *em* [a](http://x.test)\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst x = 1;", 60, false);
    expect(out).toContain("Head");
    expect(out).not.toMatch(/^# /m);
    expect(out).toContain("bold and em a (http://x.test)");
    expect(out).toMatch(/\* one\n\s+\* two/);
    expect(out).toContain("│ a │ b │");
    expect(out).toContain("const x = 1;");
    expect(out).not.toContain("```");
    expect(out).toBe(stripVTControlCharacters(out));
  });

  it("a long partial paragraph renders only its end when a tail is asked for", () => {
    const text = `${"start ".repeat(10)}${"ab ".repeat(5000)}end`;
    const full = renderMarkdown(text, 80, false);
    const tail = renderMarkdown(text, 80, false, 800);
    expect(full).toContain("start");
    expect(tail).not.toContain("start");
    expect(tail.endsWith("ab end")).toBe(true);
    expect(tail.length).toBeLessThan(1000);
  });
});
