// What every answer must be, checked with ajv against generated/openapi.json itself (not the
// server's zod schemas): never a 500; a status the operation declares (for a request that names
// no operation — a wrong method, a doubled slash — one of the edge's own refusals); a body of the
// declared media type that validates against the declared schema, error bodies included; no
// body on HEAD; and the Ze-Harness-Version header.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { Contract, Operation } from "./document.js";

/** An answer as the fuzzer saw it: the status, lower-case headers and the body's text (a stream's is never read). */
export interface FuzzResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined for an event stream (cancelled unread) and for a HEAD answer with no body. */
  readonly text?: string;
}

/** Refusals the edge answers for a request that matches no operation, and the error each carries. */
const EDGE_ANSWERS: Readonly<Record<number, string>> = {
  400: "ValidationErrorEncoded",
  403: "ForbiddenErrorEncoded",
  404: "NotFoundErrorEncoded",
  413: "ValidationErrorEncoded",
  414: "ValidationErrorEncoded",
  431: "ValidationErrorEncoded",
};

export type Checker = (method: string, target: string, response: FuzzResponse) => string | undefined;

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

export function createChecker(contract: Contract): Checker {
  const ajv = new Ajv2020.default({ strict: false, allErrors: false, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema(contract.document as object, "openapi");
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const validator = (ref: string): ReturnType<typeof ajv.compile> => {
    let compiled = validators.get(ref);
    if (!compiled) {
      compiled = ajv.compile({ $ref: `openapi#${ref}` });
      validators.set(ref, compiled);
    }
    return compiled;
  };
  const validate = (ref: string, value: unknown): string | undefined => {
    const check = validator(ref);
    return check(value) ? undefined : ajv.errorsText(check.errors);
  };

  const parse = (text: string | undefined): { value?: unknown; error?: string } => {
    try {
      return { value: JSON.parse(text ?? "") };
    } catch {
      return { error: `the body is not JSON: ${JSON.stringify((text ?? "").slice(0, 200))}` };
    }
  };

  const checkOperation = (operation: Operation, response: FuzzResponse): string | undefined => {
    const declared = operation.responses[String(response.status)];
    if (!declared) return `${operation.operationId} answered undeclared status ${response.status} (declared: ${Object.keys(operation.responses).join(", ")})`;
    const type = (response.headers["content-type"] ?? "").split(";")[0]!.trim();
    const types = Object.keys(declared.content);
    if (operation.method === "HEAD" || types.length === 0) return response.text === undefined || response.text === "" ? undefined : `${operation.operationId} ${response.status} declares no body but sent ${response.text.length} characters`;
    if (!types.includes(type)) return `${operation.operationId} ${response.status} sent content type ${JSON.stringify(type)} (declared: ${types.join(", ")})`;
    if (type === "text/event-stream") return undefined;
    const body = parse(response.text);
    if (body.error) return `${operation.operationId} ${response.status}: ${body.error}`;
    const pointer = `/paths/${escapePointer(operation.path)}/${operation.method.toLowerCase()}/responses/${response.status}/content/${escapePointer(type)}/schema`;
    const problem = validate(pointer, body.value);
    return problem === undefined ? undefined : `${operation.operationId} ${response.status} body off its schema: ${problem}: ${(response.text ?? "").slice(0, 300)}`;
  };

  return (method, target, response) => {
    if (response.status >= 500 && response.status !== 503) return `answered ${response.status}: ${(response.text ?? "").slice(0, 300)}`;
    if (!response.headers["ze-harness-version"]) return `answered ${response.status} without Ze-Harness-Version`;
    // A preflight is the edge's CORS answer, outside the contract.
    if (method === "OPTIONS" && response.status === 204) return undefined;
    let pathname: string;
    try {
      pathname = new URL(`http://localhost${target}`).pathname;
    } catch {
      pathname = target;
    }
    const matched = contract.match(method, pathname);
    if (matched) return checkOperation(matched.operation, response);
    const schema = EDGE_ANSWERS[response.status];
    if (schema === undefined) return `${method} ${pathname.slice(0, 120)} names no operation, yet answered ${response.status} (expected one of ${Object.keys(EDGE_ANSWERS).join(", ")})`;
    if (method === "HEAD") return response.text === undefined || response.text === "" ? undefined : "a HEAD answer carried a body";
    const body = parse(response.text);
    if (body.error) return `${response.status}: ${body.error}`;
    const problem = validate(`/components/schemas/${schema}`, body.value);
    return problem === undefined ? undefined : `${response.status} body is not a ${schema}: ${problem}`;
  };
}
