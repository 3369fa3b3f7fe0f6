// `json`: plain JSON values and JSON Schema documents as plugins write them.

/**
 * A plain JSON object. Members may be typed `undefined` so optional fields type-check, but a
 * value sent to Core must omit such members: Core rejects a member whose value is `undefined`.
 */
export interface JsonObject {
  readonly [key: string]: JsonValue | undefined;
}

/**
 * Any JSON value. Core rejects values that are not plain JSON, such as `undefined`, `NaN`,
 * `Infinity`, functions, and class instances like `Date`.
 */
export type JsonValue = string | number | boolean | null | JsonObject | readonly JsonValue[];

/**
 * A JSON Schema document written as plain data. Where a plugin declares one (a tool's
 * `inputSchema`, a journal kind's `dataSchema`) the root must be `type: 'object'` and every schema
 * in it may use only: `$comment`, `$defs`, `$ref` (local `#/...`), `allOf`, `anyOf`, `oneOf`,
 * `not`, `if`, `then`, `else`, `type`, `const`, `enum`, `title`, `description`, `properties`,
 * `required`, `additionalProperties`, `propertyNames`, `dependentRequired`, `dependentSchemas`,
 * `minProperties`, `maxProperties`, `prefixItems`, `items`, `contains`, `minContains`,
 * `maxContains`, `minItems`, `maxItems`, `uniqueItems`, `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength` (the root may carry `$schema`). Any
 * other keyword, such as `pattern`, `format`, `default` or `examples`, rejects the declaration.
 */
export type JsonSchema = JsonObject;
