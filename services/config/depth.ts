// The nesting bound of a configuration document. Validation (Ajv's generated code), the layered
// merge and the plugins' option copies all recurse once per level, so a file nested thousands of
// levels deep would overflow the stack ("Maximum call stack size exceeded", naming nothing). The
// document is measured first, without recursion, and a deeper one is a ConfigInvalid naming the
// file and the JSON pointer of the first value past the bound.

/** Deepest nesting of objects and arrays a configuration document may have (the document itself is level 1). */
export const MAX_CONFIG_DEPTH = 64;

/** RFC 6901 escaping of one reference token. */
const token = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");

/** The JSON pointer of the first object or array nested deeper than `max`, or undefined. Iterative: any depth is safe. */
export function tooDeep(value: unknown, max: number = MAX_CONFIG_DEPTH): string | undefined {
  const stack: { readonly value: unknown; readonly depth: number; readonly pointer: string }[] = [{ value, depth: 1, pointer: "" }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value !== "object" || next.value === null) continue;
    if (next.depth > max) return next.pointer;
    const entries: [string, unknown][] = Array.isArray(next.value) ? next.value.map((item, index) => [String(index), item]) : Object.entries(next.value);
    // Pushed in reverse, so the first too-deep value in document order is the one reported.
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, child] = entries[index]!;
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth: next.depth + 1, pointer: `${next.pointer}/${token(key)}` });
    }
  }
  return undefined;
}
