/* SPDX-License-Identifier: MIT */
/*
 * Source lines from .debug_line (dwarf-lines.h). The first lookup in a module runs its
 * line programs once and keeps one entry per sequence (a function or a compilation
 * unit's code: start, end, where its program starts); a lookup is then a binary search
 * and one sequence's program run to the row that covers the address. DWARF 2 to 5,
 * 32- and 64-bit; file names given by DW_FORM_string, strp or line_strp (what GCC and
 * Clang write; the strx forms need .debug_str_offsets and are not read).
 *
 * With .debug_aranges (GCC writes it; a set per unit, in the order of .debug_info) the
 * index holds only the programs that lookups needed: the set that covers an address gives
 * its unit's rank, which is its line program's rank in .debug_line (a linker concatenates
 * both sections unit by unit), and a compressed .debug_line is inflated only to that
 * program's end. That is libc's case (libc6-dbg): a few of its 2,063 programs instead of
 * all 1.3 MB of them, at a trace's exit. The answer must be the one the whole index gives,
 * so a program whose sequences do not all lie in its unit's ranges (the ranks do not
 * match), ranges that overlap, sequences with one start, a program with no sequence in a
 * unit with code: the whole index, as without the section.
 */
#include <stddef.h>
#include <string.h>

#include "preload/samplers/decompress.h"
#include "preload/samplers/dwarf-lines.h"
#include "preload/samplers/heap-sort.h"
#include "format/scratch.h"

struct isc_dl_seq {
	uint64_t lo, hi;
	uint32_t unit, at; /* offsets in .debug_line: the unit's header, the sequence's first op */
};

/* A range of .debug_aranges; lo first, for isc_heap_sort_u64 */
struct isc_dl_range {
	uint64_t lo, hi;
	uint64_t unit; /* the unit's rank in .debug_aranges, its line program's in .debug_line */
};

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t fixed(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		v |= (uint64_t)c->p[i] << (8 * i);
	}
	c->p += n;
	return v;
}

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; !c->bad; shift += 7) {
		if (c->p >= c->end || shift > 63) {
			c->bad = true;
			break;
		}
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			break;
		}
	}
	return v;
}

static int64_t sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	do {
		if (c->bad || c->p >= c->end || shift > 63) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40)) {
		v |= ~0ull << shift;
	}
	return (int64_t)v;
}

static const char *cstr(struct cur *c)
{
	const uint8_t *z = c->bad ? NULL : memchr(c->p, 0, (size_t)(c->end - c->p));
	if (z == NULL) {
		c->bad = true;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = z + 1;
	return s;
}

struct hdr {
	unsigned version, off_size;
	uint8_t min_inst, line_range, opcode_base;
	int line_base;
	const uint8_t *std_len, *tables, *prog, *end;
};

static bool header(const struct isc_dwarf_lines *d, size_t off, struct hdr *h)
{
	struct cur c = { d->line + off, d->line + d->n_line, false };
	uint64_t len = fixed(&c, 4);
	h->off_size = 4;
	if (len == 0xffffffffu) {
		len = fixed(&c, 8);
		h->off_size = 8;
	} else if (len >= 0xfffffff0u) {
		return false;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p)) {
		return false;
	}
	h->end = c.p + len;
	c.end = h->end;
	h->version = (unsigned)fixed(&c, 2);
	if (h->version < 2 || h->version > 5) {
		return false;
	}
	if (h->version == 5) {
		fixed(&c, 2); /* address and segment selector sizes */
	}
	uint64_t hlen = fixed(&c, h->off_size);
	if (c.bad || hlen > (uint64_t)(c.end - c.p)) {
		return false;
	}
	h->prog = c.p + hlen;
	h->min_inst = (uint8_t)fixed(&c, 1);
	if (h->version >= 4) {
		fixed(&c, 1); /* maximum operations per instruction: VLIW only */
	}
	fixed(&c, 1); /* default_is_stmt */
	h->line_base = (int8_t)fixed(&c, 1);
	h->line_range = (uint8_t)fixed(&c, 1);
	h->opcode_base = (uint8_t)fixed(&c, 1);
	h->std_len = c.p;
	c.p += h->opcode_base > 0 ? h->opcode_base - 1 : 0;
	h->tables = c.p;
	return !c.bad && h->line_range != 0 && h->opcode_base != 0 && h->tables <= h->prog;
}

/* A string attribute of form f, or skips an attribute of another form; false: a form
 * this reader does not know. */
static bool form(struct isc_dwarf_lines *d, const struct hdr *h, struct cur *c, uint64_t f,
		 const char **s)
{
	uint64_t o;
	switch (f) {
	case 0x08: /* DW_FORM_string */
		*s = cstr(c);
		return !c->bad;
	case 0x1f: /* DW_FORM_line_strp */
	case 0x0e: /* DW_FORM_strp */
		o = fixed(c, h->off_size);
		if (f == 0x0e && d->str_z != NULL) {
			/* GCC's and Clang's DWARF 5 name files in .debug_line_str: a compressed
			 * .debug_str is inflated only for a table that uses it */
			d->str = isc_elf_section_inflate(d->str_z, d->n_str_z, &d->n_str);
			d->n_str = d->str ? d->n_str : 0;
			d->str_z = NULL;
		}
		if (f == 0x1f ? o < d->n_line_str : o < d->n_str) {
			const char *base = (const char *)(f == 0x1f ? d->line_str : d->str);
			size_t n = f == 0x1f ? d->n_line_str : d->n_str;
			*s = memchr(base + o, 0, n - o) ? base + o : NULL;
		}
		return !c->bad;
	case 0x0f: /* DW_FORM_udata */
		uleb(c);
		return !c->bad;
	case 0x0b: /* data1, data2, data4, data8, data16 */
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x1e:
		fixed(c, f == 0x0b ? 1 : f == 0x05 ? 2 : f == 0x06 ? 4 : 8);
		fixed(c, f == 0x1e ? 8 : 0);
		return !c->bad;
	case 0x09: /* DW_FORM_block */
		o = uleb(c);
		if (!c->bad && o <= (uint64_t)(c->end - c->p)) {
			c->p += o;
			return true;
		}
		return false;
	default:
		return false;
	}
}

/* DWARF 5's directory or file table at c: entry k's path into *name (NULL: no such
 * entry or no path); c is left after the table. */
static bool table5(struct isc_dwarf_lines *d, const struct hdr *h, struct cur *c, uint64_t k,
		   const char **name)
{
	uint64_t fmt[16][2];
	unsigned nf = (unsigned)fixed(c, 1);
	if (nf > 16) {
		return false;
	}
	for (unsigned i = 0; i < nf; i++) {
		fmt[i][0] = uleb(c);
		fmt[i][1] = uleb(c);
	}
	uint64_t n = uleb(c);
	for (uint64_t e = 0; e < n && !c->bad; e++) {
		for (unsigned i = 0; i < nf; i++) {
			const char *s = NULL;
			if (!form(d, h, c, fmt[i][1], &s)) {
				return false;
			}
			if (e == k && fmt[i][0] == 1) { /* DW_LNCT_path */
				*name = s;
			}
		}
	}
	return !c->bad;
}

/* The name of file index k of the unit (1-based before DWARF 5, 0-based from 5). */
static const char *file_name(struct isc_dwarf_lines *d, const struct hdr *h, uint64_t k)
{
	struct cur c = { h->tables, h->prog, false };
	const char *name = NULL;
	if (h->version == 5) {
		if (!table5(d, h, &c, UINT64_MAX, &name) || !table5(d, h, &c, k, &name)) {
			return NULL;
		}
		return name;
	}
	for (const char *s = cstr(&c); s != NULL && *s != '\0'; s = cstr(&c)) {
	} /* include directories */
	for (uint64_t i = 1; !c.bad; i++) {
		const char *s = cstr(&c);
		if (s == NULL || *s == '\0') {
			return NULL;
		}
		uleb(&c);
		uleb(&c);
		uleb(&c);
		if (i == k) {
			return s;
		}
	}
	return NULL;
}

struct job {
	struct isc_dwarf_lines *d; /* index: sequences appended */
	uint32_t unit;
	uint64_t pc; /* lookup: the row covering pc into file, line */
	uint64_t file;
	unsigned line;
	bool found;
};

static void add_seq(struct job *j, uint64_t lo, uint64_t hi, const uint8_t *at)
{
	struct isc_dwarf_lines *d = j->d;
	size_t off = (size_t)(at - d->line);
	if (lo == 0 || hi <= lo || off > UINT32_MAX) {
		return; /* code the linker dropped keeps address 0 */
	}
	if ((d->n_seq + 1) * sizeof(*d->seq) > d->mapped) {
		size_t bytes = d->mapped ? d->mapped * 2 : 65536;
		struct isc_dl_seq *s = isc_map(bytes);
		if (s == NULL) {
			return;
		}
		if (d->seq) {
			memcpy(s, d->seq, d->n_seq * sizeof(*s));
			isc_unmap(d->seq, d->mapped);
		}
		d->seq = s;
		d->mapped = bytes;
	}
	d->seq[d->n_seq++] = (struct isc_dl_seq){ lo, hi, j->unit, (uint32_t)off };
}

/* A lookup: runs the sequence that starts at `from` to the row that covers j->pc (the
 * index has its own pass, index_unit). */
static void run(const struct hdr *h, const uint8_t *from, struct job *j)
{
	struct cur c = { from, h->end, false };
	uint64_t addr = 0, file = 1;
	int64_t line = 1;
	while (c.p < c.end && !c.bad) {
		uint8_t op = (uint8_t)fixed(&c, 1);
		bool row = false, end = false;
		if (op >= h->opcode_base) {
			unsigned adj = op - h->opcode_base;
			addr += (uint64_t)(adj / h->line_range) * h->min_inst;
			line += h->line_base + (int)(adj % h->line_range);
			row = true;
		} else if (op == 0) {
			uint64_t len = uleb(&c);
			if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p)) {
				return;
			}
			const uint8_t *next = c.p + len;
			uint8_t sub = (uint8_t)fixed(&c, 1);
			if (sub == 1) {
				end = true;
			} else if (sub == 2 && len - 1 <= 8) {
				addr = fixed(&c, (unsigned)(len - 1));
			}
			c.p = next;
		} else if (op == 1) {
			row = true;
		} else if (op == 2) {
			addr += uleb(&c) * h->min_inst;
		} else if (op == 3) {
			line += sleb(&c);
		} else if (op == 4) {
			file = uleb(&c);
		} else if (op == 8) {
			addr += (uint64_t)((255 - h->opcode_base) / h->line_range) * h->min_inst;
		} else if (op == 9) {
			addr += fixed(&c, 2);
		} else {
			for (unsigned k = 0; k < h->std_len[op - 1]; k++) {
				uleb(&c);
			}
		}
		if (row) {
			if (addr > j->pc) {
				return; /* the previous row, if any, covers pc */
			}
			j->file = file;
			j->line = line > 0 && line <= UINT32_MAX ? (unsigned)line : 0;
			j->found = j->line > 0;
		}
		if (end) {
			j->found = j->found && j->pc < addr;
			return;
		}
	}
}

/* What each special opcode adds to the address, for the units of one header shape (a
 * compiler writes the same opcode_base, line_range and minimum instruction length in every
 * unit): the index then divides nothing per opcode. */
struct advance {
	uint8_t base, range, min;
	uint64_t by[256];
};

static void advance_for(struct advance *a, const struct hdr *h)
{
	if (a->base == h->opcode_base && a->range == h->line_range && a->min == h->min_inst) {
		return;
	}
	a->base = h->opcode_base;
	a->range = h->line_range;
	a->min = h->min_inst;
	for (unsigned op = 0; op < 256; op++) {
		a->by[op] = op >= a->base ? (uint64_t)((op - a->base) / a->range) * a->min : 0;
	}
}

/* Past a LEB128 at p: NULL when it runs past end. */
static inline const uint8_t *skip_leb(const uint8_t *p, const uint8_t *end)
{
	while (p < end && (*p & 0x80)) {
		p++;
	}
	return p < end ? p + 1 : NULL;
}

/* The index's pass over a unit's program: where each sequence starts (its first row) and
 * ends, without the line and file registers that a lookup needs (run). Most of the time of a first lookup in a large module
 * (libc's 1.5 MB of line programs) goes here, so the loop keeps its cursor and the header's
 * fields in locals (byte pointers alias everything: through the structures, every store
 * reloaded them). */
static void index_unit(const struct hdr *h, const struct advance *a, struct job *j)
{
	const uint8_t *p = h->prog, *end = h->end, *seq_at = p, *std_len = h->std_len;
	const unsigned base = h->opcode_base;
	const uint64_t min = h->min_inst;
	uint64_t addr = 0, seq_lo = 0;
	bool rows = false;
	while (p != NULL && p < end) {
		unsigned op = *p++;
		if (op >= base || op == 1) { /* a row: a special opcode or DW_LNS_copy */
			addr += a->by[op];   /* by[1] is 0 where 1 < base */
			seq_lo = rows ? seq_lo : addr;
			rows = true;
		} else if (op == 0) {
			struct cur c = { p, end, false };
			uint64_t len = uleb(&c);
			if (c.bad || len == 0 || len > (uint64_t)(end - c.p)) {
				return;
			}
			const uint8_t *next = c.p + len;
			uint8_t sub = *c.p++;
			if (sub == 1) {
				add_seq(j, seq_lo, addr, seq_at);
				addr = seq_lo = 0;
				rows = false;
				seq_at = next;
			} else if (sub == 2 && len - 1 <= 8) {
				addr = fixed(&c, (unsigned)(len - 1));
			}
			p = next;
		} else if (op == 2) {
			struct cur c = { p, end, false };
			addr += uleb(&c) * min;
			p = c.bad ? NULL : c.p;
		} else if (op == 8) {
			addr += a->by[255];
		} else if (op == 9) {
			if (end - p < 2) {
				return;
			}
			addr += (uint64_t)p[0] | (uint64_t)p[1] << 8;
			p += 2;
		} else {
			/* operands not needed here: skipped */
			for (unsigned k = std_len[op - 1]; k > 0 && p != NULL; k--) {
				p = skip_leb(p, end);
			}
		}
	}
}

/* The first n bytes of .debug_line inflated (or all of it there is). */
static void have(struct isc_dwarf_lines *d, size_t n)
{
	if (d->z == NULL || d->n_line >= n) {
		return;
	}
	d->n_line = isc_inflate_to(d->z, n);
	if (d->n_line == d->n_line_all || d->n_line < n) { /* all out, or bad data */
		isc_inflate_end(d->z);
		d->z = NULL;
	}
}

static void sort_seqs(struct isc_dwarf_lines *d)
{
	_Static_assert(sizeof(*d->seq) <= 64 && offsetof(struct isc_dl_seq, lo) == 0,
		       "isc_heap_sort_u64");
	isc_heap_sort_u64(d->seq, d->n_seq, sizeof(*d->seq));
}

/* Every program once (the index without .debug_aranges). */
static void index_lines(struct isc_dwarf_lines *d)
{
	d->mode = ISC_DL_WHOLE;
	d->n_seq = 0;
	have(d, d->n_line_all);
	struct advance a = { 0 };
	for (size_t off = 0; off < d->n_line;) {
		struct hdr h;
		if (!header(d, off, &h)) {
			break;
		}
		struct job j = { .d = d, .unit = (uint32_t)off };
		if (off <= UINT32_MAX) {
			advance_for(&a, &h);
			index_unit(&h, &a, &j);
			d->units_run++;
		}
		off = (size_t)(h.end - d->line);
	}
	sort_seqs(d);
}

/* The ranges of .debug_aranges by address, each with its unit's rank; false where they
 * cannot say which program covers an address: no section, a layout this reader does not
 * know (it reads version 2, 8-byte addresses, no segments), units out of order, ranges
 * that overlap. */
static bool read_ranges(struct isc_dwarf_lines *d)
{
	size_t n = d->n_aranges, cap = n / 16 + 1; /* a tuple is 16 bytes, a set at least 32 */
	if (d->aranges == NULL || n == 0) {
		return false;
	}
	d->mapped_units = cap * (sizeof(*d->range) + sizeof(*d->prog) + 1) + sizeof(*d->prog);
	d->range = isc_map(d->mapped_units);
	if (d->range == NULL) {
		return false;
	}
	d->prog = (uint32_t *)(d->range + cap);
	d->in_index = (uint8_t *)(d->prog + cap + 1);
	uint64_t last = 0;
	for (size_t off = 0; off < n; d->n_units++) {
		struct cur c = { d->aranges + off, d->aranges + n, false };
		uint64_t len = fixed(&c, 4);
		unsigned off_size = 4;
		if (len == 0xffffffffu) {
			len = fixed(&c, 8);
			off_size = 8;
		} else if (len >= 0xfffffff0u) {
			return false;
		}
		if (c.bad || len > (uint64_t)(c.end - c.p)) {
			return false;
		}
		c.end = c.p + len;
		unsigned version = (unsigned)fixed(&c, 2);
		uint64_t unit = fixed(&c, off_size);
		unsigned addr_size = (unsigned)fixed(&c, 1), seg_size = (unsigned)fixed(&c, 1);
		if (c.bad || version != 2 || addr_size != 8 || seg_size != 0 ||
		    (d->n_units > 0 && unit <= last) || d->n_units >= cap) {
			return false;
		}
		last = unit;
		/* the tuples start at a multiple of their size from the set's start */
		c.p += (16 - (size_t)(c.p - (d->aranges + off)) % 16) % 16;
		for (;;) {
			uint64_t lo = fixed(&c, 8), size = fixed(&c, 8);
			if (c.bad || d->n_range >= cap) {
				return false;
			}
			if (lo == 0 && size == 0) {
				break;
			}
			if (lo != 0 && size != 0 &&
			    lo + size > lo) { /* 0: code the linker dropped */
				d->range[d->n_range++] =
					(struct isc_dl_range){ lo, lo + size, d->n_units };
			}
		}
		off = (size_t)(c.end - d->aranges);
	}
	_Static_assert(sizeof(*d->range) <= 64 && offsetof(struct isc_dl_range, lo) == 0,
		       "isc_heap_sort_u64");
	isc_heap_sort_u64(d->range, d->n_range, sizeof(*d->range));
	for (size_t i = 1; i < d->n_range; i++) {
		if (d->range[i].lo < d->range[i - 1].hi) {
			return false;
		}
	}
	d->prog[0] = 0;
	d->n_prog = 1;
	return true;
}

/* The last range that starts at or before addr (it may end before addr: a sequence can
 * span the padding between two of its unit's functions), NULL when none does. */
static const struct isc_dl_range *range_before(const struct isc_dwarf_lines *d, uint64_t addr)
{
	size_t lo = 0, hi = d->n_range;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->range[mid].lo <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo > 0 ? &d->range[lo - 1] : NULL;
}

/* The header of line program k, walking (and inflating) the headers before it that no
 * lookup walked yet; false where the whole index would have stopped before it. */
static bool program(struct isc_dwarf_lines *d, size_t k, struct hdr *h)
{
	if (k >= d->n_units) {
		return false;
	}
	for (;;) {
		size_t i = k < d->n_prog ? k : d->n_prog - 1, off = d->prog[i];
		have(d, off + 12); /* the unit's length, then the unit */
		if (off + 12 <= d->n_line) {
			uint32_t len32;
			uint64_t len64;
			memcpy(&len32, d->line + off, 4);
			memcpy(&len64, d->line + off + 4, 8);
			have(d, off + 12 + (len32 == 0xffffffffu ? len64 : len32));
		}
		if (!header(d, off, h) || h->end - d->line > UINT32_MAX) {
			return false;
		}
		if (i == k) {
			return true;
		}
		d->prog[d->n_prog++] = (uint32_t)(h->end - d->line);
	}
}

/* Adds line program k's sequences to the index; false where they are not all in its
 * unit's ranges, or one starts where another does: the whole index decides then. */
static bool index_program(struct isc_dwarf_lines *d, size_t k)
{
	struct hdr h;
	if (!program(d, k, &h)) {
		return false;
	}
	struct advance a = { 0 };
	struct job j = { .d = d, .unit = d->prog[k] };
	size_t first = d->n_seq;
	advance_for(&a, &h);
	index_unit(&h, &a, &j);
	d->units_run++;
	if (d->n_seq == first) {
		return false; /* a unit with code and no line: not the unit's program */
	}
	/* each sequence starts in a range of the unit, and no other unit's range is inside it
	 * (a sequence may span several of its own unit's ranges and the padding between) */
	const struct isc_dl_range *end = d->range + d->n_range;
	for (size_t i = first; i < d->n_seq; i++) {
		const struct isc_dl_range *r = range_before(d, d->seq[i].lo);
		if (r == NULL || d->seq[i].lo >= r->hi) {
			return false;
		}
		for (; r < end && r->lo < d->seq[i].hi; r++) {
			if (r->unit != k) {
				return false;
			}
		}
	}
	sort_seqs(d);
	for (size_t i = 1; i < d->n_seq; i++) {
		if (d->seq[i].lo == d->seq[i - 1].lo) {
			return false;
		}
	}
	d->in_index[k] = 1;
	return true;
}

/* The sequence of the index that covers addr, or NULL. */
static const struct isc_dl_seq *seq_at(const struct isc_dwarf_lines *d, uint64_t addr)
{
	size_t lo = 0, hi = d->n_seq;
	while (lo < hi) { /* the first sequence starting after addr */
		size_t mid = (lo + hi) / 2;
		if (d->seq[mid].lo <= addr) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return lo == 0 || addr >= d->seq[lo - 1].hi ? NULL : &d->seq[lo - 1];
}

bool isc_dwarf_line(struct isc_dwarf_lines *d, uint64_t addr, const char **file, unsigned *line)
{
	if (d->line == NULL) {
		return false;
	}
	if (d->mode == ISC_DL_NEW) {
		d->mode = ISC_DL_BY_UNIT;
		if (!read_ranges(d)) {
			index_lines(d);
		}
	}
	bool covered = true;
	if (d->mode == ISC_DL_BY_UNIT) {
		/* Every sequence starts in its unit's ranges and holds no other unit's (what
		 * index_program checks of each program it runs): a sequence that starts at or
		 * before addr after this range's start is this unit's, one that starts before it
		 * and covers addr spans it, which makes it this unit's too. */
		const struct isc_dl_range *r = range_before(d, addr);
		if (r != NULL && !d->in_index[r->unit] && !index_program(d, r->unit)) {
			index_lines(d);
		}
		covered = r != NULL && addr < r->hi;
	}
	const struct isc_dl_seq *s = seq_at(d, addr);
	if (s == NULL && !covered && d->mode == ISC_DL_BY_UNIT) {
		/* in no range and no sequence of the units run: padding, or a unit that
		 * .debug_aranges leaves out (objects built without it, e.g. by Clang): only
		 * the whole index can say */
		index_lines(d);
		s = seq_at(d, addr);
	}
	if (s == NULL) {
		return false;
	}
	struct hdr h;
	struct job j = { .pc = addr };
	if (!header(d, s->unit, &h)) {
		return false;
	}
	run(&h, d->line + s->at, &j);
	const char *name = j.found ? file_name(d, &h, j.file) : NULL;
	if (name == NULL) {
		return false;
	}
	*file = name;
	*line = j.line;
	return true;
}

void isc_dwarf_lines_free(struct isc_dwarf_lines *d)
{
	isc_unmap(d->seq, d->mapped);
	isc_unmap(d->range, d->mapped_units);
	isc_inflate_end(d->z);
	memset(d, 0, sizeof(*d));
}
