// Runs scenarios on the worker through SimClient: one at a time; cancel() asks the worker to stop between
// steps and, if it has not answered within HARD_CANCEL_AFTER_MS, terminates and restarts it.
export const HARD_CANCEL_AFTER_MS = 1500;

export class Runner {
  constructor(client) {
    this.client = client;
    this.current = null;
  }

  get running() {
    return this.current !== null;
  }

  /** Resolves {status, result, benchmark, trace, hard?} or rejects with the worker's error. */
  async start(text, {keepTrace = false, onProgress} = {}) {
    if (this.current) throw new Error('a run is already in progress');
    const run = this.client.run(text, {keepTrace, onProgress});
    let abandon;
    const abandoned = new Promise((resolve) => (abandon = resolve));
    this.current = {run, abandon};
    try {
      return await Promise.race([run.promise, abandoned]);
    } finally {
      clearTimeout(this.current?.timer);
      this.current = null;
    }
  }

  /** Soft cancel now, hard cancel if the worker does not stop in time. */
  cancel() {
    const cur = this.current;
    if (!cur || cur.cancelling) return;
    cur.cancelling = true;
    cur.run.cancel();
    cur.timer = setTimeout(() => {
      if (this.current !== cur) return;
      this.client.hardCancel();
      cur.abandon({status: 'cancelled', hard: true, result: null, benchmark: '', trace: null});
    }, HARD_CANCEL_AFTER_MS);
  }
}

/** The text the page runs: the scenario with per-request columns and phases on (the timeline needs them).
 * Every run of the page, shared or not, goes through this, so the same scenario gives the same numbers. */
export function runnableText(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch {
    return text; // the core reports the syntax error
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return text;
  const output = doc.output && typeof doc.output === 'object' && !Array.isArray(doc.output) ? doc.output : {};
  doc.output = {...output, requests: true, phases: true};
  return JSON.stringify(doc);
}
