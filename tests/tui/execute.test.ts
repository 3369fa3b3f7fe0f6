// CodeMode `execute` calls as groups: one collapsed line (state, call count and tools, elapsed)
// instead of a row per nested call; Ctrl+X T shows the script's source, its nested calls as
// indented rows in the direct rows' format, and its output — in place while the Turn runs
// (live: the calls so far, a nested approval shows on the group), printed below once settled.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KEY, tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

/** A prompt whose model answer is one `execute` call with `code`, then `then`. */
const executePrompt = (code: string, then: string): string => `@call execute ${JSON.stringify({ code })}\n@then ${then}`;

describe("execute groups", () => {
  it("a settled script is one collapsed summary line; Ctrl+X T prints its source, nested calls and output", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "a.txt"), "alpha words\n");
    writeFileSync(join(h.home.root, "b.txt"), "beta words\n");
    const code = [
      'const a = await tools.read({ filePath: "a.txt" });',
      'const b = await tools.read({ filePath: "b.txt" });',
      'const listed = await tools.shell({ command: "echo listed-by-shell" });',
      'console.log("read both");',
      'return [a.includes("alpha"), b.includes("beta"), String(listed).includes("listed-by-shell")].join("/") + " " + ["script", "result"].join("-");',
    ].join("\n");
    const tui = await open();
    await tui.submit(executePrompt(code, "The script ran."));
    const settled = await tui.waitFor(/The script ran\.[\s\S]*test\/scripted · \d/);
    const turnRows = settled.slice(settled.indexOf("@then The script ran."));
    expect(turnRows).toMatch(/✓ execute · 3 calls · read, shell · \d[\d.]*m?s/);
    // The nested calls are not rows of the Turn, and the collapsed group shows no source or output.
    expect(turnRows).not.toMatch(/✓ read a\.txt/);
    expect(turnRows).not.toMatch(/✓ shell echo/);
    expect(turnRows).not.toContain("script-result");
    // Every frame: the nested calls never appeared as the Turn's own rows while it ran.
    expect(tui.frames().some((frame) => /^[✓⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] read a\.txt/m.test(frame))).toBe(false);

    await tui.press(KEY.ctrlX, "t");
    const details = await tui.waitFor(/output[\s\S]*script-result/);
    const printed = details.slice(details.lastIndexOf("✓ execute"));
    expect(printed).toMatch(/source\n\s+const a = await tools\.read\(\{ filePath: "a\.txt" \}\);/);
    expect(printed).toMatch(/calls\n\s+✓ read a\.txt[^\n]*\n[\s\S]*✓ read b\.txt[\s\S]*✓ shell echo listed-by-shell/);
    // Nested rows are indented under the group, in the direct rows' format (output under the call).
    expect(printed).toMatch(/\n {4}✓ read a\.txt \d[\d.]*m?s\n {6}.*alpha words/);
    expect(printed).toMatch(/output\n\s+true\/true\/true script-result[\s\S]*Console:[\s\S]*read both/);
  });

  it("a running script is live: its calls so far and a nested approval show on the group, Ctrl+X T expands it in place", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "inside.txt"), "inside words\n");
    const outside = join(h.home.dir, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "far.txt"), "far words\n");
    const code = [
      'const near = await tools.read({ filePath: "inside.txt" });',
      `const far = await tools.read({ filePath: ${JSON.stringify(join(outside, "far.txt"))} });`,
      'return near.includes("inside") && far.includes("far") ? "both" + "-read" : "missing";',
    ].join("\n");
    const tui = await open();
    await tui.submit(executePrompt(code, "Live script done."));
    // (The script returns "both" + "-read", so the prompt itself never matches the output.)
    // The second read asks (outside the project): the group is still running and says so.
    const waiting = await tui.waitFor(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] execute · 2 calls · read · \d[\d.]*m?s · waiting for approval/);
    expect(waiting).toContain("Permission");
    await tui.press(KEY.ctrlX, "t");
    const expanded = await tui.waitFor(/source[\s\S]*calls[\s\S]*far\.txt · waiting for approval/);
    expect(expanded).toMatch(/calls\n\s+✓ read inside\.txt/);
    await tui.press(KEY.enter); // Allow once
    const done = await tui.waitFor(/Live script done\.[\s\S]*test\/scripted · \d/);
    // The Turn settled with its group expanded: printed with source, both calls and the output.
    expect(done).toMatch(/✓ execute · 2 calls · read · \d[\d.]*m?s[\s\S]*source[\s\S]*✓ read inside\.txt[\s\S]*✓ read [^\n]*far\.txt[\s\S]*output\n\s+both-read/);
  });

  it("a failed script shows ✗ and its fault's first line collapsed; a long source is bounded when expanded", async () => {
    const comments = Array.from({ length: 40 }, (_, index) => `// note ${index + 1}`);
    const code = [...comments, 'throw new Error(["boom", "in", "script"].join("-"));'].join("\n");
    const tui = await open();
    await tui.submit(executePrompt(code, "Recovered from the failure."));
    const settled = await tui.waitFor(/Recovered from the failure\.[\s\S]*test\/scripted · \d/);
    const rows = settled.slice(settled.indexOf("@then Recovered"));
    expect(rows).toMatch(/✗ execute · no calls · \d[\d.]*m?s\n\s+script_error: .*boom-in-script/);
    await tui.press(KEY.ctrlX, "t");
    const details = await tui.waitFor(/source[\s\S]*more lines[\s\S]*output/);
    const printed = details.slice(details.lastIndexOf("✗ execute"));
    expect(printed).toContain("// note 30");
    expect(printed).not.toContain("// note 31");
    expect(printed).toMatch(/… 11 more lines/);
    expect(printed).toMatch(/output\n\s+.*boom-in-script/);
  });
});
