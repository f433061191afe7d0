// Share links: round trip, and every kind of bad fragment gives a ShareError (no throw of another kind).
import {test} from 'node:test';
import assert from 'node:assert/strict';
import {encodeShare, decodeShare, toBase64Url, ShareError, MAX_FRAGMENT_CHARS} from '../../web/lib/share_codec.js';

const scenario = {version: 1, name: 'x', seed: 7, model: 'Llama-3.1-8B', workload: {num_requests: 10}};

async function deflate(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

test('round trip keeps the scenario, seed and versions', async () => {
  const fragment = await encodeShare(scenario, '0.1.0');
  assert.match(fragment, /^s=[A-Za-z0-9_-]+$/);
  const back = await decodeShare('#' + fragment);
  assert.deepEqual(back.scenario, scenario);
  assert.equal(back.seed, 7);
  assert.equal(back.servesim, '0.1.0');
  assert.equal(back.version, 1);
});

test('a realistic preset gives a short link', async () => {
  const preset = JSON.parse(await (await import('node:fs/promises')).readFile(new URL('../../presets/multi_replica.json', import.meta.url), 'utf8'));
  const fragment = await encodeShare(preset, '0.1.0');
  assert.ok(fragment.length < 1000, `fragment is ${fragment.length} characters`);
});

const bad = {
  'not a share link': '#<img src=x onerror=alert(1)>',
  'broken base64': '#s=@@@not*base64',
  'impossible base64 length': '#s=abcde',
  'not deflate': '#s=' + toBase64Url(new TextEncoder().encode('plain text, not deflated')),
  'oversized fragment': '#s=' + 'A'.repeat(MAX_FRAGMENT_CHARS + 10),
};
for (const [name, hash] of Object.entries(bad)) {
  test(`refuses: ${name}`, async () => {
    await assert.rejects(decodeShare(hash), ShareError);
  });
}

test('refuses a deflate bomb while inflating', async () => {
  const huge = JSON.stringify({share: 1, scenario: {name: 'a'.repeat(3 * 1024 * 1024)}});
  const b64 = toBase64Url(await deflate(huge));
  assert.ok(b64.length < MAX_FRAGMENT_CHARS);
  await assert.rejects(decodeShare('#s=' + b64), /expands to more than/);
});

test('refuses JSON that is not a share payload', async () => {
  for (const payload of ['[1,2]', '{"share":2,"scenario":{}}', '{"share":1,"scenario":"x"}', '{"share":1}', 'nul']) {
    await assert.rejects(decodeShare('#s=' + toBase64Url(await deflate(payload))), ShareError, payload);
  }
});
