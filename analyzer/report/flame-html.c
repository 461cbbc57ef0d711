/* SPDX-License-Identifier: MIT */
/*
 * The flame graph of the HTML report: the window's CPU samples as a tree (process, thread,
 * then frames outermost first), written as a flat table that an inline script draws as
 * SVG. Click a frame to zoom to it (click the root to zoom out); hover for the name, self
 * and total time. Frames under 0.1 % of the total are left out. No external URL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/model/profile.h"
#include "analyzer/report/report.h"
#include "analyzer/report/svg.h"

struct node {
	uint32_t name, parent;
	int64_t total, self;
};

struct tree {
	const struct isc_trace *t;
	struct isc_wmap names, kids;
	char **text;
	struct node *n;
	size_t nn, cap, cap_text;
};

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	}
	return h;
}

static int64_t name(struct tree *tr, const char *s)
{
	bool added;
	size_t k = isc_wmap_get(&tr->names, fnv(s), strlen(s), &added);
	if (k == SIZE_MAX) {
		return -1;
	}
	if (added) {
		if (k >= tr->cap_text) {
			size_t cap = tr->cap_text ? tr->cap_text * 2 : 256;
			char **v = realloc(tr->text, cap * sizeof(*v));
			if (v == NULL) {
				return -1;
			}
			tr->text = v;
			tr->cap_text = cap;
		}
		tr->text[k] = strdup(s);
		if (tr->text[k] == NULL) {
			return -1;
		}
	}
	return (int64_t)k;
}

/* The child of parent named s, added when new; its index or -1. */
static int64_t child(struct tree *tr, uint32_t parent, const char *s)
{
	int64_t nm = name(tr, s);
	bool added;
	size_t k = nm < 0 ? SIZE_MAX : isc_wmap_get(&tr->kids, parent, (uint64_t)nm, &added);
	if (k == SIZE_MAX) {
		return -1;
	}
	if (added) {
		if (tr->nn == tr->cap) {
			size_t cap = tr->cap ? tr->cap * 2 : 256;
			struct node *v = realloc(tr->n, cap * sizeof(*v));
			if (v == NULL) {
				return -1;
			}
			tr->n = v;
			tr->cap = cap;
		}
		tr->n[tr->nn++] = (struct node){ (uint32_t)nm, parent, 0, 0 };
	}
	return (int64_t)k + 1; /* node 0 is the root */
}

static int add_sample(struct tree *tr, const struct isc_ev *e, const struct isc_stack_ref *r)
{
	const struct isc_trace *t = tr->t;
	const struct isc_thread_info *ti = &t->threads[e->thread];
	char buf[512];
	int64_t w = (int64_t)e->v.bytes;
	tr->n[0].total += w;
	snprintf(buf, sizeof(buf), "pid %lld", (long long)t->inputs[e->input].pid);
	int64_t at = child(tr, 0, buf);
	snprintf(buf, sizeof(buf), "%s %lld", ti->name ? isc_trace_str(t, ti->name) : "thread",
		 (long long)ti->tid);
	at = at < 0 ? -1 : (tr->n[at].total += w, child(tr, (uint32_t)at, buf));
	for (size_t i = r->n; at >= 0 && i-- > 0;) {
		tr->n[at].total += w;
		isc_folded_frame(t, isc_stack_frame(r, i), buf, sizeof(buf));
		at = child(tr, (uint32_t)at, buf);
	}
	if (at < 0) {
		return -ENOMEM;
	}
	tr->n[at].total += w;
	tr->n[at].self += w;
	return 0;
}

static const char script[] =
	"(function(){var N=ISC_FG.n,S=ISC_FG.s,W=960,H=16,svg=document.getElementById('flame'),"
	"kids=N.map(function(){return[]}),dep=[0];"
	"for(var i=1;i<N.length;i++){kids[N[i][1]].push(i);dep[i]=dep[N[i][1]]+1;}"
	"var md=Math.max.apply(null,dep);svg.setAttribute('height',(md+1)*H);"
	"function us(v){return v>=1e6?(v/1e6).toFixed(3)+' s':(v/1e3).toFixed(3)+' ms';}"
	"function draw(f){while(svg.firstChild)svg.removeChild(svg.firstChild);var ns="
	"'http://www.w3.org/2000/svg',sc=W/N[f][2];"
	"function box(i,x,w){var g=document.createElementNS(ns,'g'),r="
	"document.createElementNS(ns,'rect'),t=document.createElementNS(ns,'text'),ti="
	"document.createElementNS(ns,'title');r.setAttribute('x',x);r.setAttribute('y',"
	"dep[i]*H);r.setAttribute('width',Math.max(w-0.5,0.5));r.setAttribute('height',H-1);"
	"var h=(S[N[i][0]].length*37)%60;r.setAttribute('fill','hsl('+(i?h+10:0)+',75%,'+"
	"(i?62:80)+'%)');ti.textContent=S[N[i][0]]+' \\u2014 self '+us(N[i][3])+', total '+"
	"us(N[i][2]);g.appendChild(ti);g.appendChild(r);if(w>40){t.setAttribute('x',x+3);"
	"t.setAttribute('y',dep[i]*H+12);t.setAttribute('font-size','11');t.textContent="
	"S[N[i][0]].slice(0,Math.floor(w/7));g.appendChild(t);}g.setAttribute('class','fr');"
	"g.onclick=function(){draw(i===f?(N[i][1]||0):i)};svg.appendChild(g);}"
	"function walk(i,x){var w=N[i][2]*sc;if(w<0.3)return;box(i,x,w);var cx=x;kids[i]"
	".forEach(function(k){walk(k,cx);cx+=N[k][2]*sc;});}"
	"var a=f;while(a>0){a=N[a][1];box(a,0,W);}walk(f,0);"
	"svg.setAttribute('data-focus',f);}draw(0);})();";

static void emit(FILE *f, const struct tree *tr)
{
	int64_t min = tr->n[0].total / 1000; /* 0.1 % */
	uint32_t *id = calloc(tr->nn + 1, sizeof(*id));
	if (id == NULL) {
		return;
	}
	fprintf(f, "<script>var ISC_FG={s:[");
	for (size_t i = 0; i < tr->names.n; i++) {
		fprintf(f, "%s\"", i ? "," : "");
		for (const char *c = tr->text[i]; *c; c++) {
			if (*c == '"' || *c == '\\') {
				fputc('\\', f);
			}
			if (*c == '<') {
				fprintf(f, "\\u003c");
			} else if ((unsigned char)*c >= 0x20) {
				fputc(*c, f);
			}
		}
		fputc('"', f);
	}
	fprintf(f, "],n:[[%u,null,%lld,%lld]", (unsigned)name((struct tree *)tr, "all"),
		(long long)tr->n[0].total, (long long)tr->n[0].self);
	uint32_t next = 1;
	/* Children come after their parents (added in that order): ids stay topological. */
	for (size_t i = 1; i < tr->nn; i++) {
		const struct node *n = &tr->n[i];
		if (n->total < min || (n->parent != 0 && id[n->parent] == 0)) {
			continue;
		}
		id[i] = next++;
		fprintf(f, ",[%u,%u,%lld,%lld]", n->name, id[n->parent], (long long)n->total,
			(long long)n->self);
	}
	fprintf(f, "]};</script>\n");
	free(id);
}

int isc_html_flame(FILE *f, const struct isc_trace *t, const struct isc_analysis *a)
{
	if (a->prof == NULL) {
		return 0;
	}
	struct tree tr = { .t = t };
	int r = name(&tr, "all") < 0 ? -ENOMEM : 0;
	tr.n = calloc(256, sizeof(*tr.n));
	tr.cap = 256;
	tr.nn = 1;
	r = tr.n == NULL ? -ENOMEM : r;
	for (size_t i = 0; i < t->n && r == 0; i++) {
		const struct isc_ev *e = &t->ev[i];
		struct isc_stack_ref st;
		if (e->type == ISC_T_CPU_SAMPLE && e->ts >= a->window.start &&
		    e->ts <= a->window.end && e->thread < t->n_threads && isc_stack_of(t, e, &st)) {
			r = add_sample(&tr, e, &st);
		}
	}
	if (r == 0) {
		fprintf(f, "<h2>Flame graph (CPU samples)</h2>\n<p class=\"note\">Click a frame "
			   "to zoom, the root to zoom out; hover for self and total time.</p>\n"
			   "<svg id=\"flame\" width=\"960\" xmlns=\"http://www.w3.org/2000/svg\" "
			   "style=\"cursor:pointer;font-family:monospace\"></svg>\n");
		emit(f, &tr);
		fprintf(f, "<script>%s</script>\n", script);
	}
	for (size_t i = 0; i < tr.names.n; i++) {
		free(tr.text[i]);
	}
	free(tr.text);
	free(tr.n);
	isc_wmap_free(&tr.names);
	isc_wmap_free(&tr.kids);
	return r;
}
