// An independent check that every response a test receives matches
// generated/openapi.json: ajv (JSON Schema 2020-12) over the document itself, not the
// zod schemas the server uses. Wrap any fetch with `contractFetch` and a response with an
// undeclared status or a body off its schema makes the call throw.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import { join } from "node:path";

type Fetch = (request: Request) => Promise<Response>;

interface OperationEntry {
  readonly method: string;
  readonly pattern: RegExp;
  readonly responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
  readonly operationId: string;
}

const documentPath = join(import.meta.dirname, "..", "..", "generated", "openapi.json");
const document = JSON.parse(readFileSync(documentPath, "utf8")) as {
  paths: Record<string, Record<string, { operationId: string; responses: OperationEntry["responses"] }>>;
};

const ajv = new Ajv2020.default({ strict: false, allErrors: true, validateFormats: true });
addFormats.default(ajv);
ajv.addSchema(document as object, "openapi");

const operations: OperationEntry[] = [];
for (const [path, item] of Object.entries(document.paths)) {
  for (const [method, operation] of Object.entries(item)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/]+")}$`);
    operations.push({ method: method.toUpperCase(), pattern, responses: operation.responses, operationId: operation.operationId });
  }
}
// Literal paths before templated ones, like the server's router.
operations.sort((a, b) => a.pattern.source.split("[^/]+").length - b.pattern.source.split("[^/]+").length);

const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(operation: OperationEntry, status: string, mediaType: string, pointer: string): ReturnType<typeof ajv.compile> {
  const key = `${operation.operationId} ${status} ${mediaType}`;
  let validator = validators.get(key);
  if (!validator) {
    validator = ajv.compile({ $ref: `openapi#${pointer}` });
    validators.set(key, validator);
  }
  return validator;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

export class ContractViolation extends Error {}

function findOperation(method: string, pathname: string): OperationEntry | undefined {
  return operations.find((operation) => operation.method === method && operation.pattern.test(pathname));
}

function check(operation: OperationEntry, status: number, mediaType: string, value: unknown, label: string): void {
  const entry = Object.entries(document.paths).find(([, item]) => Object.values(item).some((op) => op.operationId === operation.operationId))!;
  const [path, item] = entry;
  const method = Object.keys(item).find((m) => item[m]!.operationId === operation.operationId)!;
  const pointer = `/paths/${escapePointer(path)}/${method}/responses/${status}/content/${escapePointer(mediaType)}/schema`;
  const validate = validatorFor(operation, String(status), mediaType, pointer);
  if (!validate(value)) {
    throw new ContractViolation(`${label}: ${operation.operationId} ${status} body violates the contract: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
  }
}

/** Validates one response against the contract; returns it unconsumed. */
export async function checkResponse(request: Request, response: Response): Promise<void> {
  const url = new URL(request.url);
  const operation = findOperation(request.method, url.pathname);
  if (!operation) return; // not an API operation (e.g. /openapi.json)
  const declared = operation.responses[String(response.status)];
  if (!declared) throw new ContractViolation(`${operation.operationId} answered undeclared status ${response.status}`);
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
  if (!response.headers.get("ze-harness-version")) throw new ContractViolation(`${operation.operationId} response lacks Ze-Harness-Version`);
  if (type === "text/event-stream") return; // events are checked by checkSseEvent
  const text = await response.clone().text();
  if (!declared.content) {
    if (text !== "") throw new ContractViolation(`${operation.operationId} ${response.status} declares no body but sent one`);
    return;
  }
  if (!(type in declared.content)) throw new ContractViolation(`${operation.operationId} ${response.status} sent undeclared content type ${type}`);
  check(operation, response.status, type, JSON.parse(text), `${request.method} ${url.pathname}`);
}

/** Validates one SSE event's data against the operation's declared event schema. */
export function checkSseEvent(method: string, pathname: string, data: unknown): void {
  const operation = findOperation(method, pathname);
  if (!operation) throw new ContractViolation(`no operation for ${method} ${pathname}`);
  check(operation, 200, "text/event-stream", data, `SSE ${pathname}`);
}

export function contractFetch(inner: Fetch): Fetch {
  return async (request: Request) => {
    const response = await inner(request.clone());
    await checkResponse(request, response);
    return response;
  };
}
