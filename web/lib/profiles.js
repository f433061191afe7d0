// Profiles on demand. The wasm module ships no profiles; web/assets/profiles/ holds the files and
// web/assets/profiles_files.json lists them (scripts/stage_profiles.mjs). The worker loads the list up front,
// hands it to the module (setManifest), and runs each core call through withProfiles(): the core records
// every listed file it asked for and did not have (takeMissing), the worker fetches those, hands them over
// (putResource) and repeats the call. The call that finally counts saw every file it asked for, exactly as
// the CLI reads them from disk, so results are the same bytes. Files are fetched once per worker and kept
// for the worker's life; the browser's HTTP cache ('force-cache') spares the other workers of a pool.

/** Rounds of fetch-and-retry before giving up (model and GPU files, then tables and traces: 3 in practice). */
export const MAX_ROUNDS = 8;

/** Reads a file next to the module as text: fs under Node (file: URLs), fetch in a browser. */
export async function readText(url) {
  if (url.protocol === 'file:') {
    const {readFile} = await import('node:fs/promises');
    return readFile(url, 'utf8');
  }
  const response = await fetch(url, {cache: 'force-cache'});
  if (!response.ok) throw new Error(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
  return response.text();
}

/** The files of one module instance: the manifest, what was handed over, and fetches in flight. */
export class Profiles {
  /**
   * @param M the module (createServesim's instance)
   * @param {URL} assets the folder holding profiles_files.json and profiles/
   * @param {(url: URL) => Promise<string>} read reads one file (tests count calls through it)
   */
  constructor(M, assets, read = readText) {
    this.M = M;
    this.assets = assets;
    this.read = read;
    this.sizes = {};
    this.fetched = []; // paths in the order they were handed over (for tests and the benchmark)
    this.inFlight = new Map();
  }

  /** Loads the manifest and hands it to the module. */
  async init() {
    const name = 'profiles_files.json';
    let doc;
    try {
      doc = JSON.parse(await this.read(new URL(name, this.assets)));
    } catch (e) {
      throw new Error(`could not load the profiles manifest ${name}: ${e.message || e}`);
    }
    if (!doc || typeof doc.files !== 'object' || doc.files === null) {
      throw new Error(`the profiles manifest ${name} has no "files" object`);
    }
    this.sizes = doc.files;
    const err = this.M.setManifest(JSON.stringify(Object.keys(doc.files)));
    if (err) throw new Error(err);
    return this;
  }

  /** Fetches `path` (relative to profiles/) unless the module has it; an error names the file. */
  fetch(path) {
    if (this.M.hasResource(path)) return Promise.resolve();
    let p = this.inFlight.get(path);
    if (!p) {
      p = this.read(new URL(`profiles/${path}`, this.assets)).then((text) => {
        this.M.putResource(path, text);
        this.fetched.push(path);
      }, (e) => {
        throw new Error(`could not fetch profiles/${path}: ${e.message || e}`);
      }).finally(() => this.inFlight.delete(path));
      this.inFlight.set(path, p);
    }
    return p;
  }

  /** Hands over every listed file now (Node: callers that use the module directly, without withProfiles). */
  async fetchAll() {
    await Promise.all(Object.keys(this.sizes).map((p) => this.fetch(p)));
  }

  /**
   * Runs attempt() (a core call) until the core asked for no file it did not have; discard(value) frees an
   * attempt that is thrown away. Returns the last attempt's value.
   *
   * The worker serves calls at once (the editor's validate beside a run), so each attempt first waits until no
   * fetch is in flight: an attempt never sees part of a round another call asked for (some of a GPU's tables
   * but not its GEMMs), from which it would choose another GPU's tables and fetch files no repeated call uses.
   */
  async run(attempt, discard = () => {}) {
    for (let round = 1; ; ++round) {
      await this.settled();
      JSON.parse(this.M.takeMissing()); // forget what earlier calls asked for
      const value = attempt();
      const missing = JSON.parse(this.M.takeMissing());
      if (missing.length === 0) return value;
      discard(value);
      if (round >= MAX_ROUNDS) throw new Error(`the core still asks for profiles after ${round} rounds: ${missing.join(', ')}`);
      await Promise.all(missing.map((p) => this.fetch(p)));
    }
  }

  /** Resolves once no fetch is in flight (failed ones included: their callers report them). */
  async settled() {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight.values()]);
  }
}
