// Pattern matching for permission rules: full-string globs where `*` matches any run of
// characters (including `/` and the empty run) and `?` exactly one character (one Unicode code
// point). There is no escape syntax: `*` and `?` in a pattern are always wildcards.
//
// Two normalisations from the reference apply on both sides before matching:
// - backslashes are treated as `/`;
// - a pattern ending in ` *` also matches the value without that suffix, so `git status *`
//   matches `git status` as well as `git status --short`.
//
// The matcher is the iterative two-pointer wildcard algorithm (backtracking only to the last
// `*`), so its cost is O(pattern × value) in the worst case and never exponential, whatever
// a configured pattern looks like.

export interface MatchOptions {
  /** Compare case-sensitively. Defaults to `true`. */
  readonly caseSensitive?: boolean | undefined;
}

function normalize(text: string, caseSensitive: boolean): string[] {
  const slashed = text.replaceAll("\\", "/");
  return Array.from(caseSensitive ? slashed : slashed.toLowerCase());
}

function globMatch(pattern: readonly string[], value: readonly string[]): boolean {
  let p = 0;
  let v = 0;
  let star = -1;
  let mark = 0;
  while (v < value.length) {
    const c = pattern[p];
    if (c === "*") {
      star = p++;
      mark = v;
    } else if (c !== undefined && (c === "?" || c === value[v])) {
      p++;
      v++;
    } else if (star !== -1) {
      p = star + 1;
      v = ++mark;
    } else {
      return false;
    }
  }
  while (pattern[p] === "*") p++;
  return p === pattern.length;
}

/** Whether `value` matches the whole `pattern`. */
export function matchesPattern(pattern: string, value: string, options: MatchOptions = {}): boolean {
  const caseSensitive = options.caseSensitive ?? true;
  const p = normalize(pattern, caseSensitive);
  const v = normalize(value, caseSensitive);
  if (globMatch(p, v)) return true;
  // `git status *` also matches `git status`.
  const n = p.length;
  if (n >= 2 && p[n - 1] === "*" && p[n - 2] === " ") return globMatch(p.slice(0, n - 2), v);
  return false;
}
