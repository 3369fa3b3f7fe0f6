// A request body's JSON, read as the contract means it: UTF-8 text, arrays and objects nested
// at most MAX_JSON_DEPTH levels, no key twice in one object, and, once validated, no field the
// contract does not declare. Depth is counted by one iterative scan of the text BEFORE it is
// parsed: the services walk values recursively (canonical JSON, hashing, SQLite encoding), and a
// 100,000-deep array would overflow their stack after it was accepted. Duplicate keys are
// refused because parsers disagree on which one wins (JSON.parse keeps the last). Unknown fields
// are refused because zod's objects strip them silently: a misspelt or misplaced field (e.g.
// `visibility.through`) would otherwise be accepted and ignored with a 2xx.
import { validationFailure } from "../contract/failure.js";
import { pointer } from "./issues.js";

/**
 * Deepest nesting of arrays and objects a request body may have; the body itself is level 1.
 * Far above any shape the contract declares (its deepest is under 15 levels) and far below what
 * overflows a recursive walk of the value.
 */
export const MAX_JSON_DEPTH = 64;

export const DEPTH_MESSAGE = `Invalid request: the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`;

type Frame = { readonly kind: "object"; readonly keys: Set<string>; key: string | undefined; expectKey: boolean } | { readonly kind: "array"; index: number };

interface ScanResult {
  readonly tooDeep: boolean;
  /** Where the first repeated key is, as a path of keys and indexes. */
  readonly duplicate?: readonly (string | number)[];
}

/** Where the scan is inside each enclosing array and object (the innermost one excluded). */
const enclosingPath = (frames: readonly Frame[]): (string | number)[] =>
  frames.slice(0, -1).map((frame) => (frame.kind === "object" ? (frame.key ?? "") : frame.index));

/**
 * One pass over the text: the nesting depth (stopping at the first level past the bound) and the
 * first key repeated within one object. The text need not be valid JSON: JSON.parse judges that
 * afterwards, and whatever this scan says about invalid text is never reported.
 */
function scan(text: string): ScanResult {
  const frames: Frame[] = [];
  let duplicate: (string | number)[] | undefined;
  let index = 0;
  const length = text.length;
  while (index < length) {
    const char = text.charCodeAt(index);
    if (char === 0x22 /* " */) {
      let end = index + 1;
      let escaped = false;
      while (end < length) {
        const inner = text.charCodeAt(end);
        if (escaped) escaped = false;
        else if (inner === 0x5c /* \ */) escaped = true;
        else if (inner === 0x22) break;
        end += 1;
      }
      const top = frames.at(-1);
      if (top?.kind === "object" && top.expectKey) {
        const raw = text.slice(index + 1, end);
        let key: string | undefined = raw;
        if (raw.includes("\\")) {
          try {
            key = JSON.parse(`"${raw}"`) as string;
          } catch {
            key = undefined;
          }
        }
        if (key !== undefined) {
          if (top.keys.has(key) && duplicate === undefined) duplicate = [...enclosingPath(frames), key];
          top.keys.add(key);
        }
        top.key = key;
        top.expectKey = false;
      }
      index = end + 1;
      continue;
    }
    if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      if (frames.length >= MAX_JSON_DEPTH) return { tooDeep: true };
      frames.push(char === 0x7b ? { kind: "object", keys: new Set(), key: undefined, expectKey: true } : { kind: "array", index: 0 });
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      frames.pop();
    } else if (char === 0x2c /* , */) {
      const top = frames.at(-1);
      if (top?.kind === "object") top.expectKey = true;
      else if (top?.kind === "array") top.index += 1;
    }
    index += 1;
  }
  return duplicate === undefined ? { tooDeep: false } : { tooDeep: false, duplicate };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body's bytes as text; bytes that are not UTF-8 are refused, never replaced with U+FFFD. */
export function decodeBodyText(bytes: Uint8Array): string {
  try {
    // ignoreBOM keeps a leading BOM in the text, so JSON.parse refuses it as it always has.
    return utf8.decode(bytes);
  } catch {
    throw validationFailure("Invalid request: the body is not valid UTF-8");
  }
}

/** The parsed body, or a ValidationError for text nested too deep, not JSON, or with a repeated key. */
export function parseJsonBody(text: string): unknown {
  const scanned = scan(text);
  if (scanned.tooDeep) throw validationFailure(DEPTH_MESSAGE);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw validationFailure("Invalid request: the body is not valid JSON");
  }
  if (scanned.duplicate !== undefined) {
    const path = scanned.duplicate;
    throw validationFailure(`Invalid request: body (${pointer(path)}): the key ${JSON.stringify(path.at(-1))} is given more than once`);
  }
  return value;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The path of the first field of `raw` that validation dropped from `parsed`: zod's objects keep
 * only their declared keys (records and `unknown` keep everything), so a key of the input missing
 * from the output is one the contract does not declare there. Unions of objects in request
 * bodies are all discriminated (a test in tests/fuzz holds the contract to that), so the member
 * zod chose is the only one that could have matched. Iterative; `raw` is at most
 * MAX_JSON_DEPTH deep.
 */
export function firstUnknownField(raw: unknown, parsed: unknown): (string | number)[] | undefined {
  const pending: { raw: unknown; parsed: unknown; path: (string | number)[] }[] = [{ raw, parsed, path: [] }];
  while (pending.length > 0) {
    const next = pending.pop()!;
    // `unknown` fields come back as the very value given: nothing in them is the contract's.
    if (next.raw === next.parsed) continue;
    if (Array.isArray(next.raw) && Array.isArray(next.parsed)) {
      for (let index = next.raw.length - 1; index >= 0; index--) pending.push({ raw: next.raw[index], parsed: next.parsed[index], path: [...next.path, index] });
      continue;
    }
    if (!isPlainObject(next.raw) || !isPlainObject(next.parsed)) continue;
    const keys = Object.keys(next.raw);
    for (const key of keys) if (!Object.hasOwn(next.parsed, key)) return [...next.path, key];
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]!;
      pending.push({ raw: next.raw[key], parsed: next.parsed[key], path: [...next.path, key] });
    }
  }
  return undefined;
}
