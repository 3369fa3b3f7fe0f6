// The bench guard (tools/bench/check.mjs): which figures fail `npm run bench -- --check`,
// among them a hot-path figure 20 % above its baseline. CI runs the real quick check (.ci/run).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error plain ESM tool module without types
import { compareFigures, readBaseline, toleranceOf, updatedBaseline, writeBaseline } from "../../tools/bench/check.mjs";

type Figure = { key: string; value: number; kind: "ratio" | "count"; label: string };
const ratio = (key: string, value: number): Figure => ({ key, value, kind: "ratio", label: key });
const count = (key: string, value: number): Figure => ({ key, value, kind: "count", label: key });
const baseline = { figures: { "hotpath.cpuPerTurn": { value: 1.0 }, "startup.version": { value: 1.2, tolerance: 0.3 }, "statements.beyondContent": { value: 12 } } };

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("bench --check", () => {
  it("fails a ratio 20 % above its baseline and passes one within the default 15 %", () => {
    const slower = compareFigures(baseline, [ratio("hotpath.cpuPerTurn", 1.2)], ["hotpath"]);
    expect(slower.failed).toEqual(["hotpath.cpuPerTurn"]);
    expect(slower.rows[0]).toMatchObject({ verdict: "regressed", baseline: 1.0, now: 1.2 });
    expect(compareFigures(baseline, [ratio("hotpath.cpuPerTurn", 1.1)], ["hotpath"]).failed).toEqual([]);
    expect(compareFigures(baseline, [ratio("hotpath.cpuPerTurn", 0.6)], ["hotpath"]).failed).toEqual([]);
  });

  it("uses a figure's own tolerance when the baseline states one", () => {
    expect(toleranceOf({ value: 1 }, "ratio")).toBe(0.15);
    expect(compareFigures(baseline, [ratio("startup.version", 1.5)], ["startup"]).failed).toEqual([]);
    expect(compareFigures(baseline, [ratio("startup.version", 1.6)], ["startup"]).failed).toEqual(["startup.version"]);
  });

  it("fails a count one above its baseline (counts have no tolerance)", () => {
    expect(compareFigures(baseline, [count("statements.beyondContent", 13)], ["statements"]).failed).toEqual(["statements.beyondContent"]);
    expect(compareFigures(baseline, [count("statements.beyondContent", 12)], ["statements"]).failed).toEqual([]);
  });

  it("fails a benchmark that ran without producing its baseline figure, and ignores ones that did not run", () => {
    const broken = compareFigures(baseline, [], ["hotpath"]);
    expect(broken.failed).toEqual(["hotpath.cpuPerTurn"]);
    expect(broken.rows[0]).toMatchObject({ verdict: "missing" });
    expect(compareFigures(baseline, [], ["turns"]).failed).toEqual([]);
  });

  it("passes a figure without a baseline entry, reported as new", () => {
    const fresh = compareFigures(baseline, [ratio("oneshot.run", 9)], ["oneshot"]);
    expect(fresh.failed).toEqual([]);
    expect(fresh.rows[0]).toMatchObject({ verdict: "new" });
  });

  it("--update-baseline writes this run's figures and keeps tolerances and other figures", () => {
    dir = mkdtempSync(join(tmpdir(), "ze-bench-check-"));
    const file = join(dir, "baseline.json");
    writeBaseline(updatedBaseline(baseline, [ratio("startup.version", 1.23456), count("statements.beyondContent", 11)]), file);
    const written = readBaseline(file);
    expect(written.figures).toEqual({ "hotpath.cpuPerTurn": { value: 1.0 }, "startup.version": { value: 1.235, tolerance: 0.3 }, "statements.beyondContent": { value: 11 } });
    expect(readFileSync(file, "utf8").endsWith("}\n")).toBe(true);
  });

  it("the committed baseline guards the hot path, the statement count and start-up", () => {
    const committed = readBaseline();
    for (const key of ["hotpath.cpuPerTurn", "statements.beyondContent", "startup.version"]) expect(committed.figures[key]?.value).toBeGreaterThan(0);
  });
});
