/* SPDX-License-Identifier: MIT */
/* Private to the Kineto reader: its parser state, shared by reader-kineto.c and its
 * parallel read (reader-kineto-par.c). */
#ifndef ISC_READER_KINETO_H
#define ISC_READER_KINETO_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzer/base/json-dom.h"
#include "analyzer/base/key-map.h"
#include "analyzer/readers/json-sax.h"
#include "analyzer/readers/reader-kineto-extra.h"

enum kframe { KF_TOP, KF_EVENTS, KF_EVENT, KF_ARGS, KF_BLOCK, KF_GRID, KF_DEVS, KF_DEV, KF_SKIP };

/* How a reader takes part in a parallel read (split-read.h). */
enum krd_mode {
	KRD_SERIAL,
	KRD_MAIN, /* pauses the scanner at the '[' of the events, where the parts begin */
	KRD_PART, /* reads a part of the events: pauses at their ']', refuses a negative
		   * numeric tid (a part's string tids are negative until merged) */
};

struct kev {
	uint64_t index, offset;
	char ph;
	int cat;	  /* key id in isc_kineto_cats, CAT_NONE or CAT_UNKNOWN */
	char cat_raw[32]; /* an unknown category's name */
	uint32_t name, arg_name;
	int64_t pid, tid, ts, dur, corr, stream, device, bytes;
	uint64_t id;
	double occ;
	int64_t block[3], grid[3], regs, smem;
	int nblock, ngrid;
	struct isc_kineto_wait wait;
	uint8_t pid_kind, tid_kind; /* enum pid_kind; ISC_KT_NUM or ISC_KT_STREAM */
	bool has_ts, has_dur, has_corr, has_stream, has_occ, has_dev, has_id;
	bool tid_str, id_str; /* tid, id: string ids (a name's; a part's until merged) */
};

/* The last complete event read: a flow event right after it on its track binds to it. */
struct last_slice {
	int64_t pid, tid, ts;
	uint8_t pid_kind, tid_kind;
	uint32_t ev; /* its event's index + 1, 0 when it made none */
	bool valid;  /* a complete event was read */
};

struct krd {
	struct isc_read_ctx *rc;
	struct isc_jsax js;
	struct isc_keymap keys, cats, pids;
	struct isc_jframes fr;
	int key;
	struct kev ev;
	uint64_t n_events, n_devs;
	bool seen_events;
	size_t first_ev; /* the input's first event in the trace */
	struct last_slice last;
	struct isc_kineto_flows flows;
	/* what was seen, for the message when nothing could be read */
	uint64_t cat_seen[ISC_KINETO_MAX_CATS], nocat_seen[128], unknown_seen, non_objects;
	struct isc_jcap cap; /* distributedInfo or deviceProperties, verbatim */
	int cap_what;	     /* KK_DIST, KK_DEVICE_PROPS or -1 */
	enum krd_mode mode;
	/* a part's: the flows read before its first complete event (bound at the merge to
	 * the last of the part before), and its events of unknown categories in order */
	size_t flows_pre;
	struct isc_agg *unk;
	size_t n_unk, cap_unk;
};

/* A reader of rc with its scanner, or NULL. */
struct krd *isc_krd_new(struct isc_read_ctx *rc);
void isc_krd_free(struct krd *r);
/* Reads r's source, on rc->threads threads where it allows (reader-kineto-par.c). 0 or a
 * negative errno, diag set. */
int isc_krd_read(struct krd *r);

#endif /* ISC_READER_KINETO_H */
