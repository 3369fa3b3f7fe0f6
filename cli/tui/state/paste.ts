// Getting images into the draft: Ctrl+V / Ctrl+X V (the local clipboard: an image, else its
// text), a terminal paste that is exactly one image file's path (plain or bracketed paste),
// `/image PATH`, `/base64 DATA [MEDIA_TYPE]`, Ctrl+X R (remove the last), and Esc cancelling a
// pending clipboard read. Everything else a paste holds is text for the draft.
import type { Key } from "ink";
import { ClipboardUnavailable, readClipboard } from "./clipboard.js";
import type { Controller } from "./controller.js";
import { attachmentLine, base64Attachment, fileAttachment, imageAttachment, MAX_IMAGE_BYTES, pastedImage, unquotePath, type Attachment } from "./images.js";

/** Bracketed paste (`ESC [200~ … ESC [201~`); Ink strips the ESC before the handler sees it. */
const PASTE_START = "[200~";
const PASTE_END = "[201~";
/** A paste whose end marker never comes is let go at this size rather than holding every key back. */
const MAX_PASTE_CHARS = 8 * 1024 * 1024;

/** Where relative paths are resolved: the client's directory. */
const base = (controller: Controller): string => controller.backend.where.directory ?? process.cwd();

export function attach(controller: Controller, attachment: Attachment): void {
  const attachments = [...controller.state.attachments, attachment];
  controller.update({ attachments, notice: { kind: "info", text: `attached ${attachmentLine(attachment, attachments.length - 1)}` } });
}

/** Ctrl+X R: the last attached image leaves the draft. */
export function removeLastImage(controller: Controller): void {
  const attachments = controller.state.attachments;
  const last = attachments[attachments.length - 1];
  if (!last) return controller.info("no image is attached");
  controller.update({ attachments: attachments.slice(0, -1), notice: { kind: "info", text: `removed ${attachmentLine(last, attachments.length - 1)}` } });
}

/** Pasted text: one image file's path attaches the file; anything else goes into the draft. */
export function pasteText(controller: Controller, text: string): void {
  let image: Attachment | undefined;
  try {
    image = pastedImage(text, base(controller));
  } catch (error) {
    return controller.error(error); // an image too big to send: named, nothing inserted
  }
  if (image) return attach(controller, image);
  controller.update({ draft: controller.state.draft + text.replace(/\r\n?/g, "\n"), suggestionsHidden: false, suggestionIndex: 0 });
}

/** Ctrl+V / Ctrl+X V: reads the local clipboard (Esc cancels while it runs). */
export function pasteClipboard(controller: Controller): void {
  if (controller.pasteAbort) return;
  const abort = new AbortController();
  controller.pasteAbort = abort;
  controller.update({ pasting: true, leader: false, notice: { kind: "info", text: "reading the clipboard… (Esc cancels)" } });
  const settle = (): boolean => {
    if (controller.pasteAbort !== abort) return false; // cancelled meanwhile
    controller.pasteAbort = undefined;
    controller.update({ pasting: false, notice: undefined });
    return true;
  };
  readClipboard({ env: process.env, signal: abort.signal, maxBytes: MAX_IMAGE_BYTES + 1 }).then(
    (content) => {
      if (!settle()) return;
      try {
        if (content.kind === "image") return attach(controller, imageAttachment(`clipboard.${content.mimeType.slice(6)}`, content.bytes));
        if (content.text === "") return controller.info("the clipboard is empty");
        pasteText(controller, content.text);
      } catch (error) {
        controller.error(error);
      }
    },
    (error: unknown) => {
      if (!settle()) return;
      if (error instanceof ClipboardUnavailable) controller.info(error.message);
      else controller.error(error);
    },
  );
}

/** Esc while the clipboard is read: the read stops and the draft stays as it was. */
export function cancelPaste(controller: Controller): void {
  const abort = controller.pasteAbort;
  controller.pasteAbort = undefined;
  abort?.abort();
  controller.update({ pasting: false, notice: { kind: "info", text: "paste cancelled" } });
}

/** `/image PATH`. */
export function imageCommand(controller: Controller, argument: string): void {
  if (argument === "") throw new Error("/image needs PATH (a PNG, JPEG, GIF or WebP file)");
  attach(controller, fileAttachment(unquotePath(argument) ?? argument, base(controller)));
}

/** `/base64 DATA [MEDIA_TYPE]`. */
export function base64Command(controller: Controller, argument: string): void {
  const [data, mediaType, extra] = argument.split(/\s+/);
  if (data === undefined || data === "" || extra !== undefined) throw new Error("/base64 takes DATA [MEDIA_TYPE]");
  attach(controller, base64Attachment(data, mediaType));
}

/**
 * Bracketed paste: everything between the markers is one paste, whatever chunks and keys Ink
 * cut it into. True when the key belonged to a paste.
 */
export function bracketedPaste(controller: Controller, input: string, key: Key, deliver: (text: string, key: Key) => void): boolean {
  if (controller.pasteBuffer === undefined) {
    if (input !== PASTE_START) return false;
    controller.pasteBuffer = "";
    return true;
  }
  if (input !== PASTE_END) controller.pasteBuffer += key.return ? "\r" : key.tab ? "\t" : input;
  if (input === PASTE_END || controller.pasteBuffer.length > MAX_PASTE_CHARS) {
    const text = controller.pasteBuffer;
    controller.pasteBuffer = undefined;
    const plain: Key = { ...key, return: false, tab: false, escape: false, ctrl: false, meta: false, shift: false, backspace: false, delete: false };
    if (text !== "") deliver(text, plain);
  }
  return true;
}
