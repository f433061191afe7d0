#!/usr/bin/env node
// Copies what the page loads into web/assets/ (git-ignored): presets/*.json and presets/sweeps/*.json with generated indexes
// (id, title, description, demonstrates), the bundled profile names, and uPlot from node_modules (pinned in
// package-lock.json) as an ES module. Leaves the wasm build's files (servesim.js/.wasm/.data) alone.
import {readFileSync, writeFileSync, mkdirSync, readdirSync, copyFileSync} from 'node:fs';
import {join, dirname} from 'node:path';
import {fileURLToPath} from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const assets = join(root, 'web', 'assets');
mkdirSync(join(assets, 'presets'), {recursive: true});

// Presets: default first, then by file name.
const files = readdirSync(join(root, 'presets')).filter((f) => f.endsWith('.json'))
  .sort((a, b) => (a === 'default.json' ? -1 : b === 'default.json' ? 1 : a.localeCompare(b)));
const presets = files.map((file) => {
  const doc = JSON.parse(readFileSync(join(root, 'presets', file), 'utf8'));
  copyFileSync(join(root, 'presets', file), join(assets, 'presets', file));
  return {
    id: file.replace(/\.json$/, ''), file,
    title: doc.title ?? doc.name ?? '', name: doc.name ?? '',
    description: doc.description ?? '', demonstrates: doc.demonstrates ?? '',
  };
});
writeFileSync(join(assets, 'presets', 'index.json'), JSON.stringify({presets}, null, 1) + '\n');

// Sweep presets (presets/sweeps/*.json), copied byte for byte: the page hashes their exact text.
mkdirSync(join(assets, 'sweeps'), {recursive: true});
const sweeps = readdirSync(join(root, 'presets', 'sweeps')).filter((f) => f.endsWith('.json')).sort().map((file) => {
  const doc = JSON.parse(readFileSync(join(root, 'presets', 'sweeps', file), 'utf8'));
  copyFileSync(join(root, 'presets', 'sweeps', file), join(assets, 'sweeps', file));
  return {id: file.replace(/\.json$/, ''), file, name: doc.name ?? '', description: doc.description ?? ''};
});
writeFileSync(join(assets, 'sweeps', 'index.json'), JSON.stringify({sweeps}, null, 1) + '\n');

copyFileSync(join(root, 'profiles', 'index.json'), join(assets, 'profiles_index.json'));

// uPlot ships its minified build as a script defining `var uPlot`; export it as a module.
const uplot = join(root, 'node_modules', 'uplot', 'dist');
const iife = readFileSync(join(uplot, 'uPlot.iife.min.js'), 'utf8');
const version = JSON.parse(readFileSync(join(root, 'node_modules', 'uplot', 'package.json'), 'utf8')).version;
writeFileSync(join(assets, 'uplot.mjs'), `// uPlot ${version} (MIT, Leon Sorokin), from node_modules by scripts/build_web\n${iife}\nexport default uPlot;\n`);
copyFileSync(join(uplot, 'uPlot.min.css'), join(assets, 'uPlot.min.css'));

console.log(`web/assets: ${presets.length} presets, ${sweeps.length} sweeps, profiles index, uPlot ${version}`);
