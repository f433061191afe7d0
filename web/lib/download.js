// Saves text as a file through a temporary blob: URL (no server involved).
export function downloadText(filename, text, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A file name made of safe characters from a scenario name. */
export function safeFileStem(name, fallback = 'scenario') {
  const stem = String(name || '').toLowerCase().replace(/[^a-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '');
  return (stem || fallback).slice(0, 60);
}

/** Reads a user-chosen File as text, refusing anything over `maxBytes`. */
export async function readFileText(file, maxBytes) {
  if (file.size > maxBytes) {
    throw new Error(`${file.name} is ${(file.size / 1024).toFixed(0)} KB; the limit is ${(maxBytes / 1024).toFixed(0)} KB`);
  }
  return await file.text();
}
