import { describe, expect, it } from "vitest";
import { matchesPattern } from "../../services/core/permissions/index.js";

// [pattern, value, case-sensitive result, case-insensitive result]
const table: [string, string, boolean, boolean][] = [
  // literal, full-string
  ["read", "read", true, true],
  ["read", "reader", false, false],
  ["read", "xread", false, false],
  ["", "", true, true],
  ["", "a", false, false],
  // `*` any run, including empty and `/`
  ["*", "", true, true],
  ["*", "anything/at/all", true, true],
  ["src/*", "src/a/b/c.ts", true, true],
  ["src/*", "src/", true, true],
  ["src/*", "src", false, false],
  ["*.ts", "a/b/c.ts", true, true],
  ["*.ts", "a/b/c.tsx", false, false],
  ["a*b*c", "abc", true, true],
  ["a*b*c", "aXXbYYc", true, true],
  ["a*b*c", "aXXbYY", false, false],
  ["**", "x", true, true],
  // `?` exactly one character (one code point)
  ["?", "a", true, true],
  ["?", "", false, false],
  ["?", "ab", false, false],
  ["file?.txt", "file1.txt", true, true],
  ["file?.txt", "file12.txt", false, false],
  ["?", "é", true, true],
  ["?", "😀", true, true],
  ["a?c", "a/c", true, true],
  // case sensitivity
  ["README.md", "readme.md", false, true],
  ["*.ENV", ".env", false, true],
  ["Git *", "git push", false, true],
  // backslashes are `/` on both sides
  ["src\\*", "src/a.ts", true, true],
  ["src/*", "src\\a.ts", true, true],
  // ` *` suffix also matches without it
  ["git status *", "git status", true, true],
  ["git status *", "git status --short", true, true],
  ["git status *", "git statusx", false, false],
  ["git status *", "git stat", false, false],
  ["git *", "git", true, true],
  ["*", "*", true, true],
  // regex metacharacters are literal
  ["a.c", "abc", false, false],
  ["(a)+[b]", "(a)+[b]", true, true],
  ["^$", "^$", true, true],
];

describe("matchesPattern", () => {
  it.each(table)("%j vs %j → cs=%s ci=%s", (pattern, value, sensitive, insensitive) => {
    expect(matchesPattern(pattern, value)).toBe(sensitive);
    expect(matchesPattern(pattern, value, { caseSensitive: true })).toBe(sensitive);
    expect(matchesPattern(pattern, value, { caseSensitive: false })).toBe(insensitive);
  });

  it("stays fast on patterns that make backtracking regexes explode", () => {
    const pattern = "*a*a*a*a*a*a*a*a*a*a*b";
    const value = "a".repeat(5000);
    const started = performance.now();
    expect(matchesPattern(pattern, value)).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
