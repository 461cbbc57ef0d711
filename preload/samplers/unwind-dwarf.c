/* SPDX-License-Identifier: MIT */
/*
 * DWARF call-frame information for the sampler's table walker (unwind-cfi.c): the FDE
 * of an address found through its module's .eh_frame_hdr (from _dl_find_object), the
 * CIE's and the FDE's instructions run up to the address. Followed: the CFA as rsp or
 * rbp plus an offset, registers saved at CFA offsets, remember/restore state. Not
 * followed (the walker then leaves the stack to libunwind): DWARF expressions (PLT
 * stubs, realigned stacks), signal frames ('S'), set_loc and vendor opcodes.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "preload/samplers/unwind-dwarf.h"

struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->p < c->end && shift < 64; shift += 7) {
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static int64_t sleb(struct cur *c)
{
	int64_t v = 0;
	for (unsigned shift = 0; c->p < c->end && shift < 64;) {
		uint8_t b = *c->p++;
		v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			return shift < 64 && (b & 0x40) ? v | -((int64_t)1 << shift) : v;
		}
	}
	c->bad = true;
	return 0;
}

static uint64_t fixed(struct cur *c, unsigned n)
{
	uint64_t v = 0;
	if (c->end - c->p < (long)n) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, n);
	c->p += n;
	return v;
}

/* A pointer in DW_EH_PE encoding enc; data is the base of datarel values. */
static uint64_t encoded(struct cur *c, uint8_t enc, uint64_t data)
{
	uint64_t at = (uintptr_t)c->p, v;
	switch (enc & 0x0f) {
	case 0x00:
		v = fixed(c, 8);
		break;
	case 0x01:
		v = uleb(c);
		break;
	case 0x02:
		v = fixed(c, 2);
		break;
	case 0x03:
		v = fixed(c, 4);
		break;
	case 0x04:
	case 0x0c:
		v = fixed(c, 8);
		break;
	case 0x09:
		v = (uint64_t)sleb(c);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)fixed(c, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)fixed(c, 4);
		break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10:
		v += at;
		break;
	case 0x30:
		v += data;
		break;
	default:
		c->bad = true; /* textrel, funcrel, aligned: not on x86-64 */
	}
	if (enc & 0x80) {
		c->bad = true; /* indirect: only personality pointers, never needed here */
	}
	return v;
}

static int slot(uint64_t reg)
{
	return reg == ISC_REG_FP ? 0 : reg == ISC_REG_RA ? 1 : -1;
}

static void set(struct isc_cfi_rules *r, uint64_t reg, enum isc_cfi_how h, int64_t off)
{
	int s = slot(reg);
	if (s >= 0) {
		r->how[s] = (uint8_t)h;
		r->off[s] = off;
	}
}

struct frame_info {
	uint64_t caf;
	int64_t daf;
	struct isc_cfi_rules init;
};

/* Runs call-frame instructions up to the row of target. false: not followed. */
static bool run(struct cur *c, struct isc_cfi_rules *r, const struct frame_info *fi, uint64_t loc,
		uint64_t target)
{
	struct isc_cfi_rules saved[8];
	unsigned depth = 0;
	while (c->p < c->end && !c->bad) {
		uint8_t op = *c->p++, low = op & 0x3f;
		uint64_t reg, adv = 0;
		switch (op & 0xc0) {
		case 0x40:
			adv = low * fi->caf;
			goto advance;
		case 0x80:
			set(r, low, ISC_AT_CFA, (int64_t)uleb(c) * fi->daf);
			continue;
		case 0xc0:
			if (slot(low) >= 0) {
				set(r, low, fi->init.how[slot(low)], fi->init.off[slot(low)]);
			}
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x02:
			adv = fixed(c, 1) * fi->caf;
			goto advance;
		case 0x03:
			adv = fixed(c, 2) * fi->caf;
			goto advance;
		case 0x04:
			adv = fixed(c, 4) * fi->caf;
			goto advance;
		case 0x05:
			reg = uleb(c);
			set(r, reg, ISC_AT_CFA, (int64_t)uleb(c) * fi->daf);
			continue;
		case 0x06:
			reg = uleb(c);
			if (slot(reg) >= 0) {
				set(r, reg, fi->init.how[slot(reg)], fi->init.off[slot(reg)]);
			}
			continue;
		case 0x07:
			set(r, uleb(c), ISC_UNDEF, 0);
			continue;
		case 0x08:
			set(r, uleb(c), ISC_SAME, 0);
			continue;
		case 0x09: /* register: saved in another register */
			reg = uleb(c);
			uleb(c);
			set(r, reg, ISC_OTHER, 0);
			continue;
		case 0x0a:
			if (depth == 8) {
				return false;
			}
			saved[depth++] = *r;
			continue;
		case 0x0b:
			if (depth == 0) {
				return false;
			}
			*r = saved[--depth]; /* the CFA too, as libgcc's unwinder does */
			continue;
		case 0x0c:
			r->cfa_reg = uleb(c);
			r->cfa_off = (int64_t)uleb(c);
			continue;
		case 0x0d:
			r->cfa_reg = uleb(c);
			continue;
		case 0x0e:
			r->cfa_off = (int64_t)uleb(c);
			continue;
		case 0x0f: /* def_cfa_expression */
			c->p += uleb(c);
			r->cfa_reg = ~0ull;
			continue;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = uleb(c);
			c->p += uleb(c);
			set(r, reg, ISC_OTHER, 0);
			continue;
		case 0x11:
			reg = uleb(c);
			set(r, reg, ISC_AT_CFA, sleb(c) * fi->daf);
			continue;
		case 0x12:
			r->cfa_reg = uleb(c);
			r->cfa_off = sleb(c) * fi->daf;
			continue;
		case 0x13:
			r->cfa_off = sleb(c) * fi->daf;
			continue;
		case 0x14: /* val_offset */
			reg = uleb(c);
			uleb(c);
			set(r, reg, ISC_OTHER, 0);
			continue;
		case 0x15: /* val_offset_sf */
			reg = uleb(c);
			sleb(c);
			set(r, reg, ISC_OTHER, 0);
			continue;
		case 0x2e: /* GNU_args_size */
			uleb(c);
			continue;
		case 0x2f:
			reg = uleb(c);
			set(r, reg, ISC_AT_CFA, -(int64_t)uleb(c) * fi->daf);
			continue;
		default:
			return false; /* set_loc and vendor opcodes: not followed */
		}
advance:
		loc += adv;
		if (loc > target) {
			return !c->bad;
		}
	}
	return !c->bad && c->p <= c->end;
}

/* The CIE at cie: its alignment factors, initial rules and the FDE pointer encoding. */
static bool parse_cie(const uint8_t *cie, struct frame_info *fi, uint8_t *fde_enc, bool *aug_z)
{
	uint32_t len;
	memcpy(&len, cie, 4);
	if (len == 0 || len == 0xffffffffu) {
		return false;
	}
	struct cur c = { cie + 4, cie + 4 + len, false };
	if (fixed(&c, 4) != 0) {
		return false; /* not a CIE */
	}
	unsigned version = (unsigned)fixed(&c, 1);
	const char *aug = (const char *)c.p;
	size_t alen = strnlen(aug, (size_t)(c.end - c.p));
	c.p += alen + 1;
	if (version != 1 && version != 3) {
		return false;
	}
	fi->caf = uleb(&c);
	fi->daf = sleb(&c);
	uint64_t ra = version == 1 ? fixed(&c, 1) : uleb(&c);
	if (ra != ISC_REG_RA || c.bad) {
		return false;
	}
	*fde_enc = 0;
	*aug_z = aug[0] == 'z';
	if (*aug_z) {
		uint64_t n = uleb(&c);
		const uint8_t *next = c.p + n;
		for (const char *a = aug + 1; *a && !c.bad; a++) {
			if (*a == 'R') {
				*fde_enc = (uint8_t)fixed(&c, 1);
			} else if (*a == 'L') {
				fixed(&c, 1);
			} else if (*a == 'P') {
				uint8_t enc = (uint8_t)fixed(&c, 1);
				encoded(&c, enc & 0x7f, 0); /* the personality routine: skipped */
				c.bad = false;
			} else {
				return false; /* 'S' (a signal frame) and unknown letters */
			}
		}
		c.p = next;
	} else if (aug[0] != '\0') {
		return false;
	}
	memset(&fi->init, 0, sizeof(fi->init));
	return run(&c, &fi->init, fi, 0, ~0ull);
}

/* The FDE of pc from its module's .eh_frame_hdr, NULL when no table covers pc;
 * *known: a table was searched and an FDE starts at or before pc. */
static const uint8_t *fde_of(uint64_t pc, bool *known)
{
	struct dl_find_object o;
	*known = false;
	if (_dl_find_object((void *)(uintptr_t)pc, &o) != 0 || o.dlfo_eh_frame == NULL) {
		return NULL;
	}
	const uint8_t *h = o.dlfo_eh_frame;
	if (h[0] != 1 || h[3] != 0x3b) { /* table of datarel sdata4 pairs */
		return NULL;
	}
	struct cur c = { h + 4, h + 32, false };
	encoded(&c, h[1], (uintptr_t)h); /* eh_frame_ptr */
	uint64_t count = encoded(&c, h[2], (uintptr_t)h);
	if (c.bad || count == 0) {
		return NULL;
	}
	const int32_t *tab = (const int32_t *)c.p;
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if ((uintptr_t)h + (int64_t)tab[2 * mid] <= pc) {
			lo = mid;
		} else {
			hi = mid;
		}
	}
	if ((uintptr_t)h + (int64_t)tab[2 * lo] > pc) {
		return NULL;
	}
	*known = true;
	return h + tab[2 * lo + 1];
}

/* The FDE's CIE into fi and *c at the FDE's instructions, with its code range. */
static bool open_fde(const uint8_t *fde, struct frame_info *fi, struct cur *c, uint64_t *begin,
		     uint64_t *range)
{
	uint32_t len, cie_off;
	memcpy(&len, fde, 4);
	memcpy(&cie_off, fde + 4, 4);
	if (len == 0 || len == 0xffffffffu || cie_off == 0) {
		return false;
	}
	uint8_t enc;
	bool z;
	if (!parse_cie(fde + 4 - cie_off, fi, &enc, &z)) {
		return false;
	}
	*c = (struct cur){ fde + 8, fde + 4 + len, false };
	*begin = encoded(c, enc, 0);
	*range = encoded(c, enc & 0x0f, 0);
	if (c->bad) {
		return false;
	}
	if (z) {
		c->p += uleb(c);
	}
	return true;
}

bool isc_cfi_rules(uint64_t pc, struct isc_cfi_rules *r, bool *known)
{
	const uint8_t *fde = fde_of(pc, known);
	struct frame_info fi;
	struct cur c;
	uint64_t begin, range;
	if (fde == NULL || !open_fde(fde, &fi, &c, &begin, &range) || pc < begin ||
	    pc >= begin + range) {
		return false;
	}
	*r = fi.init;
	return run(&c, r, &fi, begin, pc);
}

uint64_t isc_cfi_function_start(uint64_t pc)
{
	bool known;
	const uint8_t *fde = fde_of(pc, &known);
	struct frame_info fi;
	struct cur c;
	uint64_t begin, range;
	if (fde == NULL || !open_fde(fde, &fi, &c, &begin, &range) || pc < begin ||
	    pc >= begin + range) {
		return 0;
	}
	return begin;
}
