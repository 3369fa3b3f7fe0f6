// What `run` and `chat` share: streaming a Turn's text to stdout, answering its permission
// requests and questions (on a terminal) or rejecting them (without one), naming a Turn's
// outcome, and building a prompt with images. Stderr lines never land on a partly streamed answer line.
import { fstatSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { MAX_REQUEST_BODY_BYTES } from "../clients/limits.js";
import {
  sdk,
  unwrap,
  type ImageMimeType,
  type PermissionReply,
  type PermissionRequest,
  type PromptPart,
  type QuestionRequest,
  type Turn,
} from "../clients/index.js";
import type { Connection } from "./base.js";
import { errorLine, oneLine, usageError } from "./errors.js";
import { sniffImageMime } from "../clients/prompts.js";

// ---------------------------------------------------------------------------------------------
// Output

/** Whether stdout's last write ended its line (only streamed answer text leaves one open). */
let stdoutAtLineStart = true;

function writeStdout(text: string): void {
  process.stdout.write(text);
  if (text !== "") stdoutAtLineStart = text.endsWith("\n");
}

/** True when stdout and stderr are one terminal, file or pipe (`2>&1`): their lines interleave. */
function sharedOutput(): boolean {
  try {
    const [out, err] = [fstatSync(1), fstatSync(2)];
    return out.dev === err.dev && out.ino === err.ino && out.rdev === err.rdev;
  } catch {
    return false;
  }
}

/** Before writing to stderr: ends stdout's open line first when both reach the same place. */
export function startStderrLine(): void {
  if (stdoutAtLineStart || !sharedOutput()) return;
  process.stderr.write("\n");
  stdoutAtLineStart = true;
}

/** One line on stderr, never appended to a partly streamed answer line. */
export function report(line: string): void {
  startStderrLine();
  process.stderr.write(`${line}\n`);
}

/** Writes the visible text (text and refusal parts) of a Turn as it grows, each part once. */
export class TextPrinter {
  private readonly printed = new Map<string, number>();
  private lastPart: string | undefined;

  update(turn: Turn): void {
    for (const part of turn.parts) {
      if (part.type !== "text" && part.type !== "refusal") continue;
      const done = this.printed.get(part.id) ?? 0;
      if (part.text.length <= done) continue;
      if (this.lastPart !== undefined && this.lastPart !== part.id && !stdoutAtLineStart) writeStdout("\n");
      writeStdout(part.text.slice(done));
      this.printed.set(part.id, part.text.length);
      this.lastPart = part.id;
    }
  }

  /** Ends the answer on its own line. */
  finish(): void {
    if (!stdoutAtLineStart) writeStdout("\n");
  }
}

/** The stderr line for a Turn that did not complete, or undefined when it completed. */
export function outcomeLine(turn: Turn): string | undefined {
  const outcome = turn.outcome;
  switch (outcome?.kind) {
    case "completed":
      return undefined;
    case "failed":
      return `error: Turn failed: ${outcome.fault.code}: ${oneLine(outcome.fault.message)}`;
    case "cancelled":
      return `error: Turn cancelled${outcome.reason !== undefined ? `: ${oneLine(outcome.reason)}` : ""}`;
    case "limit_reached":
      return `error: Turn stopped at a limit: ${outcome.limit.name}: ${oneLine(outcome.diagnostic.message)}`;
    default:
      return `error: Turn ended in phase ${turn.phase} without an outcome`;
  }
}

// ---------------------------------------------------------------------------------------------
// Permission requests and questions

/** Asks the user one question; undefined when no answer can come (end of input). */
export type Ask = (prompt: string) => Promise<string | undefined>;

/** Asks for one of `keys` without Enter (a terminal in raw mode); undefined at end of input. */
export type Choose = (prompt: string, keys: readonly string[]) => Promise<string | undefined>;

/**
 * Replies to every pending permission request and question of the Turns it is shown, once
 * each and one at a time: with `ask` (a terminal) the user chooses; without it they are
 * rejected and reported on stderr.
 */
export class Interactions {
  private readonly seen = new Set<string>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly connection: Connection,
    private readonly ask: Ask | undefined,
    /** Permission replies by one key (run on a terminal); without it they are typed lines. */
    private readonly choose?: Choose,
  ) {}

  scan(turn: Turn): void {
    for (const part of turn.parts) {
      if (part.type !== "tool") continue;
      if (part.approval.state === "pending") this.permissionRequest(part.approval.request);
      if (part.question?.state === "pending") this.questionRequest(part.question.request);
    }
  }

  /** A pending permission request (of this Turn, or of a sub-agent running `agent`). */
  permissionRequest(request: PermissionRequest, agent?: string): void {
    this.enqueue(request.id, request, (pending) => this.permission(pending, agent));
  }

  /** A pending question (of this Turn, or of a sub-agent running `agent`). */
  questionRequest(request: QuestionRequest, agent?: string): void {
    this.enqueue(request.id, request, (pending) => this.question(pending, agent));
  }

  /** Resolves when every reply started so far was sent. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Asks on a line of its own. */
  private askOnLine(ask: Ask, question: string): Promise<string | undefined> {
    startStderrLine();
    return ask(question);
  }

  private enqueue<R>(id: string, request: R, handle: (request: R) => Promise<void>): void {
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.chain = this.chain.then(() => handle(request)).catch((error: unknown) => report(errorLine(error)));
  }

  private async permission(request: PermissionRequest, agent?: string): Promise<void> {
    const what = `${agent !== undefined ? `[sub-agent ${agent}] ` : ""}${request.action} ${request.resources.join(" ")}`;
    const path = { server: this.connection.server, sessionId: request.sessionId, permissionRequestId: request.id };
    const reply = async (body: { reply: PermissionReply; message?: string }): Promise<void> => {
      await unwrap(sdk.replyPermission({ client: this.connection.client.client, path, body }));
    };
    if (!this.ask) {
      report(`permission rejected (no interactive terminal): ${what}`);
      return reply({ reply: "reject", message: "no interactive terminal" });
    }
    const choices: Record<string, PermissionReply> = { o: "once", once: "once", a: "always", always: "always", r: "reject", reject: "reject" };
    const question = `Allow ${what}? [o]nce/[a]lways/[r]eject `;
    if (this.choose) {
      startStderrLine();
      const key = await this.choose(question, ["o", "a", "r"]);
      return reply(key === undefined ? { reply: "reject", message: "no answer" } : { reply: choices[key]! });
    }
    for (;;) {
      const answer = await this.askOnLine(this.ask, question);
      if (answer === undefined) return reply({ reply: "reject", message: "no answer" });
      const choice = choices[answer.trim().toLowerCase()];
      if (choice) return reply({ reply: choice });
    }
  }

  private async question(request: QuestionRequest, agent?: string): Promise<void> {
    const path = { server: this.connection.server, sessionId: request.sessionId, questionRequestId: request.id };
    const reject = async (): Promise<void> => {
      await unwrap(sdk.rejectQuestion({ client: this.connection.client.client, path }));
    };
    if (!this.ask) {
      report(`question rejected (no interactive terminal): ${agent !== undefined ? `[sub-agent ${agent}] ` : ""}${request.questions.map((question) => question.header).join(", ")}`);
      return reject();
    }
    const answers: string[][] = [];
    for (const question of request.questions) {
      report(`${agent !== undefined ? `[sub-agent ${agent}] ` : ""}${question.header}: ${question.question}`);
      question.options.forEach((option, index) => report(`  ${index + 1}) ${option.label}${option.description ? ` — ${option.description}` : ""}`));
      const custom = question.custom !== false;
      const hint = `${question.multiple ? "numbers, comma-separated" : "a number"}${custom ? ", or your own answer" : ""}; empty to dismiss`;
      let answer: string[] | undefined;
      while (!answer) {
        const text = (await this.askOnLine(this.ask, `Answer (${hint}): `))?.trim();
        if (!text) return reject();
        const picks = text.split(",").map((item) => Number(item.trim()));
        const valid = picks.every((pick) => Number.isInteger(pick) && pick >= 1 && pick <= question.options.length);
        if (valid && (question.multiple || picks.length === 1)) answer = picks.map((pick) => question.options[pick - 1]!.label);
        else if (custom) answer = [text];
      }
      answers.push(answer);
    }
    await unwrap(sdk.replyQuestion({ client: this.connection.client.client, path, body: { answers } }));
  }
}

// ---------------------------------------------------------------------------------------------
// Prompts with images

const MIME_TYPES: readonly ImageMimeType[] = ["image/jpeg", "image/png", "image/gif", "image/webp"];
const EXTENSIONS: Record<string, ImageMimeType> = { ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp" };

/** The image type of `bytes` by its magic number, else by the file's extension. */
export function imageTypeOf(path: string, bytes: Uint8Array): ImageMimeType | undefined {
  return sniffImageMime(bytes) ?? EXTENSIONS[extname(path).toLowerCase()];
}

export interface ImageFlags {
  readonly image?: readonly string[] | undefined;
  readonly "image-base64"?: readonly string[] | undefined;
  readonly "image-file"?: readonly string[] | undefined;
}

/** The prompt text, then `--image` URLs, `--image-base64` and `--image-file` images, each in order. */
export function buildPrompt(text: string, flags: ImageFlags): PromptPart[] {
  const prompt: PromptPart[] = [{ type: "text", text }];
  for (const url of flags.image ?? []) prompt.push({ type: "image", source: { type: "url", url } });
  for (const value of flags["image-base64"] ?? []) {
    const separator = value.indexOf(":");
    const mimeType = value.slice(0, separator) as ImageMimeType;
    const data = value.slice(separator + 1);
    if (separator < 0 || !MIME_TYPES.includes(mimeType) || data === "") {
      throw usageError(`--image-base64 takes MIME:BASE64 with MIME one of ${MIME_TYPES.join(", ")}`);
    }
    prompt.push({ type: "image", source: { type: "base64", mimeType, data } });
  }
  for (const path of flags["image-file"] ?? []) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new Error(`cannot read image file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    const mimeType = imageTypeOf(path, bytes);
    if (!mimeType) throw usageError(`${path} is not a JPEG, PNG, GIF or WebP image`);
    const data = bytes.toString("base64");
    // Images travel inline as base64 (4/3 of the file) in one request body: name the file that cannot fit.
    if (data.length > MAX_REQUEST_BODY_BYTES - PROMPT_ENVELOPE_BYTES) {
      throw usageError(
        `image file ${path} is ${bytes.byteLength} bytes (${data.length} as base64); a request body carries at most ${MAX_REQUEST_BODY_BYTES} bytes, so an image file must stay under about ${Math.floor(((MAX_REQUEST_BODY_BYTES - PROMPT_ENVELOPE_BYTES) * 3) / 4 / 1024)} KiB`,
      );
    }
    prompt.push({ type: "image", source: { type: "base64", mimeType, data } });
  }
  const total = JSON.stringify(prompt).length + PROMPT_ENVELOPE_BYTES;
  if (total > MAX_REQUEST_BODY_BYTES) {
    throw usageError(`the prompt and its images come to about ${total} bytes; a request body carries at most ${MAX_REQUEST_BODY_BYTES} bytes (send fewer or smaller images)`);
  }
  return prompt;
}

/** Room the submitPrompt body needs besides the prompt parts (ids, delivery, model, JSON syntax). */
const PROMPT_ENVELOPE_BYTES = 1024;
