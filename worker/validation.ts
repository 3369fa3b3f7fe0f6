// Tool input validation that generates no code, for workerd: Ajv compiles each schema into a
// function from a string, which workerd allows only while the Worker's global scope is evaluated
// ("Code generation from strings disallowed for this context" afterwards). Tools whose schemas
// arrive later (an MCP server's, a tool built per object) are checked by @cfworker/json-schema's
// interpreter instead (draft 2020-12, every error), installed here at module load through the
// seam in services/tools/validate.ts — and so is a provider definition's `optionsSchema`, checked
// when an embedding host is made (services/providers/native.ts's seam).
import { Validator, type OutputUnit } from "@cfworker/json-schema";
import { useOptionsInterpreter } from "../services/providers/native.js";
import { useSchemaInterpreter } from "../services/tools/validate.js";

/** `input/path …` as the Ajv-backed messages locate a problem (a JSON pointer into the input). */
function describe(unit: OutputUnit): string {
  const pointer = unit.instanceLocation.replace(/^#/, "");
  return `${pointer === "" ? "input" : `input${pointer}`}: ${unit.error}`;
}

useSchemaInterpreter((schema) => {
  const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
  return (input) => {
    const result = validator.validate(input);
    return result.valid ? [] : [...new Set(result.errors.map(describe))];
  };
});

// Keywords whose error only says a sub-schema failed: the problem named is the one under it.
const WRAPPERS = new Set(["properties", "patternProperties", "items", "prefixItems", "contains", "allOf", "$ref", "$dynamicRef", "false", "dependentSchemas", "unevaluatedProperties"]);

useOptionsInterpreter((schema) => {
  const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
  return (options) => {
    const result = validator.validate(options);
    if (result.valid) return undefined;
    // As Ajv reports it: one problem, located by a JSON pointer into the options; never the value.
    const unit = result.errors.find((candidate) => !WRAPPERS.has(candidate.keyword)) ?? result.errors[0]!;
    return { pointer: unit.instanceLocation.replace(/^#/, ""), message: unit.error };
  };
});
