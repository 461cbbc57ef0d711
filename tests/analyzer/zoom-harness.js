// SPDX-License-Identifier: MIT
// Runs the HTML report's zoom script (argv[2]) against a minimal DOM - the elements it
// looks up by id, a 1200-unit-wide #timeline spanning argv[3] ns - acts on it (zoom-in
// button, wheel at the left edge, a drag, reset) and prints the axis labels and the
// marks' transform after each step as one JSON line (tests/analyzer/test-html.c).
'use strict';
const fs = require('fs');
const src = fs.readFileSync(process.argv[2], 'utf8');
const span = process.argv[3];
const W = 1200;

function El(tag) {
	this.tag = tag;
	this.attrs = {};
	this.children = [];
	this.listeners = {};
	this.textContent = '';
}
El.prototype.setAttribute = function (k, v) { this.attrs[k] = String(v); };
El.prototype.getAttribute = function (k) { return k in this.attrs ? this.attrs[k] : null; };
El.prototype.appendChild = function (c) { this.children.push(c); return c; };
El.prototype.removeChild = function (c) { this.children.splice(this.children.indexOf(c), 1); };
Object.defineProperty(El.prototype, 'firstChild', { get() { return this.children[0] || null; } });
El.prototype.addEventListener = function (t, f) { (this.listeners[t] = this.listeners[t] || []).push(f); };
El.prototype.getBoundingClientRect = function () { return { left: 0, width: W }; };

const ids = {};
for (const id of ['timeline', 'tl-view', 'tl-axis', 'tl-range', 'tl-zoom-in', 'tl-zoom-out', 'tl-reset']) {
	ids[id] = new El('g');
}
Object.assign(ids.timeline.attrs, { width: String(W), height: '100', 'data-span-ns': span, 'data-max-zoom': '64' });
const win = new El('window');
global.document = { getElementById: (id) => ids[id] || null, createElementNS: (ns, t) => new El(t) };
global.window = win;
new Function(src)();

const ticks = () => ids['tl-axis'].children.filter((c) => c.tag === 'text').map((c) => c.textContent);
const view = () => ids['tl-view'].getAttribute('transform');
const fire = (el, t, e) => (el.listeners[t] || []).forEach((f) => f(Object.assign({ preventDefault() {} }, e)));
const out = { initial: ticks(), initial_view: view() };
fire(ids['tl-zoom-in'], 'click');
out.zoom2 = ticks();
out.zoom2_view = view();
fire(ids.timeline, 'wheel', { clientX: 0, deltaY: -1 });
out.wheel_view = view();
fire(ids.timeline, 'mousedown', { clientX: 600 });
fire(win, 'mousemove', { clientX: 700 });
fire(win, 'mouseup', {});
out.drag_view = view();
fire(ids['tl-reset'], 'click');
out.reset = ticks();
out.reset_view = view();
console.log(JSON.stringify(out));
