// The order the protocol puts events in (src/bridge/protocol.ts): hello
// first and once, then progress, then one final event (result or error) and
// nothing after it. Each stdout line is checked against what came before.

import { parseEventLine, type ErrorEvent, type LineParse, type ResultEvent } from './protocol.js';

export class EventOrder {
  private sawHello = false;
  /** The final event, once it came. */
  terminal: ResultEvent | ErrorEvent | undefined;

  /** The event on `line`, or what the line is instead (the reason a BRIDGE_PROTOCOL message gives). */
  accept(line: string): LineParse {
    const parsed = parseEventLine(line);
    if (!parsed.ok) return { ok: false, reason: parsed.reason };
    const event = parsed.event;
    if (!this.sawHello) {
      if (event.event !== 'hello') return { ok: false, reason: 'an event before hello' };
      this.sawHello = true;
    } else if (event.event === 'hello') {
      return { ok: false, reason: 'a second hello' };
    }
    if (this.terminal !== undefined) return { ok: false, reason: 'an event after the final one' };
    if (event.event === 'result' || event.event === 'error') this.terminal = event;
    return { ok: true, event };
  }
}
