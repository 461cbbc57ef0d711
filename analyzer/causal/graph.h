/* SPDX-License-Identifier: MIT */
/*
 * The run's dependency graph, its critical path and the what-if engine that re-times it
 * (docs/rules.md, "Causes: the dependency graph").
 *
 * Nodes are host segments and GPU operations, in flat arrays (no allocation per node):
 *  - a host thread's timeline is cut at every event boundary into segments, each owned by
 *    the innermost event covering it (scope, framework operator, CUDA call, syscall); the
 *    untraced time between two events is the gap before the next segment;
 *  - every kernel, copy and memset in the window is one node.
 * Edges, at most two per node, as in Holistic Trace Analysis's critical-path graph:
 *  - seq: the previous segment of the same thread, or the previous operation of the same
 *    (device, stream) - stream order;
 *  - dep: for a GPU operation, the segment that ends its launching call (by correlation id;
 *    the nodes of a CUDA graph all depend on the one cudaGraphLaunch); for a host segment
 *    that ends a blocking call (stream/device/event synchronize, a synchronous copy, a
 *    launch that returned only when a slot of a full queue freed; in Kineto input told
 *    from the GPU partner's end), the GPU operation whose end released it; for a host
 *    wait or a scope's self time that another thread filled, the segment of that thread
 *    that released it, and for that thread's first segment after it sat idle, the
 *    waiting thread's segment that handed the work over (graph-threads.c); for a wait
 *    for a child process, the child's last segment, and for the child's first segment,
 *    the parent's segment that started it (graph-children.c).
 * A third edge, for GPU operations only and kept apart (xdep, NULL when the run has none):
 *  - event: the first operation launched onto a stream after a cudaStreamWaitEvent waits
 *    for the operation the matching cudaEventRecord marked on the other stream
 *    (graph-events.c; for Kineto input from its cuda_sync records, graph-events-kineto.c,
 *    and where an input records no stream waits, from the order of two streams'
 *    operations); a cudaEventSynchronize's wait edge is that operation too.
 * Every edge goes from an earlier end to a later one, so the graph is acyclic; the builder
 * still orders it with Kahn's algorithm and leaves out the edges of a corrupt trace that
 * would close a cycle.
 */
#ifndef ISC_GRAPH_H
#define ISC_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/model/result.h"

#define ISC_GN_NONE UINT32_MAX

enum isc_gnode_flag {
	ISC_GN_GPU = 1u << 0,	   /* a GPU operation, else a host segment */
	ISC_GN_WAIT = 1u << 1,	   /* host: blocked until dep (a GPU operation) ended */
	ISC_GN_QFULL = 1u << 2,	   /* the wait is a launch on a full launch queue */
	ISC_GN_SYNC = 1u << 3,	   /* the wait is a synchronize call */
	ISC_GN_COPY = 1u << 4,	   /* the wait is a synchronous copy */
	ISC_GN_LAST = 1u << 5,	   /* the segment ends its owner event */
	ISC_GN_BLOCKING = 1u << 6, /* host: a blocking call, no recorded GPU work ending in it */
	ISC_GN_IDLE = 1u << 7,	   /* host: a lock, condition or sleep wait: not the run's work */
	ISC_GN_POLL = 1u << 8,	  /* host: on a thread that only polls or ticks (graph-threads.c) */
	ISC_GN_HANDOFF = 1u << 9, /* host: waited for dep, a segment of another thread */
	ISC_GN_WOKEN = 1u << 10,  /* host: started by dep, a segment of another thread */
	ISC_GN_INFER = 1u << 11,  /* the wait is inferred from its GPU partner's end (Kineto) */
	ISC_GN_ORDERED = 1u << 12, /* GPU: the event edge is told from order (Kineto) */
	ISC_GN_CHILD = 1u << 13,   /* host: a wait for a child process (wait4, waitpid...): the
				    * run's work, done by the child; dep, with ISC_GN_HANDOFF,
				    * the child's last segment when its trace is in the analysis */
	ISC_GN_FIRST = 1u << 14,   /* host: its thread's first segment */
	ISC_GN_TEARDOWN = 1u << 15 /* host: woken after its process's main thread ended (the
				    * exit's teardown: graph-threads.c): never ends the run */
};

/* A host segment in which its thread waits and does no work of its own. */
#define ISC_GN_WAITING (ISC_GN_IDLE | ISC_GN_CHILD)

/* A node keeps its recorded end; its start is its event's (isc_gn_t0). */
struct isc_gnode {
	int64_t t1;	/* the recorded end, ns */
	uint32_t ev;	/* owner event (index into the trace) */
	uint32_t seq;	/* previous node on the thread or stream, ISC_GN_NONE */
	uint32_t dep;	/* launch (GPU) or the GPU operation waited for (host) */
	uint16_t lane;	/* host thread or GPU stream, saturating at 65535 */
	uint16_t flags; /* ISC_GN_* */
};

_Static_assert(sizeof(struct isc_gnode) == 24, "graph nodes are 24 bytes");

/* Critical-path categories: what the path runs through. Names, and the side each counts
 * for (isc_cp_side), are in one table (critical-path.c); a new category goes at the end. */
enum isc_cp_cat {
	ISC_CP_KERNEL,	    /* kernels (compute) */
	ISC_CP_COMM,	    /* communication kernels (NCCL, gloo) */
	ISC_CP_H2D,	    /* host-to-device copies */
	ISC_CP_D2H,	    /* device-to-host copies */
	ISC_CP_GPU_OTHER,   /* memsets, device-to-device copies */
	ISC_CP_GPU_GAP,	    /* a stream idle between two of its operations, no launch late */
	ISC_CP_LAUNCH,	    /* launch latency: the GPU waits for a launch call to reach it */
	ISC_CP_HOST,	    /* host computing: scopes, operators, untraced host code */
	ISC_CP_RUNTIME,	    /* host inside CUDA calls, not blocked (launch overhead...) */
	ISC_CP_SYNC,	    /* host returning from a sync or blocking copy after the GPU */
	ISC_CP_BLOCKED,	    /* host blocked in a call with no GPU work recorded to explain it */
	ISC_CP_IO,	    /* host I/O syscalls */
	ISC_CP_HOST_WAIT,   /* host lock, condition, sleep waits; the hand-off between threads */
	ISC_CP_UNTRACED,    /* a thread between two recorded events, no CPU sample in between */
	ISC_CP_STREAM_WAIT, /* a stream held by an event wait on another stream's operation */
	ISC_CP_COMM_WAIT,   /* host inside a communication operator (gloo, nccl:, c10d); a
			   * stream held by an event wait on a communication kernel */
	ISC_CP__COUNT
};

/* What a category's time is: GPU work, copies, host work, communication, or neither (a GPU
 * or thread idle: gaps, launch latency, stream waits, untraced time). */
enum isc_cp_side {
	ISC_CPS_GPU,
	ISC_CPS_COPY,
	ISC_CPS_HOST,
	ISC_CPS_COMM,
	ISC_CPS_IDLE,
};

/* The kind of name on the path. FUNCTION: host time no recorded event covers, named by the
 * function of its CPU sample's stack (the site: innermost Python frame, else the innermost
 * native frame outside the runtime). */
enum isc_cp_kind {
	ISC_CPK_KERNEL,
	ISC_CPK_SCOPE,
	ISC_CPK_CALL,
	ISC_CPK_COPY,
	ISC_CPK_FUNCTION,
	ISC_CPK__COUNT
};

#define ISC_CP_TOP 8

struct isc_cp_name {
	uint32_t name;
	uint8_t kind; /* enum isc_cp_kind */
	int64_t ns;
};

/* A piece of the path: consecutive time of one category, for the HTML timeline and the
 * verdict. The path is contiguous (each piece ends where the next starts, the last at
 * isc_causal.path_end), so a piece keeps its start only: 16 bytes, where the path of a
 * trace of alternating kernels and launch gaps has about one piece per event. */
struct isc_cp_piece {
	int64_t s;
	uint32_t ev; /* first owner event of the piece, ISC_GN_NONE for gaps */
	uint8_t cat;
	uint8_t gpu;
};

_Static_assert(sizeof(struct isc_cp_piece) == 16, "critical-path pieces are 16 bytes");

/* A thread's share of the path, summed over the pieces (kept or not), each piece counted
 * for the thread of its first event: whether host time of the thread is on the path, and
 * its host computing there (ISC_CP_HOST). */
struct isc_cp_thread {
	int64_t host_ns;
	bool on_path;
};

struct isc_whatif_result {
	char spec[128]; /* what the user asked, or the rule's change */
	char what[ISC_LINE];
	int64_t before, after; /* window end, re-timed */
	double gain_pct;       /* of the window */
	uint64_t picked;       /* graph nodes the change picked: none is an error */
	bool ok;
	char error[128];
};

struct isc_causal {
	struct isc_gnode *node;
	size_t n;
	const struct isc_ev *ev; /* the trace's events, which the nodes' starts are read from */
	uint32_t *xdep;		 /* per node: the operation an event wait holds it for, ISC_GN_NONE;
			   * NULL when no event edge exists */
	uint32_t *order;	 /* topological order */
	int64_t *retimed;	 /* the what-if engine's re-timed ends, one per node, NULL before
			   * its first run */
	uint32_t n_lanes;
	/* What the builder found. */
	uint64_t host_nodes, gpu_nodes, launch_edges, stream_edges, wait_edges;
	uint64_t sync_waits, copy_waits, queue_full, cycle_edges;
	uint64_t event_edges;	/* cross-stream: cudaStreamWaitEvent after a cudaEventRecord */
	uint64_t event_syncs;	/* cudaEventSynchronize waits paired with their record */
	uint64_t event_assumed; /* of event_edges, Kineto's without the record's correlation:
				 * tied to the last work before the wait call (may over-constrain) */
	uint64_t event_refuted; /* Kineto waits left out: the recorded times contradict them */
	uint64_t event_ordered; /* of event_edges, a Kineto input's that records no stream
				 * waits: told from the order of two streams' operations */
	int64_t max_queue_depth;
	int64_t launch_latency;	 /* median gap from a launch's return to its operation's start
				 * where the launch, not the stream, held the operation back */
	int64_t host_work;	 /* the busiest thread's time not blocked in calls nor waiting */
	uint32_t main_lane;	 /* that thread's lane */
	int64_t untraced;	 /* of the window, the busiest thread's time between recorded
				 * events with no CPU sample */
	uint64_t handoffs;	 /* host waits tied to the thread that released them */
	uint64_t wakes;		 /* thread starts tied to the thread that handed work over */
	uint64_t child_waits;	 /* waits for a child tied to the child's end (graph-children.c) */
	uint64_t inferred_waits; /* Kineto calls found blocked by their GPU partner's end */
	/* Threads that only poll or tick (graph-threads.c): never where the run ends. */
	uint32_t n_pollers;
	uint32_t poller[4]; /* the first ones, trace thread indices */
	int64_t end;	    /* the latest end of work in the window (what the what-ifs shorten): a
		      * background thread sleeping until exit is not the run's work */
	/* The critical path. */
	int64_t path_ns;
	int64_t cat[ISC_CP__COUNT];
	struct isc_cp_name top[ISC_CP_TOP];
	struct isc_cp_piece *pieces; /* NULL where the analysis was told no output draws them
				      * (isc_analysis.no_path_pieces) */
	size_t n_pieces;
	int64_t path_end;		   /* the end of the last piece */
	struct isc_cp_thread *path_thread; /* per trace thread */
	uint64_t path_nodes;
	bool kineto;	   /* an input has no wait records (Kineto) */
	bool samples_only; /* the host work is CPU samples alone: no recorded host event */
	uint64_t unknown_device_ops;
	/* Answers to --what-if. */
	struct isc_whatif_result *whatif;
	size_t n_whatif;
};

/* The recorded start of node g. A GPU operation starts with its event. A host segment
 * starts at the last boundary of its thread's timeline: where the segment before it on
 * the thread ended (host segments of one thread are consecutive nodes), unless the thread
 * had nothing open in between - then it starts with the event that the thread opened
 * after the gap, which is its owner or an ancestor of it starting at the same time. */
static inline int64_t isc_gn_t0(const struct isc_causal *c, const struct isc_gnode *g)
{
	int64_t ts = c->ev[g->ev].ts;
	if (g->flags & (ISC_GN_GPU | ISC_GN_FIRST)) {
		return ts;
	}
	return g[-1].t1 > ts ? g[-1].t1 : ts;
}

/* Builds the graph of the window and its critical path into a->causal. 0 or -ENOMEM. */
/* graph.c and graph-host.c: whether an event starts in the analysis window; how long a
 * host event holds its thread (a CPU sample: the CPU time it stands for); the window's
 * host events grouped by thread (off[k]..off[k + 1] for thread k), each group in start
 * order with a parent before its children, syscalls made inside a CUDA call marked
 * ISC_GN_NONE. NULL when memory runs out; the caller frees both arrays. */
bool isc_graph_in_window(const struct isc_analysis *a, const struct isc_ev *e);
int64_t isc_graph_host_dur(const struct isc_ev *e);
/* Whether node i can be where the run ends (c->end, the critical path's last node, a
 * what-if's end): not a thread waiting until exit (a wait for a child can: the child's
 * work is the run's) nor one that only polls or ticks (graph-threads.c), and not a CPU
 * sample while recorded
 * work exists - a sample is placed one sampling period after the CPU time it stands
 * for, and a wrapper process (a shell, `timeout`) sampled on its way out would end the
 * run after the program did, where re-timing the program cannot move it. */
bool isc_graph_ends_run(const struct isc_trace *t, const struct isc_causal *c, uint32_t i);
uint32_t *isc_graph_host_events(const struct isc_trace *t, const struct isc_analysis *a,
				size_t **off);

/* graph-events.c: the event edges of the built nodes into c->xdep, and for every
 * cudaEventSynchronize whose record is in the trace and marks known work the operation
 * it marked (src, or ISC_GN_NONE when nothing had been launched onto the record's
 * stream), in event order in *sync (the caller frees it); a record after work that is
 * not in the graph (outside the window) pairs with nothing. isc_graph_event_source looks
 * one up. 0 or -ENOMEM. */
struct isc_event_wait {
	uint32_t ev, src;
};
int isc_graph_event_edges(const struct isc_trace *t, const struct isc_analysis *a,
			  struct isc_causal *c, struct isc_event_wait **sync, size_t *n_sync);
uint32_t isc_graph_event_source(const struct isc_event_wait *v, size_t n, uint32_t ev, bool *known);
/* Node waits for src through an event (c->xdep, allocated on first use). 0 or -ENOMEM. */
int isc_graph_add_xdep(struct isc_causal *c, uint32_t node, uint32_t src);
/* Appends (ev, src) to a growable list of synchronize waits. 0 or -ENOMEM. */
int isc_graph_push_wait(struct isc_event_wait **v, size_t *n, size_t *cap, uint32_t ev,
			uint32_t src);
/* graph-events-kineto.c: the event edges and cudaEventSynchronize waits of Kineto's
 * cuda_sync records (appended to *sync, in no particular order). 0 or -ENOMEM. */
int isc_graph_kineto_event_edges(const struct isc_trace *t, struct isc_causal *c,
				 struct isc_event_wait **sync, size_t *n_sync, size_t *cap);
/* graph-events-kineto.c: in a Kineto input without "Stream Wait Event" records, an
 * operation that started a gap after its stream and its launch let it, right when an
 * operation of another stream ended, waited for that one (an event edge). 0 or -ENOMEM. */
int isc_graph_kineto_inferred_waits(const struct isc_trace *t, struct isc_causal *c);
/* The operation node i waits for through an event, ISC_GN_NONE. */
static inline uint32_t isc_graph_xdep(const struct isc_causal *c, uint32_t i)
{
	return c->xdep != NULL ? c->xdep[i] : ISC_GN_NONE;
}

/* graph-threads.c: marks the segments of threads that only poll or tick, and adds the
 * hand-off edges between host threads (ISC_GN_HANDOFF, ISC_GN_WOKEN). 0 or -ENOMEM. */
int isc_graph_threads(const struct isc_trace *t, struct isc_causal *c);
/* graph-children.c: ties every wait for a child process (ISC_GN_CHILD) to the child whose
 * end released it, where the child's trace is in the analysis, and the child's first
 * segment to its parent's segment that started it. 0 or -ENOMEM. */
int isc_graph_children(const struct isc_trace *t, struct isc_causal *c);
/* The k-th smallest of v[0..n), k < n (quickselect; v is reordered). */
int64_t isc_graph_kth(int64_t *v, size_t n, size_t k);

int isc_causal_build(const struct isc_trace *t, struct isc_analysis *a);
void isc_causal_destroy(struct isc_causal *c);
/* The critical path (critical-path.c), on a built graph. 0 or -ENOMEM. */
int isc_critical_path(const struct isc_trace *t, const struct isc_analysis *a,
		      struct isc_causal *c);

/* The end of piece i: where the next one starts. */
static inline int64_t isc_cp_piece_end(const struct isc_causal *c, size_t i)
{
	return i + 1 < c->n_pieces ? c->pieces[i + 1].s : c->path_end;
}

const char *isc_cp_cat_name(enum isc_cp_cat c);
enum isc_cp_side isc_cp_side(enum isc_cp_cat c);
const char *isc_cp_kind_name(enum isc_cp_kind k);
/* The path's time on each side (isc_cp_side): GPU work (kernels, communication kernels,
 * memsets), copies, host time (computing, runtime calls, returns from waits, blocked
 * calls, I/O, host waits). Idle time (gaps, launch latency, stream waits, untraced) and
 * host waits on communication count for none of the three. */
int64_t isc_cp_gpu(const struct isc_causal *c);
int64_t isc_cp_copies(const struct isc_causal *c);
int64_t isc_cp_host(const struct isc_causal *c);
int64_t isc_cp_sum(const struct isc_causal *c, enum isc_cp_side side);

/* ---- What-ifs (what-if.c) ---- */

enum isc_change_op {
	ISC_WI_SCALE,	    /* nodes the selector picks: duration x factor */
	ISC_WI_OFFLOAD,	    /* picked host segments run on a worker, ahead of the thread */
	ISC_WI_NO_WAIT,	    /* picked blocking calls do not wait for the GPU, cost nothing */
	ISC_WI_ASYNC,	    /* picked blocking calls do not wait: they return as launches do */
	ISC_WI_NO_GPU_GAPS, /* streams start operations as soon as the previous one ends */
	ISC_WI_GRAPH,	    /* picked launches cost nothing; their operations follow each other
			     * launch.graph_node_gap_us apart, as a CUDA graph replays them */
};

enum isc_selector {
	ISC_SEL_SCOPE,	   /* host segments inside a scope or operator named pattern */
	ISC_SEL_KERNEL,	   /* kernels named pattern */
	ISC_SEL_CALL,	   /* host segments of calls (CUDA API, syscalls) named pattern */
	ISC_SEL_HOST_CODE, /* host segments owned by scopes, operators, or untraced */
	ISC_SEL_SYNC,	   /* synchronize calls that wait */
	ISC_SEL_COPY_WAIT, /* synchronous copies that wait */
	ISC_SEL_LAUNCH,	   /* launch calls */
	ISC_SEL_PAGEABLE,  /* GPU copies from or to pageable memory */
	ISC_SEL_COPIES,	   /* every host-device copy on the GPU */
	ISC_SEL_SYSCALL,   /* syscalls of category sub (enum isc_syscall_cat), bitmask,
			    * paced reads (ISC_F_PACED) left out */
	ISC_SEL_PACED,	   /* paced reads: of a pipe or terminal */
	ISC_SEL_API_CLASS, /* CUDA calls of class sub (enum isc_api_class), bitmask */
	ISC_SEL_ALL_GPU,   /* every GPU operation */
	ISC_SEL_CALLBACK,  /* per node: scale_of() */
	ISC_SEL_WAITS,	   /* host waits (for the GPU, another thread, a lock) inside a scope
			    * or operator named pattern, or calls named pattern that wait */
	ISC_SEL_SCOPE_ALL, /* all a scope or operator named pattern stands for: its host
			    * segments (its own time, the CUDA calls made in it) and the GPU
			    * operations those calls launched; at factor 0 the operations are
			    * removed (what-if.c) */
};

struct isc_change {
	enum isc_change_op op;
	enum isc_selector sel;
	const char *pattern; /* names; "prefix*" allowed */
	double factor;	     /* ISC_WI_SCALE */
	uint32_t sub;	     /* bitmask for ISC_SEL_SYSCALL / ISC_SEL_API_CLASS */
	int64_t after;	     /* only nodes starting at or after this time */
	/* ISC_SEL_CALLBACK: a factor per GPU or host node, < 0 when not picked. */
	double (*scale_of)(const struct isc_trace *t, const struct isc_ev *e, const void *arg);
	const void *arg;
	const struct isc_change *also; /* a second change applied together, or NULL */
	/* c->n + 1 re-timed ends of the caller's, so that runs can go on several threads at
	 * once; NULL: the graph's own buffer (one run at a time). */
	int64_t *ends;
};

/*
 * Re-times the graph with the change: *before is the recorded end of the window's work,
 * *after the re-timed one, *gain_pct what the change saves in percent of the window (at
 * most 100; negative when it slows the run). Returns 0 or -ENOMEM.
 */
int isc_whatif_run(const struct isc_trace *t, const struct isc_analysis *a,
		   const struct isc_change *ch, int64_t *before, int64_t *after, double *gain_pct);
/* The same, and how many graph nodes the change picked in *picked. */
int isc_whatif_run_picked(const struct isc_trace *t, const struct isc_analysis *a,
			  const struct isc_change *ch, int64_t *before, int64_t *after,
			  double *gain_pct, uint64_t *picked);
/* Parses a --what-if question ("scope:tokenize*0.5", docs/rules.md) into ch; its pattern
 * is copied into pat (np bytes). Returns 0 or -EINVAL with a message in err. */
int isc_whatif_parse(const char *spec, struct isc_change *ch, char *pat, size_t np, char *err,
		     size_t n);
/* Answers the questions into a->causal->whatif. 0 or -ENOMEM. */
int isc_whatif_answer(const struct isc_trace *t, struct isc_analysis *a, const char *const *specs,
		      size_t n);

#endif /* ISC_GRAPH_H */
