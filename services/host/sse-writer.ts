// Writes an event stream the Fetch handler left to the Node listener (services/http/sse.ts,
// `SseSource`) straight to the ServerResponse: messages are encoded as text and written, with no
// web stream, reader or byte copies between them and the socket.
//
// What the web-stream path did, this keeps: messages already waiting behind the one awaited go
// out in one write; a write the socket cannot take yet (a slow reader) holds the next read until
// 'drain'; a client that goes away ends the iterator (its subscriptions); a stream that fails
// after its 200 is cut short and `onError` hears why. Two things it adds: the headers go out with
// the first events when those are ready at once (one write, not two), and the last events go out
// with the end of the body, so a client that stops reading at the last event has its connection
// complete and kept alive instead of closed under an unfinished response. A source that gives up on
// a reader that stopped reading (`onBehind`) has the connection destroyed at once.
import type { ServerResponse } from "node:http";
import { encodeSseText, type SseIterator, type SseSource } from "../http/sse.js";

const ignore = (): void => undefined;

/** The promise, marked handled: it may be abandoned when the client goes away. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(ignore);
  return promise;
}

const PENDING = Symbol("pending");

/** What `promise` settled with if it already has (an already-settled promise wins a race listed first), else PENDING. */
const settledNow = <T>(promise: Promise<T>): Promise<T | typeof PENDING> => Promise.race([promise, Promise.resolve(PENDING)]);

/** Resolves once every microtask queued so far (and those they queue) has run. */
const afterMicrotasks = (): Promise<void> => new Promise((resolvePromise) => process.nextTick(resolvePromise));

export async function writeSse(outgoing: ServerResponse, source: SseSource): Promise<void> {
  const iterator = source.messages[Symbol.asyncIterator]() as SseIterator;
  let gone = false;
  let wake: (() => void) | undefined;
  const onDrain = (): void => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const onClose = (): void => {
    gone = true;
    onDrain();
    void Promise.resolve(iterator.return?.()).catch(ignore);
  };
  outgoing.on("drain", onDrain);
  outgoing.once("close", onClose);
  // The source gave up on this reader (it stopped reading, and the stream's queue reached its
  // bound): what is buffered for the socket would never be taken, so the connection goes now.
  iterator.onBehind?.((error) => {
    if (gone) return;
    source.onError(error);
    outgoing.destroy();
  });
  try {
    // The client left while the handler was opening the stream: its 'close' came before this
    // writer listened, and writes to the gone socket would wait for a 'drain' that never comes.
    if (outgoing.destroyed) {
      onClose();
      return;
    }
    outgoing.writeHead(source.status, source.headers);
    let pending = handled(iterator.next());
    // A client waits for the headers: sent now unless the first events are ready to go with them.
    if ((await settledNow(pending)) === PENDING) outgoing.flushHeaders();
    for (;;) {
      const first = await pending;
      if (gone) return;
      if (first.done === true) {
        outgoing.end();
        return;
      }
      // Whatever pushed this message pushes its siblings (a commit's events) and ends the stream in
      // the same turn of the event loop: wait for that before writing.
      await afterMicrotasks();
      if (gone) return;
      let text = encodeSseText(first.value);
      for (const message of iterator.drain?.() ?? []) text += encodeSseText(message);
      pending = handled(iterator.next());
      let after: IteratorResult<unknown> | typeof PENDING;
      try {
        after = await settledNow(pending);
      } catch (error) {
        // The stream failed right behind these events: they still go out before it is cut.
        outgoing.write(text);
        throw error;
      }
      if (gone) return;
      if (after !== PENDING && after.done === true) {
        outgoing.end(text);
        return;
      }
      if (!outgoing.write(text)) {
        await new Promise<void>((resolvePromise) => (wake = resolvePromise));
        if (gone) return;
      }
    }
  } catch (error) {
    if (gone) return;
    source.onError(error);
    void Promise.resolve(iterator.return?.()).catch(ignore);
    // Cut short: the 200 and what was written go out (a stream that failed before its first
    // events still sends its headers), then the connection closes without the body's end.
    // (headersSent is true from writeHead on, before the head reached the socket: flushHeaders
    // writes it if it has not gone out yet, and writes nothing otherwise.)
    outgoing.flushHeaders();
    const socket = outgoing.socket;
    if (socket === null) outgoing.destroy();
    else socket.destroySoon();
  } finally {
    outgoing.off("drain", onDrain);
    outgoing.off("close", onClose);
  }
}
