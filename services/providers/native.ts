// Native provider definitions (`defineProvider` / `makeCompatibleProviderDefinition`, exported by
// `ze-harness/plugin` and `ze-harness/sdk`; handed over as the SDK's `providerDefinitions`, keyed
// by a configured provider ID) compiled into the provider set:
//
// - A compatible definition is data: it is checked with the very schema of a config
//   `providers.<id>.definition` (definition.ts), the config entry's own `definition` fields
//   override it field by field, and its models stream through Ze's Chat, Responses and Messages
//   adapters — exactly like a declarative config provider.
// - Any other definition is code: the entry's `options` (without `apiKey`) are validated once
//   against its `optionsSchema`; `filterModel` / `correctModel` shape its catalog models; its
//   credential (when it declares `credentials`) resolves like any provider's and reaches
//   `acquireModel` as a `Redacted`; requests stream through `adapters/native.ts`.
// - A `providerDefinitions` key the configuration does not list fails startup (`ProviderInvalid`).
import { createRequire } from "node:module";
import type { ProviderDefinition } from "../../plugin/provider.js";
import type { JsonValue, ProviderEntry } from "../config/types.js";
import { checkDefinition } from "./definition.js";
import { providerInvalid, type ProviderResult } from "./errors.js";
import type { ResolvedModel, ResolvedProvider } from "./registry.js";

export type NativeProviderDefinition = ProviderDefinition;

/** What a model of a code-defined native provider carries to the adapter. */
export interface NativeBinding {
  readonly definition: NativeProviderDefinition;
  /** The validated `options` (without `apiKey`). */
  readonly options: { readonly [key: string]: JsonValue };
  /** The per-model API root or provider base URL, when one is configured. */
  readonly apiRoot: string | undefined;
}

/** A base URL for a native provider that configured none: never requested (its adapter is the definition). */
export const NATIVE_PLACEHOLDER_BASE_URL = "http://native-provider.invalid";

const DEFINITION_ID = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** Checks the `providerDefinitions` map against the configured entries. */
export function checkNativeDefinitions(
  definitions: Readonly<Record<string, unknown>> | undefined,
  entries: Readonly<Record<string, ProviderEntry>>,
): ProviderResult<ReadonlyMap<string, NativeProviderDefinition>> {
  const checked = new Map<string, NativeProviderDefinition>();
  for (const [id, value] of Object.entries(definitions ?? {})) {
    if (!Object.hasOwn(entries, id)) {
      return { ok: false, error: providerInvalid(id, "", "providerDefinitions names a provider the providers configuration does not list (add it to providers)") };
    }
    const problem = definitionProblem(value);
    if (problem !== undefined) return { ok: false, error: providerInvalid(id, "", `the provider definition is not usable: ${problem}`) };
    checked.set(id, value as NativeProviderDefinition);
  }
  return { ok: true, value: checked };
}

function definitionProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "it is not a defineProvider(...) value";
  if (typeof value["definitionId"] !== "string" || !DEFINITION_ID.test(value["definitionId"])) return "definitionId must match /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/";
  if (typeof value["version"] !== "string" || value["version"] === "") return "version must be a non-empty string";
  if (typeof value["acquireModel"] !== "function") return "acquireModel must be a function";
  for (const name of ["filterModel", "correctModel"]) {
    if (value[name] !== undefined && typeof value[name] !== "function") return `${name} must be a function`;
  }
  for (const name of ["optionsSchema", "requestOptionsSchema"]) {
    if (value[name] !== undefined && !isObject(value[name])) return `${name} must be a JSON Schema object`;
  }
  const credentials = value["credentials"];
  if (credentials !== undefined && (!isObject(credentials) || (credentials["environment"] !== undefined && !(Array.isArray(credentials["environment"]) && credentials["environment"].every((name) => typeof name === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)))))) {
    return "credentials.environment must be a list of environment variable names";
  }
  if (value["compatible"] !== undefined && !isObject(value["compatible"])) return "compatible must be an object";
  return undefined;
}

/**
 * The declarative definition a compatible native definition stands for, with the config entry's
 * own `definition` fields over it; checked like a config definition.
 */
export function compatibleDefinition(id: string, native: NativeProviderDefinition, configured: unknown): ProviderResult<unknown> {
  const { definitionId: _id, version: _version, ...data } = native.compatible as unknown as Record<string, unknown>;
  const merged = { ...data, ...(isObject(configured) ? configured : {}) };
  const checked = checkDefinition(merged);
  if (!checked.ok) return { ok: false, error: providerInvalid(id, `/definition${checked.path}`, `${checked.message} (in the compatible definition "${native.definitionId}" or the configured definition)`) };
  return { ok: true, value: merged };
}

/** Is this the definition of a code-defined (not compatible) native provider? */
export const isCustomNative = (native: NativeProviderDefinition | undefined): native is NativeProviderDefinition => native !== undefined && native.compatible === undefined;

/** An `optionsSchema` check that generates no code: the first problem (a JSON pointer into the options and what it must be), or undefined when they pass. */
export type OptionsInterpreter = (schema: object) => (options: unknown) => { readonly pointer: string; readonly message: string } | undefined;
let interpreter: OptionsInterpreter | undefined;
/**
 * workerd refuses Ajv's generated code after the Worker's startup, so the Worker installs an
 * interpreting check (worker/validation.ts) used for every `optionsSchema` there; Node never sets one.
 */
export function useOptionsInterpreter(next: OptionsInterpreter): void {
  interpreter = next;
}

/** For a code-defined provider: the entry's options (without `apiKey`), validated against `optionsSchema`. */
export function nativeOptions(id: string, native: NativeProviderDefinition, options: { readonly [key: string]: JsonValue } | undefined): ProviderResult<{ readonly [key: string]: JsonValue }> {
  const { apiKey: _apiKey, ...rest } = options ?? {};
  if (native.optionsSchema === undefined) return { ok: true, value: rest };
  if (interpreter !== undefined) {
    let check;
    try {
      check = interpreter(native.optionsSchema);
    } catch {
      return { ok: false, error: providerInvalid(id, "", `the optionsSchema of provider definition "${native.definitionId}" is not a valid JSON Schema`) };
    }
    const problem = check(rest);
    return problem === undefined ? { ok: true, value: rest } : { ok: false, error: providerInvalid(id, `/options${problem.pointer}`, problem.message) };
  }
  let validate;
  try {
    // Loaded here, not at import: only a code-defined provider with an optionsSchema needs Ajv.
    const { Ajv2020 } = createRequire(import.meta.url)("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
    validate = new Ajv2020({ allErrors: false, strict: false }).compile(native.optionsSchema);
  } catch {
    return { ok: false, error: providerInvalid(id, "", `the optionsSchema of provider definition "${native.definitionId}" is not a valid JSON Schema`) };
  }
  if (validate(rest)) return { ok: true, value: rest };
  const issue = validate.errors?.[0];
  // Ajv's message names the expectation, never the value.
  return { ok: false, error: providerInvalid(id, `/options${issue?.instancePath ?? ""}`, issue?.message ?? "does not match the provider's optionsSchema") };
}

/** `fn(model)` as a checked result: the callbacks are trusted but must be synchronous and well-typed. */
function call<T>(id: string, name: string, run: () => T, valid: (value: unknown) => boolean): ProviderResult<T> {
  try {
    const value = run();
    if (valid(value)) return { ok: true, value };
  } catch {
    return { ok: false, error: providerInvalid(id, "", `${name} of the provider definition threw`) };
  }
  return { ok: false, error: providerInvalid(id, "", `${name} of the provider definition must return synchronously a ${name === "filterModel" ? "boolean" : "correction object"}`) };
}

const count = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;

/**
 * A compiled provider bound to a code-defined definition: its models filtered and corrected,
 * each carrying the binding the native adapter runs, authenticated only when it declares credentials.
 */
export function bindNative(provider: ResolvedProvider, native: NativeProviderDefinition, options: { readonly [key: string]: JsonValue }): ProviderResult<ResolvedProvider> {
  const id = provider.id;
  const models: ResolvedModel[] = [];
  for (const model of provider.models) {
    const view = { modelId: model.id, upstreamModelId: model.upstreamId, displayName: model.displayName, protocol: model.protocol, limits: { ...model.limits } };
    if (native.filterModel !== undefined) {
      const kept = call(id, "filterModel", () => native.filterModel!(view), (value) => typeof value === "boolean");
      if (!kept.ok) return kept;
      if (!kept.value) continue;
    }
    let corrected = model;
    if (native.correctModel !== undefined) {
      const correction = call(id, "correctModel", () => native.correctModel!(view), isObject);
      if (!correction.ok) return correction;
      const { upstreamModelId, displayName, limits } = correction.value;
      if ((upstreamModelId !== undefined && (typeof upstreamModelId !== "string" || upstreamModelId === "")) || (displayName !== undefined && (typeof displayName !== "string" || displayName === ""))) {
        return { ok: false, error: providerInvalid(id, "", `correctModel of the provider definition returned an invalid correction for "${model.id}"`) };
      }
      if (limits !== undefined && (!isObject(limits) || (limits.contextUnits !== undefined && !count(limits.contextUnits)) || (limits.outputUnits !== undefined && !count(limits.outputUnits)))) {
        return { ok: false, error: providerInvalid(id, "", `correctModel of the provider definition returned invalid limits for "${model.id}"`) };
      }
      corrected = {
        ...model,
        ...(upstreamModelId !== undefined ? { upstreamId: upstreamModelId } : {}),
        ...(displayName !== undefined ? { displayName } : {}),
        ...(limits !== undefined ? { limits: { ...model.limits, ...(limits.contextUnits !== undefined ? { contextUnits: limits.contextUnits } : {}), ...(limits.outputUnits !== undefined ? { outputUnits: limits.outputUnits } : {}) } } : {}),
      };
    }
    const apiRoot = apiRootOf(corrected.endpoint, provider.routes[corrected.protocol]);
    const authentication = native.credentials !== undefined ? { kind: "bearer" as const } : { kind: "none" as const };
    models.push({ ...corrected, authentication, native: { definition: native, options, apiRoot } });
  }
  return {
    ok: true,
    value: {
      ...provider,
      authentication: native.credentials !== undefined ? { kind: "bearer" } : { kind: "none" },
      environment: [...(native.credentials?.environment ?? provider.environment)],
      discovery: false,
      models,
    },
  };
}

function apiRootOf(endpoint: string, route: string): string | undefined {
  if (endpoint.startsWith(NATIVE_PLACEHOLDER_BASE_URL)) return undefined;
  return endpoint.endsWith(`/${route}`) ? endpoint.slice(0, -route.length - 1) : endpoint;
}

/**
 * The config entry the declarative compiler sees for a native provider: a compatible definition
 * merged under the entry's own `definition`; for a code-defined one, only `apiKey` and the timeout
 * of its options (the rest belongs to its `optionsSchema`) and, when the catalog does not know the
 * provider, the protocol (default chat) and a placeholder base URL it never requests.
 */
export function prepareNativeEntry(id: string, entry: ProviderEntry, native: NativeProviderDefinition | undefined, known: boolean): ProviderResult<ProviderEntry> {
  if (native === undefined) return { ok: true, value: entry };
  const config = typeof entry === "boolean" ? { enabled: entry } : entry;
  if (native.compatible !== undefined) {
    const merged = compatibleDefinition(id, native, config.definition);
    if (!merged.ok) return merged;
    return { ok: true, value: { ...config, definition: merged.value as ProviderEntryDefinition } };
  }
  const picked: Record<string, JsonValue> = {};
  for (const key of ["apiKey", "timeout", "requestTimeoutMs"]) if (config.options?.[key] !== undefined) picked[key] = config.options[key]!;
  const definition = isObject(config.definition) ? config.definition : {};
  const placed = known ? definition : { ...definition, protocol: definition["protocol"] ?? "chat", baseURL: definition["baseURL"] ?? NATIVE_PLACEHOLDER_BASE_URL };
  return { ok: true, value: { ...config, options: picked, definition: placed as ProviderEntryDefinition } };
}

type ProviderEntryDefinition = Exclude<ProviderEntry, boolean>["definition"];

/** Compiles one entry (`compile`: the declarative compiler), bound to its native definition when it has one. */
export function compileWithNative(
  id: string,
  entry: ProviderEntry,
  native: NativeProviderDefinition | undefined,
  known: boolean,
  compile: (entry: ProviderEntry) => ProviderResult<ResolvedProvider>,
): ProviderResult<ResolvedProvider> {
  const prepared = prepareNativeEntry(id, entry, native, known);
  if (!prepared.ok) return prepared;
  const result = compile(prepared.value);
  if (!result.ok || !isCustomNative(native)) return result;
  const options = nativeOptions(id, native, typeof entry === "object" ? entry.options : undefined);
  return options.ok ? bindNative(result.value, native, options.value) : options;
}
