// The TUI's own wrapping of a running Turn's text (so Ink never re-wraps it per frame): rows fit
// the width, words stay whole unless longer than a row, other text is cut by length, and the
// tail keeps the last rows after a note of how many are cut.
import { describe, expect, it } from "vitest";
import { tailRows, wrapLine } from "../../cli/tui/wrap.js";

describe("wrapLine", () => {
  it("breaks printable ASCII at spaces, every row within the width", () => {
    const rows = wrapLine("the quick brown fox jumps over the lazy dog", 10);
    expect(rows).toEqual(["the quick", "brown fox", "jumps over", "the lazy", "dog"]);
    expect(rows.every((row) => row.length <= 10)).toBe(true);
  });

  it("cuts a word longer than a row, and keeps a line that fits as it is", () => {
    expect(wrapLine("ab abcdefghijkl cd", 5)).toEqual(["ab", "abcde", "fghij", "kl cd"]);
    expect(wrapLine("fits  exactly", 13)).toEqual(["fits  exactly"]);
  });

  it("cuts other text (wide or combining characters) by length and leaves the rest to Ink", () => {
    expect(wrapLine("héllo wörld again", 6)).toEqual(["héllo ", "wörld ", "again"]);
  });
});

describe("tailRows", () => {
  it("returns every row when they fit, else the last rows after a note of the cut", () => {
    expect(tailRows("one two\nthree", 5, 4)).toBe("one\ntwo\nthre\ne");
    const text = Array.from({ length: 12 }, (_, index) => `line${index + 1}`).join("\n");
    const tail = tailRows(text, 3, 80);
    expect(tail).toBe("… 9 earlier lines (all of it prints when the Turn settles)\nline10\nline11\nline12");
  });
});
