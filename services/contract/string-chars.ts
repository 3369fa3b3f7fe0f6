// How many characters the strings inside a value hold: what a bound on memory counts for a model
// response's reasoning data (services/providers/wire.ts) and for a watch stream's queued events
// (services/core/events). Walked with a stack, not recursion, so a deep value cannot overflow it.

/** The characters of every string in `value` (keys not counted). */
export function stringChars(value: unknown): number {
  let chars = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next === "string") chars += next.length;
    else if (typeof next === "object" && next !== null) {
      if (Array.isArray(next)) for (const item of next) pending.push(item);
      else for (const key in next) pending.push((next as Record<string, unknown>)[key]);
    }
  }
  return chars;
}
