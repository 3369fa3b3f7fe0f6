// One configuration file: read it, parse it as JSON and validate it on its own.
import { readFileSync } from "node:fs";
import { configUnreadable, type ConfigResult } from "./errors.js";
import type { Config } from "./types.js";
import { validateConfig } from "./validate.js";

/** Reads, parses and validates one file (`file` should be absolute: errors name it as given). */
export function readConfigFile(file: string): ConfigResult<Config> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    return { ok: false, error: configUnreadable(file, `cannot read the file: ${(error as Error).message}`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    return { ok: false, error: configUnreadable(file, `not valid JSON: ${(error as Error).message}`) };
  }
  return validateConfig(value, file);
}
