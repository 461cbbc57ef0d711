/* SPDX-License-Identifier: MIT */
/* Escaping for the writers: the markdown stream and its cells (markdown.c,
 * gate-markdown.c) and one escaper for HTML, SVG and JUnit XML (html.c, svg.c,
 * gate-junit.c). */
#include "analyzer/report/markup.h"
#include "analyzer/base/escape.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define NAME_MAX_SHOWN 80

void isc_md_cell(FILE *f, const char *s)
{
	size_t n = strlen(s);
	size_t shown = n > NAME_MAX_SHOWN ? NAME_MAX_SHOWN - 3 : n;
	for (size_t i = 0; i < shown; i++) {
		char c = s[i];
		if (c == '|' || c == '`' || c == '*' || c == '_' || c == '>') {
			fputc('\\', f);
		}
		fputc(c == '\n' || c == '\r' ? ' ' : c, f);
	}
	if (shown < n) {
		fputs("...", f);
	}
}

/* The state of an isc_md_open stream: its target, and a 0xc2 held back until the next
 * byte says whether it starts a C1 control. */
struct md_out {
	FILE *f;
	bool c2;
};

static ssize_t md_write(void *cookie, const char *buf, size_t n)
{
	struct md_out *o = cookie;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (o->c2) {
			o->c2 = false;
			if (c >= 0x80 && c <= 0x9f) {
				fprintf(o->f, "\\xc2\\x%02x", c);
				continue;
			}
			fputc(0xc2, o->f);
		}
		if (c == 0xc2) {
			o->c2 = true;
		} else if (c == '<') {
			fputs("\\<", o->f);
		} else if ((c < 0x20 && c != '\n') || c == 0x7f) {
			fprintf(o->f, "\\x%02x", c);
		} else {
			fputc(c, o->f);
		}
	}
	return ferror(o->f) ? -1 : (ssize_t)n;
}

static int md_close(void *cookie)
{
	struct md_out *o = cookie;
	if (o->c2) {
		fputc(0xc2, o->f);
	}
	int r = ferror(o->f) ? -1 : 0;
	free(o);
	return r;
}

FILE *isc_md_open(FILE *f)
{
	struct md_out *o = calloc(1, sizeof(*o));
	if (o == NULL) {
		return NULL;
	}
	o->f = f;
	FILE *s = fopencookie(o, "w",
			      (cookie_io_functions_t){ .write = md_write, .close = md_close });
	if (s == NULL) {
		free(o);
	}
	return s;
}

/* Length of the valid UTF-8 sequence at s, 0 when the byte does not start one
 * (overlong forms and surrogates included, which XML parsers refuse). */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	if (n == 0 || s[0] > 0xf4 || (s[0] == 0xe0 && s[1] < 0xa0) ||
	    (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] >= 0x90)) {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
	}
	return n;
}

/* Text for an element or attribute of HTML, SVG or XML (JUnit): markup escaped, and
 * what XML 1.0 cannot carry or a browser would act on (C0, DEL and C1 controls, bytes
 * that are not UTF-8 - names come from traces) as '?'. */
void isc_html_text(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	while (*s != '\0') {
		if (*s >= 0x80) {
			size_t n = utf8_len(s), c1 = isc_ctrl_len((const char *)s);
			if (n == 0 || c1 > 0) {
				fputc('?', f);
				n = c1 > 0 ? c1 : 1;
			} else {
				fwrite(s, 1, n, f);
			}
			s += n;
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		case '\t':
		case '\n':
			fputc(*s, f);
			break;
		default:
			fputc(*s < 0x20 || *s == 0x7f ? '?' : *s, f);
			break;
		}
		s++;
	}
}
