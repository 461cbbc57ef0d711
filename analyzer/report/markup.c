/* SPDX-License-Identifier: MIT */
/* Escaping for the writers: markdown cells (markdown.c, gate-markdown.c) and one escaper
 * for HTML, SVG and JUnit XML (html.c, svg.c, gate-junit.c). */
#include "analyzer/report/markup.h"

#include <string.h>

#define NAME_MAX_SHOWN 80

void isc_md_cell(FILE *f, const char *s)
{
	size_t n = strlen(s);
	size_t shown = n > NAME_MAX_SHOWN ? NAME_MAX_SHOWN - 3 : n;
	for (size_t i = 0; i < shown; i++) {
		char c = s[i];
		if (c == '|' || c == '`' || c == '*' || c == '_' || c == '<' || c == '>') {
			fputc('\\', f);
		}
		fputc(c == '\n' || c == '\r' ? ' ' : c, f);
	}
	if (shown < n) {
		fputs("...", f);
	}
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
 * what XML 1.0 cannot carry (control characters, bytes that are not UTF-8 - names come
 * from traces) as '?'. */
void isc_html_text(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	while (*s != '\0') {
		if (*s >= 0x80) {
			size_t n = utf8_len(s);
			if (n == 0) {
				fputc('?', f);
				n = 1;
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
			fputc(*s < 0x20 ? '?' : *s, f);
			break;
		}
		s++;
	}
}
