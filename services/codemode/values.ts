// Values cross the sandbox boundary as JSON text, checked against the reference's data limits on
// this side in both directions: a tool's result before it enters the script, and what the script
// hands out (tool inputs, the return value) after it leaves. The sandbox checks the same limits
// first, but the script can tamper with anything in there; this check is the one that counts.
import { codeModeError, type CodeModeError } from "./errors.js";
import { MAX_ARRAY_LENGTH, MAX_STRING_LENGTH, MAX_VALUE_DEPTH } from "./limits.js";

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: CodeModeError };

/** `what` names the value in messages, e.g. "the return value" or "the result of tools.read". */
function check(value: unknown, what: string): CodeModeError | undefined {
  const visit = (node: unknown, depth: number, path: string): CodeModeError | undefined => {
    if (typeof node === "string") {
      if (node.length > MAX_STRING_LENGTH) {
        return codeModeError("string_too_long", `A string in ${what} (at ${path}) is ${node.length} code units long; the limit is ${MAX_STRING_LENGTH}.`);
      }
      return undefined;
    }
    if (typeof node !== "object" || node === null) return undefined;
    if (depth > MAX_VALUE_DEPTH) {
      return codeModeError("value_too_deep", `${capitalize(what)} nests deeper than ${MAX_VALUE_DEPTH} levels (at ${path}).`);
    }
    if (Array.isArray(node)) {
      if (node.length > MAX_ARRAY_LENGTH) {
        return codeModeError("array_too_long", `An array in ${what} (at ${path}) has ${node.length} elements; the limit is ${MAX_ARRAY_LENGTH}.`);
      }
      for (let i = 0; i < node.length; i++) {
        const found = visit(node[i], depth + 1, `${path}[${i}]`);
        if (found) return found;
      }
      return undefined;
    }
    for (const [key, member] of Object.entries(node)) {
      const found = visit(member, depth + 1, `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`);
      if (found) return found;
    }
    return undefined;
  };
  return visit(value, 1, "$");
}

const capitalize = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A host value as JSON text for the sandbox (`undefined` stays `undefined`). Checked first, so a
 * cycle fails as too deep before `JSON.stringify` sees it.
 */
export function encodeValue(value: unknown, what: string): Checked<string | undefined> {
  const problem = check(value, what);
  if (problem) return { ok: false, error: problem };
  try {
    return { ok: true, value: JSON.stringify(value) };
  } catch (error) {
    return { ok: false, error: codeModeError("invalid_value", `${capitalize(what)} is not JSON data: ${error instanceof Error ? error.message : String(error)}`) };
  }
}

/** JSON text from the sandbox as a checked host value (`undefined` for none). */
export function decodeValue(json: string | undefined, what: string): Checked<unknown> {
  if (json === undefined) return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, error: codeModeError("invalid_value", `${capitalize(what)} is not JSON data.`) };
  }
  const problem = check(value, what);
  return problem ? { ok: false, error: problem } : { ok: true, value };
}
