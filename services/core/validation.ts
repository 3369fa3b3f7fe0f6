// Checks of request values the contract's schema cannot express, each failing with a
// ValidationError that names the field (as a JSON pointer into the body) and what is allowed.
import type { PromptPart, TurnPolicy } from "../../generated/client/types.gen.js";
import { validationFailure } from "../contract/failure.js";

/** A value given must not be blank or carry NUL. */
export function checkText(value: string | undefined, field: string): void {
  if (value === undefined) return;
  if (value.trim() === "") throw validationFailure(`Invalid request: ${field} must not be empty`);
  if (value.includes("\0")) throw validationFailure(`Invalid request: ${field} must not contain NUL`);
}

// C0 controls (CR and LF among them), DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** A title is one line of text: no CR, LF, tab or other control character. */
export function checkTitle(value: string, field: string): void {
  checkText(value, field);
  const found = CONTROL.exec(value);
  if (found) {
    const code = found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
    throw validationFailure(`Invalid request: ${field} must be one line without control characters (found U+${code} at index ${found.index})`);
  }
}

/** A model is named `PROVIDER/MODEL`: a provider id, a slash, and the model id. */
export function checkModelReference(value: string | undefined, field: string): void {
  if (value === undefined) return;
  checkText(value, field);
  const slash = value.indexOf("/");
  if (slash <= 0 || slash === value.length - 1 || /\s/.test(value)) {
    throw validationFailure(`Invalid request: ${field} must be PROVIDER/MODEL (for example openai/gpt-5), not ${JSON.stringify(value.slice(0, 200))}`);
  }
}

const IMAGE_URL_SCHEMES = ["http:", "https:", "data:"];

/**
 * Images in a prompt: a URL must be http(s): or data:, base64 data must be base64 and within
 * the policy's per-image cap; and the prompt must say something.
 */
export function checkPrompt(prompt: readonly PromptPart[], policy: TurnPolicy, field = "/prompt"): void {
  const cap = policy.images.maxBase64Bytes;
  for (const [index, part] of prompt.entries()) {
    if (part.type !== "image") continue;
    const at = `${field}/${index}`;
    if (part.source.type === "url") {
      let scheme: string;
      try {
        scheme = new URL(part.source.url).protocol.toLowerCase();
      } catch {
        throw validationFailure(`Invalid request: ${at}/source/url is not a URL`);
      }
      if (!IMAGE_URL_SCHEMES.includes(scheme)) {
        throw validationFailure(`Invalid request: ${at}/source/url must be an http:, https: or data: URL, not ${scheme}`);
      }
      continue;
    }
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(part.source.data)) throw validationFailure(`Invalid request: ${at}/source/data is not valid base64`);
    if (cap.kind === "finite" && part.source.data.length > cap.value) {
      throw validationFailure(`Invalid request: ${at}/source/data is ${part.source.data.length} bytes of base64; the limit (images.maxBase64Bytes) is ${cap.value}`);
    }
  }
  if (!prompt.some((part) => part.type !== "text" || part.text.trim() !== "")) throw validationFailure("Invalid request: the prompt is empty");
}
