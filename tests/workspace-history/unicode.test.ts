// The generated simple case folding table and the word-character test, checked against Unicode
// properties Node's ICU exposes independently of the table: ECMAScript `/u` + `/i` matching
// (Canonicalize = CaseFolding.txt C + S), Changes_When_Casemapped, General_Category and
// Join_Control.
import { describe, expect, it } from "vitest";
import { literalMatches } from "../../services/core/history/search.js";
import { SIMPLE_CASE_FOLDING, UNICODE_VERSION, foldCase, foldCodePoint, isWordCodePoint } from "../../services/storage/index.js";

const all = function* (): Generator<number> {
  for (let cp = 0; cp <= 0x10ffff; cp += 1) if (cp < 0xd800 || cp > 0xdfff) yield cp;
};
const ch = (cp: number): string => String.fromCodePoint(cp);
const esc = (cp: number): string => `\\u{${cp.toString(16)}}`;
const sameUnderIU = (a: number, b: number): boolean => new RegExp(`^${esc(a)}$`, "iu").test(ch(b));
const single = (s: string): number | undefined => ([...s].length === 1 ? s.codePointAt(0) : undefined);

describe("simple case folding table", () => {
  it("was generated from this Node's Unicode version", () => {
    expect(UNICODE_VERSION).toBe(process.versions.unicode);
    expect(SIMPLE_CASE_FOLDING.length % 2).toBe(0);
  });

  it("maps every code point into its /iu class, idempotently, and only cased code points move", () => {
    const casemapped = /\p{Changes_When_Casemapped}/u;
    const failures: string[] = [];
    for (const cp of all()) {
      const folded = foldCodePoint(cp);
      if (folded === cp) continue;
      if (!sameUnderIU(cp, folded)) failures.push(`U+${cp.toString(16)} → U+${folded.toString(16)} not /iu-equal`);
      if (foldCodePoint(folded) !== folded) failures.push(`U+${cp.toString(16)} fold not idempotent`);
      if (!casemapped.test(ch(cp))) failures.push(`U+${cp.toString(16)} moves without Changes_When_Casemapped`);
      if ((cp > 0xffff) !== (folded > 0xffff)) failures.push(`U+${cp.toString(16)} changes UTF-16 width`);
    }
    expect(failures).toEqual([]);
  });

  it("gives /iu-equal case mappings one folding (completeness over every single-code-point lower/upper mapping)", () => {
    const failures: string[] = [];
    for (const cp of all()) {
      for (const mapped of [single(ch(cp).toLowerCase()), single(ch(cp).toUpperCase())]) {
        if (mapped === undefined || mapped === cp) continue;
        const equal = sameUnderIU(cp, mapped);
        if (equal !== (foldCodePoint(cp) === foldCodePoint(mapped))) failures.push(`U+${cp.toString(16)} / U+${mapped.toString(16)}: /iu ${equal}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("agrees with CaseFolding.txt's well-known C, S and T/F-only entries", () => {
    expect(foldCase("\u212A")).toBe("k"); // KELVIN SIGN, C
    expect(foldCase("\u017F")).toBe("s"); // LONG S, C
    expect(foldCase("\u03C2")).toBe("\u03C3"); // FINAL SIGMA, C
    expect(foldCase("\u1E9E")).toBe("\u00DF"); // CAPITAL SHARP S, S (F would be "ss")
    expect(foldCase("\u00DF")).toBe("\u00DF"); // ß has only an F entry
    expect(foldCase("\u0130")).toBe("\u0130"); // İ has only F and T entries
    expect(foldCase("\u0131")).toBe("\u0131"); // ı has none
    expect(foldCase("\uAB70")).toBe("\u13A0"); // Cherokee folds to the uppercase, C
    expect(foldCase("\u1FD3")).toBe("\u0390"); // S, Unicode 15
    expect(foldCase("\u{10400}")).toBe("\u{10428}"); // Deseret, astral
  });
});

describe("word characters", () => {
  it("are exactly letters, marks, decimal digits, connector punctuation and join controls", () => {
    const byCategory = /[\p{Lu}\p{Ll}\p{Lt}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{Me}\p{Nd}\p{Pc}]|\p{Join_Control}/u;
    const failures: number[] = [];
    for (const cp of all()) if (isWordCodePoint(cp) !== byCategory.test(ch(cp))) failures.push(cp);
    expect(failures).toEqual([]);
    for (const word of ["a", "é", "\u0301", "٣", "_", "‿", "\u200C", "\u200D", "字"]) expect(isWordCodePoint(word.codePointAt(0)!)).toBe(true);
    for (const other of ["-", " ", ".", "½", "Ⅻ", "😀", "\u00A0"]) expect(isWordCodePoint(other.codePointAt(0)!)).toBe(false);
  });

  it("bound whole-word matches on both sides, across surrogate pairs", () => {
    const find = (text: string, query: string, wholeWord = true, caseSensitive = false) => [...literalMatches(text, { query, wholeWord, caseSensitive })];
    expect(find("a𝐀b 𝐀", "𝐀")).toEqual([[5, 7]]); // U+1D400 is a letter: "a𝐀b" has no word boundary
    expect(find("x😀y", "😀")).toEqual([]); // the letters touch it
    expect(find("😀x😀", "x")).toEqual([[2, 3]]); // an emoji is not a word character
    expect(find("item٣ item", "item")).toEqual([[6, 10]]);
    expect(find("Straße", "STRASSE", false)).toEqual([]);
    expect(find("𐐀𐐨", "𐐨", false)).toEqual([
      [0, 2],
      [2, 4],
    ]);
    expect(find("𐐀𐐨", "𐐨", false, true)).toEqual([[2, 4]]);
  });
});
