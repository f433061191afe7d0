// Static data the page loads from web/assets (made by scripts/build_web): the presets index and files, and
// the bundled profile names (profiles/index.json). URLs are relative to this module, so the page works
// from any sub-path.
const ASSETS = new URL('../assets/', import.meta.url);

async function getJson(relative) {
  const res = await fetch(new URL(relative, ASSETS));
  if (!res.ok) throw new Error(`${relative}: HTTP ${res.status}`);
  return await res.json();
}

export async function loadCatalog() {
  const [profiles, presets] = await Promise.all([getJson('profiles_index.json'), getJson('presets/index.json')]);
  return {profiles, presets: presets.presets};
}

/** The sweep presets (presets/sweeps/*.json): [{id, file, name, description}]; [] when none were built. */
export async function loadSweepCatalog() {
  try {
    return (await getJson('sweeps/index.json')).sweeps;
  } catch {
    return [];
  }
}

/** A sweep preset's exact text (its hash names the sweep in merged results); only ids from the index. */
export async function loadSweepText(sweeps, id) {
  const entry = sweeps.find((s) => s.id === id);
  if (!entry) throw new Error(`there is no sweep named "${String(id).slice(0, 60)}"`);
  const res = await fetch(new URL(`sweeps/${entry.file}`, ASSETS));
  if (!res.ok) throw new Error(`sweeps/${entry.file}: HTTP ${res.status}`);
  return await res.text();
}

/** Loads a preset by id; only ids from the index are fetched (a URL parameter cannot name other paths). */
export async function loadPreset(catalog, id) {
  const entry = catalog.presets.find((p) => p.id === id);
  if (!entry) throw new Error(`there is no preset named "${String(id).slice(0, 60)}"`);
  return await getJson(`presets/${entry.file}`);
}
