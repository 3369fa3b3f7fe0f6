// The `/workspace` store's glob matcher (store.ts `glob`), on canonical paths of any file home.
/** One step of a glob: a literal character, `?`, `*` (within one name), `**` (anything), `**` then `/` (whole names, also none). */
type GlobToken = { readonly kind: "char"; readonly char: string } | { readonly kind: "one" | "name" | "any" | "names" };

function globTokens(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "*" && pattern[index + 1] === "*") {
      const slash = pattern[index + 2] === "/";
      tokens.push({ kind: slash ? "names" : "any" });
      index += slash ? 2 : 1;
      // Repeats add nothing but work: `**` then `/` again and again is one, `**` then more `*` is `**`.
      if (slash) while (pattern.startsWith("**/", index + 1)) index += 3;
      else while (pattern[index + 1] === "*") index += 1;
    } else if (char === "*") tokens.push({ kind: "name" });
    else if (char === "?") tokens.push({ kind: "one" });
    else tokens.push({ kind: "char", char });
  }
  return tokens;
}

/**
 * Glob syntax: `**` any depth (also none), `*` within one name, `?` one character; the rest
 * literal. Matched by simulating the pattern as a set of positions — time linear in the path
 * times the pattern, never the backtracking a regular expression of many `*` takes (a model's
 * `*a*a*a*a*a*a*b` over a long name would hold the whole server object).
 */
export function globMatcher(pattern: string): (path: string) => boolean {
  const tokens = globTokens(pattern);
  const size = tokens.length;
  const close = (states: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> => {
    for (let state = 0; state < size; state++) {
      if (states[state] === 1 && tokens[state]!.kind !== "char" && tokens[state]!.kind !== "one") states[state + 1] = 1;
    }
    return states;
  };
  return (path) => {
    let current = new Uint8Array(size + 1);
    current[0] = 1;
    close(current);
    for (const char of path) {
      const next = new Uint8Array(size + 1);
      let alive = false;
      for (let state = 0; state < size; state++) {
        if (current[state] !== 1) continue;
        const token = tokens[state]!;
        if (token.kind === "char") {
          if (token.char === char) next[state + 1] = 1;
        } else if (token.kind === "one") {
          if (char !== "/") next[state + 1] = 1;
        } else if (token.kind === "name") {
          if (char !== "/") next[state] = 1;
        } else if (token.kind === "any") next[state] = 1;
        else {
          next[state] = 1;
          if (char === "/") next[state + 1] = 1;
        }
      }
      for (let state = 0; state <= size; state++) if (next[state] === 1) alive = true;
      if (!alive) return false;
      current = close(next);
    }
    return current[size] === 1;
  };
}
