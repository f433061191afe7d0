// Prepended (--extern-pre-js) to the generated ES module. Emscripten 3.1.6's ES6 output expects CommonJS's
// `require` and `__dirname` under Node and fetches the .wasm by file path, which Node 20's fetch rejects.
// These module-scoped bindings fill the gap under Node and are the browser's own fetch elsewhere.
const servesimOnNode = typeof process == 'object' && typeof process.versions == 'object' && !!process.versions.node;
var require = servesimOnNode ? (await import('module')).createRequire(import.meta.url) : undefined;
var __dirname = servesimOnNode ? require('path').dirname(require('url').fileURLToPath(import.meta.url)) : undefined;
var fetch = !servesimOnNode ? globalThis.fetch && globalThis.fetch.bind(globalThis) : async (url, init) => {
  const s = String(url);
  if (/^https?:/.test(s)) return globalThis.fetch(url, init);
  const file = s.startsWith('file:') ? require('url').fileURLToPath(s) : s;
  const bytes = await require('fs').promises.readFile(file);
  return new Response(bytes, {headers: {'content-type': file.endsWith('.wasm') ? 'application/wasm' : 'application/octet-stream'}});
};
