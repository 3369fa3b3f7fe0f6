// Typed configuration failures. Plain values with a literal `_tag`, returned (never thrown)
// inside a `ConfigResult`, so the caller decides how to surface them (CLI message, startup
// failure, a reload that keeps the previous generation).

/** A file parsed as JSON but does not match the configuration schema. */
export interface ConfigInvalid {
  readonly _tag: "ConfigInvalid";
  /** The absolute path of the offending file. */
  readonly file: string;
  /** A JSON pointer (RFC 6901) to the offending value or key, such as `/providers/openai/options`; `""` is the whole document. */
  readonly path: string;
  readonly message: string;
}

/** A file could not be read or is not JSON. */
export interface ConfigUnreadable {
  readonly _tag: "ConfigUnreadable";
  /** The absolute path of the offending file. */
  readonly file: string;
  readonly message: string;
}

export type ConfigError = ConfigInvalid | ConfigUnreadable;

/** Success with a value, or one typed error (never both, never a partial value). */
export type ConfigResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ConfigError };

export const configInvalid = (file: string, path: string, message: string): ConfigInvalid => ({
  _tag: "ConfigInvalid",
  file,
  path,
  message,
});

export const configUnreadable = (file: string, message: string): ConfigUnreadable => ({
  _tag: "ConfigUnreadable",
  file,
  message,
});

/** One line for people: `file: /json/pointer: message`. */
export function describeConfigError(error: ConfigError): string {
  if (error._tag === "ConfigUnreadable") return `${error.file}: ${error.message}`;
  return `${error.file}: ${error.path === "" ? "(document)" : error.path}: ${error.message}`;
}
