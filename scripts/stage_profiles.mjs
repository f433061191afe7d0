#!/usr/bin/env node
// Copies profiles/ into web/assets/profiles/ (the page fetches single files from there on demand, see
// web/lib/profiles.js) and writes web/assets/profiles_files.json, the manifest the worker loads up front:
// {files: {"H100-SXM/vllm/gemm.json": bytes, ...}}. Only changed files are copied; files no longer in
// profiles/ are removed from the copy. README files are documentation, not data, and stay out, as do the raw
// measurements under profiles/measured/ (read only by scripts/validate_ops.py).
import {readdirSync, statSync, readFileSync, writeFileSync, mkdirSync, copyFileSync, rmSync, existsSync} from 'node:fs';
import {join, dirname, relative, sep} from 'node:path';
import {fileURLToPath} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'profiles');
const dst = join(root, 'web', 'assets', 'profiles');

const walk = (dir) => readdirSync(dir).sort().flatMap((f) => {
  const p = join(dir, f);
  return statSync(p).isDirectory() ? walk(p) : [p];
});
const isData = (p) => !p.endsWith('.md') && !relative(src, p).split(sep).join('/').startsWith('measured/');

const files = {};
for (const p of walk(src).filter(isData)) {
  const rel = relative(src, p).split(sep).join('/');
  const out = join(dst, rel);
  const bytes = readFileSync(p);
  files[rel] = bytes.length;
  if (existsSync(out) && readFileSync(out).equals(bytes)) continue;
  mkdirSync(dirname(out), {recursive: true});
  copyFileSync(p, out);
}
if (existsSync(dst)) {
  for (const p of walk(dst)) {
    if (!Object.hasOwn(files, relative(dst, p).split(sep).join('/'))) rmSync(p);
  }
}
const manifest = JSON.stringify({files}) + '\n';
const manifestPath = join(root, 'web', 'assets', 'profiles_files.json');
if (!existsSync(manifestPath) || readFileSync(manifestPath, 'utf8') !== manifest) writeFileSync(manifestPath, manifest);
const total = Object.values(files).reduce((a, b) => a + b, 0);
console.log(`web/assets/profiles: ${Object.keys(files).length} files, ${(total / 1e6).toFixed(1)} MB (fetched on demand)`);
