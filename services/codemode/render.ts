// The text the model reads for a finished execution (the reference's `renderResult`): a string
// result as itself, anything else as indented JSON, then the console output.

/** Renders a successful execution's value and console entries. */
export function renderResult(outcome: { readonly value: unknown; readonly logs: readonly string[] }): string {
  const { value, logs } = outcome;
  const rendered = value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (logs.length === 0) return rendered === "" && value === undefined ? "(no return value)" : rendered;
  const console = `Console:\n${logs.join("\n")}`;
  return rendered === "" && value === undefined ? console : `${rendered}\n\n${console}`;
}
