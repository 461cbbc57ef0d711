/* SPDX-License-Identifier: MIT */
/*
 * The HTML timeline's time axis and zoom: ticks at 1, 2 or 5 x 10^k of one unit (the
 * C side draws them for the whole window; the page's script redraws them for the part
 * in view), the lanes as JSON beside the picture (pid, tid, thread name, GPU stream),
 * and the self-contained script that zooms and pans the lanes (wheel, drag, buttons).
 */
#include <math.h>
#include <stdio.h>

#include "analyzer/report/svg.h"

void isc_svg_ticks(double span_ns, struct isc_ticks *k)
{
	double raw = span_ns > 0 ? span_ns / ISC_SVG_TICKS : 1;
	double mag = pow(10, floor(log10(raw))), f = raw / mag;
	k->step_ns = mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
	k->unit_ns = k->step_ns >= 1e9	 ? 1e9
		     : k->step_ns >= 1e6 ? 1e6
		     : k->step_ns >= 1e3 ? 1e3
					 : 1;
	k->unit = k->unit_ns == 1e9   ? "s"
		  : k->unit_ns == 1e6 ? "ms"
		  : k->unit_ns == 1e3 ? "us"
				      : "ns";
	int d = -(int)floor(log10(k->step_ns / k->unit_ns) + 1e-9);
	k->decimals = d > 0 ? d : 0;
}

/* A JSON string inside <script>: quotes, backslashes, control characters and '<' (so
 * that no "</script>" can end the element) as \u escapes. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p < 0x20 || *p == '"' || *p == '\\' || *p == '<' || *p == '>' || *p == '&') {
			fprintf(f, "\\u%04x", *p);
		} else {
			fputc(*p, f);
		}
	}
	fputc('"', f);
}

void isc_html_lanes_begin(FILE *f, int64_t start_ns, int64_t span_ns)
{
	fprintf(f,
		"<script type=\"application/json\" id=\"timeline-lanes\">{\"start_ns\":%lld,"
		"\"span_ns\":%lld,\"width\":%d,\"lanes\":[",
		(long long)start_ns, (long long)span_ns, ISC_SVG_WIDTH);
}

void isc_html_lane_thread(FILE *f, bool first, long long pid, long long tid, const char *name)
{
	fprintf(f, "%s{\"kind\":\"thread\",\"pid\":%lld,\"tid\":%lld,\"name\":", first ? "" : ",",
		pid, tid);
	json_str(f, name != NULL ? name : "");
	fputc('}', f);
}

void isc_html_lane_gpu(FILE *f, bool first, int device, int stream)
{
	fprintf(f, "%s{\"kind\":\"gpu\",\"device\":%d,\"stream\":%d}", first ? "" : ",", device,
		stream);
}

void isc_html_lanes_end(FILE *f)
{
	fprintf(f, "]}</script>\n");
}

/* Zoom and pan by a transform of the lanes' marks (#tl-view) along x only; the axis
 * (#tl-axis) is redrawn for the span in view with the C side's tick rule. */
static const char zoom_js[] =
	"(function(){var s=document.getElementById('timeline');if(!s)return;"
	"var v=document.getElementById('tl-view'),ax=document.getElementById('tl-axis'),"
	"rd=document.getElementById('tl-range'),N='http://www.w3.org/2000/svg',"
	"W=+s.getAttribute('width'),H=+s.getAttribute('height'),"
	"span=+s.getAttribute('data-span-ns'),MAXK=+s.getAttribute('data-max-zoom'),"
	"k=1,tx=0,drag=null;"
	"function nice(r){var m=Math.pow(10,Math.floor(Math.log10(r))),f=r/m;"
	"return m*(f<1.5?1:f<3.5?2:f<7.5?5:10)}"
	"function unit(st){return st>=1e9?[1e9,'s']:st>=1e6?[1e6,'ms']:st>=1e3?[1e3,'us']:[1,'ns']}"
	"function el(n,a){var e=document.createElementNS(N,n);"
	"for(var q in a)e.setAttribute(q,a[q]);return e}"
	"function draw(){v.setAttribute('transform','translate('+tx+',0) scale('+k+',1)');"
	"while(ax.firstChild)ax.removeChild(ax.firstChild);"
	"var t0=-tx/k/W*span,t1=(W-tx)/k/W*span;if(!(span>0))return;"
	"var st=nice((t1-t0)/" ISC_SVG_TICKS_STR "),u=unit(st),"
	"d=Math.max(0,-Math.floor(Math.log10(st/u[0])+1e-9));"
	"for(var i=Math.ceil(t0/st);i*st<=t1;i++){var x=tx+k*i*st/span*W;"
	"ax.appendChild(el('line',{x1:x,y1:14,x2:x,y2:H,stroke:'#ddd'}));"
	"var t=el('text',{'class':'tick',x:x+1,y:11,'font-size':9});"
	"t.textContent=(i*st/u[0]).toFixed(d)+' '+u[1];ax.appendChild(t)}"
	"if(rd)rd.textContent=k>1?'showing '+(t0/u[0]).toFixed(d+1)+' - '+"
	"(t1/u[0]).toFixed(d+1)+' '+u[1]+' (x'+k.toFixed(1)+')':''}"
	"function clamp(){k=Math.max(1,Math.min(MAXK,k));tx=Math.min(0,Math.max(W-k*W,tx))}"
	"function at(px,f){var x=(px-tx)/k;k*=f;clamp();tx=px-k*x;clamp();draw()}"
	"function px(e){var r=s.getBoundingClientRect();return(e.clientX-r.left)*W/r.width}"
	"s.addEventListener('wheel',function(e){e.preventDefault();"
	"at(px(e),e.deltaY<0?1.25:0.8)},{passive:false});"
	"s.addEventListener('mousedown',function(e){drag={x:px(e),tx:tx}});"
	"window.addEventListener('mousemove',function(e){if(!drag)return;"
	"tx=drag.tx+px(e)-drag.x;clamp();draw()});"
	"window.addEventListener('mouseup',function(){drag=null});"
	"s.addEventListener('dblclick',function(){k=1;tx=0;draw()});"
	"function btn(id,f){var b=document.getElementById(id);"
	"if(b)b.addEventListener('click',f)}"
	"btn('tl-zoom-in',function(){at(W/2,2)});btn('tl-zoom-out',function(){at(W/2,0.5)});"
	"btn('tl-reset',function(){k=1;tx=0;draw()});draw()})();";

const char *isc_html_zoom_script(void)
{
	return zoom_js;
}

void isc_html_zoom_controls(FILE *f)
{
	fprintf(f, "<p class=\"note\"><button id=\"tl-zoom-in\">zoom in</button> "
		   "<button id=\"tl-zoom-out\">zoom out</button> "
		   "<button id=\"tl-reset\">reset</button> wheel zooms at the pointer, drag "
		   "pans, double-click resets <span id=\"tl-range\"></span></p>\n");
}
