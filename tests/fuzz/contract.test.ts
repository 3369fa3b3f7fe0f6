// The contract fuzzer (tools/fuzz/) in CI: a fixed seed, a bounded number of requests against a
// real in-process harness, and zero failures — no 500, only declared statuses, every body valid
// against its declared schema, and no unexpected error reported by the host. More requests or
// another seed: `npm run fuzz -- --requests N --seed S`. Also the contract's own promises the
// fuzzer and the edge rely on: the edge's statuses are declared, HEAD is declared wherever GET
// is, and every union of objects in a request body is discriminated (services/http/json.ts
// finds undeclared fields by comparing a body with what validation kept).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadContract, type Schema } from "../../tools/fuzz/document.js";
import { formatFailure, runFuzz, type FuzzReport } from "../../tools/fuzz/run.js";
import { startFuzzTarget, type FuzzTarget } from "./harness.js";

/** The CI run: seed and size fixed, so a failure here replays with `npm run fuzz -- --seed … --only …`. */
export const CI_SEED = "ci-1";
export const CI_REQUESTS = 2000;
/** The harness demands a bearer token, so the `auth` mutation reaches every operation's 401. */
const TOKEN = "fuzz-token";

const contract = loadContract();

describe("contract fuzzer", () => {
  let target: FuzzTarget;
  let report: FuzzReport;

  beforeAll(async () => {
    target = await startFuzzTarget(TOKEN);
    report = await runFuzz({ send: target.send, seed: CI_SEED, requests: CI_REQUESTS, token: TOKEN });
    const seconds = report.elapsedMs / 1000;
    console.log(`fuzz: ${report.requests} requests in ${seconds.toFixed(1)} s (${(report.requests / seconds).toFixed(0)}/s), statuses ${JSON.stringify(report.statuses)}, ${report.succeeded.size} operations answered 2xx`);
  }, 120_000);
  afterAll(async () => {
    await target?.close();
  });

  it(`${CI_REQUESTS} requests of seed ${CI_SEED}: no failure`, () => {
    expect(report.failures.map(formatFailure)).toEqual([]);
  });

  it("no unexpected error reached the host's log", () => {
    expect(target.unexpected).toEqual([]);
  });

  it("the run reached real resources: most operations answered 2xx at least once", () => {
    expect(report.succeeded.size).toBeGreaterThan(contract.operations.filter((operation) => operation.method !== "HEAD").length / 2);
  });
});

describe("the contract declares what the edge answers", () => {
  const bodyless = contract.operations.filter((operation) => operation.body === undefined);
  const withBody = contract.operations.filter((operation) => operation.body !== undefined);

  it("every operation declares 414 and 431 (path and headers over the limits), each a ValidationError", () => {
    for (const operation of contract.operations) {
      for (const status of ["414", "431"]) expect({ operation: operation.operationId, declared: status in operation.responses }).toEqual({ operation: operation.operationId, declared: true });
    }
  });

  it("every operation with a body declares 413; none without one does", () => {
    expect(withBody.filter((operation) => !("413" in operation.responses)).map((operation) => operation.operationId)).toEqual([]);
    expect(bodyless.filter((operation) => "413" in operation.responses).map((operation) => operation.operationId)).toEqual([]);
  });

  it("HEAD is declared wherever GET is, with the same statuses and no body", () => {
    const gets = contract.operations.filter((operation) => operation.method === "GET");
    for (const get of gets) {
      const head = contract.operations.find((operation) => operation.method === "HEAD" && operation.path === get.path);
      expect(head && Object.keys(head.responses)).toEqual(Object.keys(get.responses));
      expect(Object.values(head!.responses).every((response) => Object.keys(response.content).length === 0)).toBe(true);
    }
    expect(contract.operations.filter((operation) => operation.method === "HEAD")).toHaveLength(gets.length);
  });

  it("every union of objects in a request body is discriminated", () => {
    const undiscriminated: string[] = [];
    const seen = new Set<string>();
    const isObject = (schema: Schema): boolean => {
      const resolved = contract.resolve(schema);
      return resolved["type"] === "object" || resolved["properties"] !== undefined || resolved["allOf"] !== undefined;
    };
    const walk = (schema: Schema, at: string): void => {
      if (typeof schema["$ref"] === "string") {
        if (seen.has(schema["$ref"])) return;
        seen.add(schema["$ref"]);
      }
      const resolved = contract.resolve(schema);
      for (const key of ["oneOf", "anyOf"] as const) {
        const members = (resolved[key] as Schema[] | undefined) ?? [];
        if (members.filter(isObject).length > 1 && resolved["discriminator"] === undefined) undiscriminated.push(at);
        members.forEach((member) => walk(member, `${at}|`));
      }
      for (const member of (resolved["allOf"] as Schema[] | undefined) ?? []) walk(member, at);
      for (const [name, property] of Object.entries((resolved["properties"] as Record<string, Schema> | undefined) ?? {})) walk(property, `${at}.${name}`);
      if (resolved["items"]) walk(resolved["items"] as Schema, `${at}[]`);
      if (typeof resolved["additionalProperties"] === "object") walk(resolved["additionalProperties"] as Schema, `${at}{}`);
    };
    for (const operation of withBody) walk(operation.body!.schema, operation.operationId);
    expect(undiscriminated).toEqual([]);
  });
});
