// Share links: the scenario travels in the URL #fragment (never sent to a server) as
//   #s=<base64url(deflate-raw(JSON payload))>
// payload = {share: 1, version: <scenario format>, seed, servesim: <simulator version>, scenario: {...}}.
// Decoding is parsing untrusted input: every step is bounded and every failure becomes one clear message.

export const SHARE_FORMAT = 1;
export const MAX_FRAGMENT_CHARS = 64 * 1024; // compressed + base64url, checked before any decoding
export const MAX_INFLATED_BYTES = 1024 * 1024; // refused while inflating, before it is all in memory
export const LINK_CEILING_CHARS = 8 * 1024; // longer links are refused when sharing (offer a file instead)
const PREFIX = 's=';

export class ShareError extends Error {}

export async function encodeShare(scenario, simVersion) {
  const payload = {
    share: SHARE_FORMAT,
    version: scenario.version,
    seed: scenario.seed ?? 0,
    servesim: simVersion,
    scenario,
  };
  const bytes = await pipe(new TextEncoder().encode(JSON.stringify(payload)), new CompressionStream('deflate-raw'));
  return PREFIX + toBase64Url(bytes);
}

/** Decodes a location.hash (with or without '#'); throws ShareError with a message fit for the user. */
export async function decodeShare(hash) {
  const fragment = hash.startsWith('#') ? hash.slice(1) : hash;
  if (fragment.length > MAX_FRAGMENT_CHARS) {
    throw new ShareError(`This link's data is ${kb(fragment.length)}, more than the ${kb(MAX_FRAGMENT_CHARS)} ` +
      'a share link may carry. Nothing was loaded.');
  }
  if (!fragment.startsWith(PREFIX)) throw new ShareError('The address fragment is not a servesim share link.');
  const body = fragment.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(body) || body.length % 4 === 1) {
    throw new ShareError('The share link is broken: its data is not valid base64url.');
  }
  let inflated;
  try {
    inflated = await pipe(fromBase64Url(body), new DecompressionStream('deflate-raw'), MAX_INFLATED_BYTES);
  } catch (e) {
    if (e instanceof ShareError) throw e;
    throw new ShareError('The share link is broken: its data does not decompress.');
  }
  let payload;
  try {
    payload = JSON.parse(new TextDecoder('utf-8', {fatal: true}).decode(inflated));
  } catch {
    throw new ShareError('The share link is broken: its data is not JSON text.');
  }
  return checkPayload(payload);
}

function checkPayload(p) {
  if (!isPlainObject(p)) throw new ShareError('The share link does not hold a servesim scenario.');
  if (p.share !== SHARE_FORMAT) {
    throw new ShareError(`The share link uses link format ${String(p.share).slice(0, 20)}; this page reads ${SHARE_FORMAT}.`);
  }
  if (!isPlainObject(p.scenario)) throw new ShareError('The share link does not hold a scenario object.');
  if (p.seed !== undefined && !Number.isSafeInteger(p.seed)) throw new ShareError('The share link has an invalid seed.');
  const servesim = typeof p.servesim === 'string' ? p.servesim.slice(0, 40) : '';
  const scenario = p.scenario;
  if (scenario.seed === undefined && p.seed !== undefined) scenario.seed = p.seed;
  return {scenario, seed: scenario.seed ?? 0, servesim, version: p.version};
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Streams bytes through a (de)compression stream, failing once the output passes `cap` bytes. */
async function pipe(bytes, transform, cap = Infinity) {
  const writer = transform.writable.getWriter();
  writer.write(bytes).catch(() => {});
  writer.close().catch(() => {});
  const reader = transform.readable.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const {done, value} = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > cap) {
      reader.cancel().catch(() => {});
      throw new ShareError(`The share link expands to more than ${kb(cap)}; refused.`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

export function toBase64Url(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function kb(n) {
  return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KB`;
}
