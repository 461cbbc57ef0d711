/* SPDX-License-Identifier: MIT */
/*
 * Opens a file with speedscope's own importer, as the viewer does when a file is dropped on
 * it, and prints what it made of it as JSON: one entry per profile (speedscope makes one per
 * thread), its name and the names of its frames.
 *
 *   node speedscope-import.js SPEEDSCOPE_BUNDLE.js FILE
 *
 * The bundle is the viewer's release script (npm's speedscope, dist/release/speedscope-*.js):
 * one function expression whose import functions are its own. The harness runs it in a bare
 * context with the browser objects stubbed (the page itself fails to start, which does not
 * matter), after adding one line at its top that hands out its file-import entry point. The
 * entry point's name is the bundle's, so the harness names the speedscope version it knows
 * (setup.sh installs that one; release.txt beside the bundle says which it is) and refuses
 * any other rather than misread it.
 */
'use strict';
const fs = require('fs');
const vm = require('vm');

const KNOWN = {'1.25.0': {importer: '_f', init: 'hf'}};
const [bundlePath, file] = process.argv.slice(2);
let src = fs.readFileSync(bundlePath, 'utf8');
const path = require('path');
const release = path.join(path.dirname(bundlePath), 'release.txt');
const version = (fs.readFileSync(release, 'utf8').match(/^speedscope@(\S+)/) || [])[1];
const names = KNOWN[version];
if (!names) {
  console.error(`speedscope ${version}: not a version this harness knows`);
  process.exit(2);
}
const head = '"use strict";(()=>{';
if (!src.startsWith(head)) {
  console.error('not the speedscope release bundle');
  process.exit(2);
}
src = head + `globalThis.__isc=()=>({importer:${names.importer},init:${names.init}});` +
  src.slice(head.length);

const stub = new Proxy(function() {}, {
  get: (t, p) => (p === Symbol.toPrimitive ? () => '' : stub),
  apply: () => stub,
  construct: () => stub,
});
const ctx = {
  console: {log() {}, warn() {}, error() {}, info() {}},
  setTimeout, clearTimeout, TextDecoder, TextEncoder, URL,
  window: stub, document: stub, navigator: {userAgent: 'node'},
  location: {hash: '', search: ''},
};
ctx.self = ctx;
ctx.globalThis = ctx;
vm.createContext(ctx);
try {
  vm.runInContext(src, ctx);
} catch (e) {
  /* the page's start-up, with no page */
}
const m = ctx.__isc();
m.init();
const group = m.importer(JSON.parse(fs.readFileSync(file, 'utf8')));
const out = group.profiles.map(p => {
  const frames = new Set();
  p.forEachFrame(f => frames.add(f.name));
  return {name: p.getName(), weight: p.getTotalWeight(), frames: [...frames].sort()};
});
process.stdout.write(JSON.stringify(out) + '\n');
