// Observational subscribers (`context.events.subscribe`): each Turn's events go to the plugins'
// handlers off the Turn, through one bounded queue per Turn (reference: "Event subscribers are
// observational and lossy: each Turn buffers `observerBufferSize` events (default 128) and drops
// the oldest when subscribers fall behind"). For each event the subscribers are called one at a
// time, in plugin order and then registration order, each awaited and each given its own copy;
// a throw or rejection is ignored. Nothing here can delay or change the Turn.
import type { TurnEvent } from "../../plugin/index.js";
import type { PluginSubscriber } from "./generation.js";

export const DEFAULT_OBSERVER_BUFFER_SIZE = 128;

export class TurnEventQueue {
  readonly #subscribers: readonly PluginSubscriber[];
  readonly #capacity: number;
  readonly #pending: TurnEvent[] = [];
  #draining = false;
  /** Events dropped because the queue was full (oldest first). */
  dropped = 0;

  constructor(subscribers: readonly PluginSubscriber[], capacity: number = DEFAULT_OBSERVER_BUFFER_SIZE) {
    this.#subscribers = subscribers;
    this.#capacity = Math.max(1, Math.floor(capacity));
  }

  /** Queues `event` (dropping the oldest pending one when full) and returns at once. */
  push(event: TurnEvent): void {
    if (this.#pending.length >= this.#capacity) {
      this.#pending.shift();
      this.dropped += 1;
    }
    this.#pending.push(event);
    if (!this.#draining) {
      this.#draining = true;
      // Delivery starts on a later turn of the event loop: never inside the Turn's own call.
      setImmediate(() => void this.#drain());
    }
  }

  async #drain(): Promise<void> {
    try {
      for (let event = this.#pending.shift(); event !== undefined; event = this.#pending.shift()) {
        for (const subscriber of this.#subscribers) {
          try {
            await subscriber.handler(structuredClone(event));
          } catch {
            // Observational: a subscriber's failure is its own.
          }
        }
      }
    } finally {
      this.#draining = false;
      if (this.#pending.length > 0) {
        this.#draining = true;
        setImmediate(() => void this.#drain());
      }
    }
  }
}
