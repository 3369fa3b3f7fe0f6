// The Execute trace shortcuts of the reference: Ctrl+X J / Shift+J select the next / previous call
// of the latest Execute group, Ctrl+X D toggles that call's details, Ctrl+X L reveals ten more
// calls, Ctrl+X Shift+L folds the selected revealed range (or the latest); Esc closes the trace.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { step, TRACE_BASE_CALLS, visibleCalls, type TraceState } from "../../cli/tui/state/trace.js";
import { KEY, tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

const executePrompt = (code: string, then: string): string => `@call execute ${JSON.stringify({ code })}\n@then ${then}`;

/** The trace panel of a frame (from its title to the header below it). */
const panel = (frame: string): string => frame.slice(frame.lastIndexOf("execute trace"));

describe("the Execute trace", () => {
  it("selects, details, reveals and folds the calls of the latest group, and Esc closes it", async () => {
    const h = harness();
    for (let index = 1; index <= 17; index++) writeFileSync(join(h.home.root, `f${index}.txt`), `content of file ${index}\n`);
    const code = `for (let i = 1; i <= 17; i++) await tools.read({ filePath: "f" + i + ".txt" });\nreturn "seventeen";`;
    const tui = await open();
    await tui.submit(executePrompt(code, "Done reading."));
    await tui.waitFor(/Done reading\.[\s\S]*test\/scripted · \d/);

    // J opens the trace on the first call: five calls shown, twelve behind Ctrl+X L.
    await tui.press(KEY.ctrlX, "j");
    let frame = panel(await tui.waitFor(/execute trace[\s\S]*12 more calls/));
    expect(frame).toMatch(/› ✓ read f1\.txt/);
    expect(frame).toContain("read f5.txt");
    expect(frame).not.toContain("read f6.txt");

    // D opens the selected call's details (its output), and closes them again.
    await tui.press(KEY.ctrlX, "d");
    frame = panel(await tui.waitFor(/execute trace[\s\S]*content of file 1/));
    expect(frame).toMatch(/› ✓ read f1\.txt/);
    await tui.press(KEY.ctrlX, "d");
    await tui.waitFor(/execute trace(?![\s\S]*content of file 1)[\s\S]*12 more calls/);

    // L reveals ten more; a second L the last two.
    await tui.press(KEY.ctrlX, "l");
    frame = panel(await tui.waitFor(/execute trace[\s\S]*read f15\.txt[\s\S]*2 more calls/));
    expect(frame).not.toContain("read f16.txt");
    await tui.press(KEY.ctrlX, "l");
    frame = panel(await tui.waitFor(/execute trace[\s\S]*read f17\.txt/));
    expect(frame).not.toMatch(/more calls/);

    // Shift+J from the first call stays there; J walks on.
    await tui.press(KEY.ctrlX, "J");
    await tui.press(KEY.ctrlX, "j");
    frame = panel(await tui.waitFor(/› ✓ read f2\.txt/));

    // Shift+L with the selection in the base calls folds the latest range (f16, f17).
    await tui.press(KEY.ctrlX, "L");
    frame = panel(await tui.waitFor(/execute trace[\s\S]*2 more calls/));
    expect(frame).toContain("read f15.txt");

    // Esc closes the trace; the Turn stays as it was.
    await tui.press(KEY.escape);
    const closed = await tui.waitFor(/^(?![\s\S]*execute trace)[\s\S]*Done reading\./);
    expect(closed).toMatch(/✓ execute · 17 calls · read/);
  });

  it("without an Execute call the trace says so and opens nothing", async () => {
    const tui = await open();
    await tui.submit("plain answer");
    await tui.waitFor(/test\/scripted · \d/);
    await tui.press(KEY.ctrlX, "j");
    const frame = await tui.waitFor(/no Execute call to trace yet/);
    expect(frame).not.toContain("execute trace");
  });
});

describe("trace steps", () => {
  const fresh: TraceState = { partId: "p", selected: undefined, detailed: [], revealed: [] };

  it("selecting past the shown calls reveals the range that holds the selection", () => {
    let trace = fresh;
    for (let index = 0; index < TRACE_BASE_CALLS + 1; index++) trace = step(trace, "next", 30);
    expect(trace.selected).toBe(TRACE_BASE_CALLS);
    expect(visibleCalls(trace, 30)).toBe(TRACE_BASE_CALLS + 10);
  });

  it("folding the range of the selected call removes that range and keeps the selection shown", () => {
    let trace = step(step(fresh, "reveal", 40), "reveal", 40);
    expect(visibleCalls(trace, 40)).toBe(25);
    trace = { ...trace, selected: 8 }; // in the first revealed range
    trace = step(trace, "fold", 40);
    expect(trace.revealed).toEqual([10]);
    expect(trace.selected).toBe(8);
    expect(visibleCalls(trace, 40)).toBe(15);
    expect(step({ ...trace, selected: 14 }, "fold", 40).selected).toBe(4);
  });

  it("Shift+J before any selection starts from the last call; a group without calls does nothing", () => {
    expect(step(fresh, "previous", 12).selected).toBe(11);
    expect(step(fresh, "next", 0)).toBe(fresh);
  });
});
