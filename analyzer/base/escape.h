/* SPDX-License-Identifier: MIT */
/*
 * Control characters in names that come from traces. A terminal acts on them (ESC [2J
 * clears the screen, \r rewrites the line, CSI sequences set titles or colours), so no
 * output meant for a terminal or a text file carries one raw: each writer passes names
 * through one of these, at one place.
 */
#ifndef ISC_ESCAPE_H
#define ISC_ESCAPE_H

#include <stddef.h>

/* Length of the control character at s: 1 for a C0 control (0x00-0x1f) or DEL, 2 for a
 * C1 control (U+0080-U+009F, 0xc2 0x80-0x9f in UTF-8), 0 when s does not start one. */
size_t isc_ctrl_len(const char *s);

/* s into out (cap > 0 bytes, always terminated, cut at a whole escape when full) with
 * each control byte written as \xNN, or each control character as repl when repl is
 * not '\0'. Returns the length written. */
size_t isc_esc_ctrl(char *out, size_t cap, const char *s, char repl);

/* The same in memory of its own (free()), NULL when there is none. */
char *isc_esc_ctrl_dup(const char *s);

#endif /* ISC_ESCAPE_H */
