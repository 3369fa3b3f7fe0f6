// `npm run bench -- --check`: each guarded figure of this run against the committed baseline
// (tools/bench/baseline.json). A figure is a ratio to a baseline measured in the same run (so a
// shared, noisy machine moves both sides alike) or an exact count; it regresses when it exceeds
// the committed value by more than its tolerance (default 15 %, 0 for counts). Lower is better
// for every guarded figure. `--update-baseline` rewrites the file from this run's figures.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./lib.mjs";

export const baselinePath = join(repoRoot, "tools", "bench", "baseline.json");
export const DEFAULT_TOLERANCE = 0.15;

/**
 * @typedef {{ key: string, value: number, kind: "ratio" | "count", label: string }} Figure
 * @typedef {{ value: number, tolerance?: number }} BaselineEntry
 * @typedef {{ figures: Record<string, BaselineEntry> }} Baseline
 */

/** @returns {Baseline} */
export function readBaseline(path = baselinePath) {
  if (!existsSync(path)) return { figures: {} };
  return JSON.parse(readFileSync(path, "utf8"));
}

/** The tolerance of a baseline entry: its own, else 0 for counts and 15 % for ratios. */
export const toleranceOf = (entry, kind) => entry.tolerance ?? (kind === "count" ? 0 : DEFAULT_TOLERANCE);

/**
 * Compares this run's figures with the baseline. `ran` names the benchmarks that ran: a baseline
 * figure of one of them that this run did not produce is a failure too (a broken benchmark must
 * not pass the check). Figures without a baseline entry are reported as new and pass.
 * @param {Baseline} baseline
 * @param {Figure[]} figures
 * @param {readonly string[]} ran
 */
export function compareFigures(baseline, figures, ran) {
  const rows = [];
  const failed = [];
  const byKey = new Map(figures.map((figure) => [figure.key, figure]));
  for (const figure of figures) {
    const entry = baseline.figures[figure.key];
    if (!entry) {
      rows.push({ key: figure.key, label: figure.label, baseline: undefined, now: figure.value, limit: undefined, verdict: "new" });
      continue;
    }
    const limit = entry.value * (1 + toleranceOf(entry, figure.kind));
    const verdict = figure.value > limit ? "regressed" : "ok";
    if (verdict === "regressed") failed.push(figure.key);
    rows.push({ key: figure.key, label: figure.label, baseline: entry.value, now: figure.value, limit, verdict });
  }
  for (const key of Object.keys(baseline.figures)) {
    if (byKey.has(key) || !ran.includes(key.split(".")[0])) continue;
    failed.push(key);
    rows.push({ key, label: key, baseline: baseline.figures[key].value, now: undefined, limit: undefined, verdict: "missing" });
  }
  return { rows, failed };
}

/** The baseline with this run's figures written in (other figures and tolerances kept). */
export function updatedBaseline(baseline, figures) {
  const next = { ...baseline, figures: { ...baseline.figures } };
  for (const figure of figures) {
    const value = figure.kind === "count" ? figure.value : Number(figure.value.toFixed(3));
    next.figures[figure.key] = { ...(baseline.figures[figure.key] ?? {}), value };
  }
  next.figures = Object.fromEntries(Object.entries(next.figures).sort(([a], [b]) => a.localeCompare(b)));
  return next;
}

export function writeBaseline(baseline, path = baselinePath) {
  writeFileSync(path, `${JSON.stringify(baseline, null, 2)}\n`);
}

/** The comparison as table rows for formatTable. */
export function checkRows(rows) {
  const show = (value) => (value === undefined ? "—" : Number.isInteger(value) ? String(value) : value.toFixed(3));
  return rows.map((row) => [row.key, show(row.baseline), show(row.limit), show(row.now), row.verdict]);
}
