// Query parameters of the history pages (compactions, the plugin journal): the contract types
// them as strings, so counts and positions are parsed here with the same wording as the Turn
// page's (`query.NAME: …`).
import { validationFailure } from "../../contract/failure.js";

/** Largest page a history read returns, and the default. */
export const MAX_PAGE = 100;
export const DEFAULT_PAGE = 50;

export function parseCount(value: string | undefined, name: string, minimum: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw validationFailure(`Invalid request: query.${name}: must be a non-negative integer`);
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw validationFailure(`Invalid request: query.${name}: ${value} is too large (at most ${Number.MAX_SAFE_INTEGER})`);
  if (parsed < minimum) throw validationFailure(`Invalid request: query.${name}: must be at least ${minimum}`);
  return parsed;
}

/** A page size: at least 1, `DEFAULT_PAGE` when absent, at most `MAX_PAGE`. */
export const pageLimit = (value: string | undefined): number => Math.min(parseCount(value, "limit", 1) ?? DEFAULT_PAGE, MAX_PAGE);

/**
 * A two-part position (`primary`, `secondary`): the secondary part only with the primary one;
 * the primary alone means the whole of it (`wholeSecondary`).
 */
export function parsePosition(
  query: Record<string, string | undefined> | undefined,
  primary: string,
  secondary: string,
  wholeSecondary: number,
): [number, number] | undefined {
  const first = parseCount(query?.[primary], primary, 0);
  const second = parseCount(query?.[secondary], secondary, 0);
  if (first === undefined) {
    if (second !== undefined) throw validationFailure(`Invalid request: query.${secondary}: requires query.${primary}`);
    return undefined;
  }
  return [first, second ?? wholeSecondary];
}
