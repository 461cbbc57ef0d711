/* SPDX-License-Identifier: MIT */
/*
 * The verdict read off the what-ifs, on traces built here event by event: host-only
 * windows (idle, cpu_bound, io_bound, lock_bound, cpu_starved, child_bound), lock
 * contention only on the critical path, host allocation churn from the exact counters,
 * shares of several threads' waits as unions. Every analysis goes through analyse(),
 * which checks the result's invariants (isc_analysis_check).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "analyzer/base/par.h"
#include "analyzer/causal/graph.h"
#include "helpers.h"

#define MS 1000000LL

struct build {
	struct isc_trace *t;
	int input;
};

static struct build start(int64_t pid, int64_t ppid)
{
	struct build b = { isc_trace_create(), 0 };
	cr_assert_not_null(b.t);
	b.input = isc_trace_add_input(b.t, "built.json");
	cr_assert_geq(b.input, 0);
	b.t->inputs[b.input].pid = pid;
	b.t->inputs[b.input].ppid = ppid;
	b.t->inputs[b.input].format = "inferscope";
	return b;
}

static struct isc_ev *ev(struct build *b, unsigned type, int64_t tid, const char *name, int64_t ts,
			 int64_t dur)
{
	struct isc_ev *e = isc_trace_push(b->t);
	cr_assert_not_null(e);
	e->type = (uint8_t)type;
	e->ts = ts;
	e->dur = dur;
	e->name = isc_trace_intern(b->t, name, strlen(name));
	e->thread = isc_trace_thread(b->t, (uint16_t)b->input, tid);
	e->input = (uint16_t)b->input;
	return e;
}

static void sys(struct build *b, int64_t tid, const char *name, unsigned cat, int64_t ts,
		int64_t dur)
{
	ev(b, ISC_T_SYSCALL, tid, name, ts, dur)->sub = (uint8_t)cat;
}

static void counter(struct build *b, int64_t tid, const char *name, int64_t ts, double us)
{
	struct isc_ev *e = ev(b, ISC_T_COUNTER, tid, name, ts, 0);
	e->sub = (uint8_t)isc_counter_kind(name);
	e->v.value = us;
}

static struct isc_analysis *finish(struct build *b)
{
	cr_assert_eq(isc_trace_finalize(b->t), 0);
	return analyse(b->t, NULL);
}

static const struct isc_suggestion *sugg(const struct isc_analysis *a, const char *id)
{
	for (size_t i = 0; i < a->n_sugg; i++) {
		if (strcmp(a->sugg[i].rule_id, id) == 0) {
			return &a->sugg[i];
		}
	}
	return NULL;
}

static bool evidence_has(const struct isc_analysis *a, const char *s)
{
	for (int i = 0; i < a->verdict.n_evidence; i++) {
		if (strstr(a->verdict.evidence[i], s) != NULL) {
			return true;
		}
	}
	return false;
}

/* A server's loop: poll for 9 ms, handle a request for 1 ms (a scope), ten times. */
Test(verdict, server_waiting_in_poll_is_idle_naming_the_call)
{
	struct build b = start(100, 1);
	for (int i = 0; i < 10; i++) {
		sys(&b, 100, "poll", ISC_SYS_WAIT, i * 10 * MS, 9 * MS);
		ev(&b, ISC_T_SCOPE, 100, "handle", i * 10 * MS + 9 * MS, 1 * MS);
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_IDLE, "%s", isc_bound_name(a->verdict.type));
	cr_assert_str_eq(a->verdict.cause, "waiting_for_input");
	cr_assert(evidence_has(a, "waits in poll"));
	cr_assert_null(sugg(a, "host.lock-contention"), "a poll loop is not contended");
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* Compute with one thread, while a pool thread idles in its condition wait all along:
 * cpu_bound naming the computing thread; the idle pool thread is no lock contention. */
Test(verdict, idle_pool_thread_is_not_contention)
{
	struct build b = start(100, 1);
	sys(&b, 101, "pthread_cond_wait", ISC_SYS_WAIT, 0, 100 * MS);
	for (int i = 0; i < 10; i++) {
		ev(&b, ISC_T_SCOPE, 100, "compute", i * 10 * MS, 10 * MS);
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CPU, "%s", isc_bound_name(a->verdict.type));
	cr_assert_str_eq(a->verdict.cause, "host_compute");
	cr_assert(evidence_has(a, "runs in"), "names the threads");
	cr_assert_null(sugg(a, "host.lock-contention"));
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* The main thread waits for a mutex between its pieces of work: lock_bound, and the
 * contention rule fires with the wait on the critical path. */
Test(verdict, mutex_wait_on_the_path_is_lock_bound)
{
	struct build b = start(100, 1);
	for (int i = 0; i < 10; i++) {
		ev(&b, ISC_T_SCOPE, 100, "compute", i * 10 * MS, 2 * MS);
		sys(&b, 100, "pthread_mutex_lock", ISC_SYS_WAIT, i * 10 * MS + 2 * MS, 8 * MS);
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_LOCK, "%s", isc_bound_name(a->verdict.type));
	cr_assert(evidence_has(a, "waits in pthread_mutex_lock"));
	cr_assert_not_null(sugg(a, "host.lock-contention"));
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* The stages run as jobs on the analysis threads (the graph beside the attribution, the
 * verdict beside the statistics): three threads give what one gives, the lock rule's
 * what-if included, which the data traces (none waits for a lock) do not reach. */
Test(verdict, lock_bound_on_threads_as_serial)
{
	struct isc_analysis *a[2];
	struct build b[2];
	for (int k = 0; k < 2; k++) {
		b[k] = start(100, 1);
		for (int i = 0; i < 10; i++) {
			ev(&b[k], ISC_T_SCOPE, 100, "compute", i * 10 * MS, 2 * MS);
			sys(&b[k], 100, "pthread_mutex_lock", ISC_SYS_WAIT, i * 10 * MS + 2 * MS,
			    8 * MS);
		}
		isc_par_set_threads(k == 0 ? 1 : 3);
		a[k] = finish(&b[k]);
	}
	isc_par_set_threads(0);
	cr_assert_eq(a[0]->verdict.type, ISC_BOUND_LOCK);
	cr_assert_eq(a[1]->verdict.type, a[0]->verdict.type);
	cr_assert_str_eq(a[1]->verdict.cause, a[0]->verdict.cause);
	cr_assert_eq(a[1]->verdict.n_levers, a[0]->verdict.n_levers);
	for (int i = 0; i < a[0]->verdict.n_levers; i++) {
		cr_assert_eq(a[1]->verdict.levers[i].gain_pct, a[0]->verdict.levers[i].gain_pct);
	}
	cr_assert_eq(a[1]->causal->n, a[0]->causal->n);
	cr_assert_eq(a[1]->causal->path_ns, a[0]->causal->path_ns);
	cr_assert_eq(a[1]->n_sugg, a[0]->n_sugg);
	cr_assert_not_null(sugg(a[0], "host.lock-contention"));
	for (size_t i = 0; i < a[0]->n_sugg; i++) {
		cr_assert_str_eq(a[1]->sugg[i].rule_id, a[0]->sugg[i].rule_id);
		cr_assert_eq(a[1]->sugg[i].improvement_pct, a[0]->sugg[i].improvement_pct);
	}
	for (int k = 0; k < 2; k++) {
		isc_analysis_destroy(a[k]);
		isc_trace_destroy(b[k].t);
	}
}

/* fdatasync after every small write, on two threads at once: io_bound; the waits are
 * a union over the threads, at most the window. */
Test(verdict, fsyncs_on_two_threads_are_io_bound_and_a_union)
{
	struct build b = start(100, 1);
	for (int i = 0; i < 10; i++) {
		for (int64_t tid = 100; tid <= 101; tid++) {
			ev(&b, ISC_T_SCOPE, tid, "commit", i * 10 * MS, 1 * MS);
			sys(&b, tid, "fdatasync", ISC_SYS_FS, i * 10 * MS + 1 * MS, 9 * MS);
		}
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_IO, "%s", isc_bound_name(a->verdict.type));
	cr_assert_eq(a->waits.total[ISC_SYS_FS], 90 * MS, "a union, not 180 ms summed");
	cr_assert_leq(a->waits.io_total, a->window.end - a->window.start);
	const struct isc_suggestion *s = sugg(a, "host.io-wait");
	cr_assert_not_null(s);
	cr_assert_null(strstr(s->action, "prefetch"), "%s", s->action);
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* A thread on the path waits 3 ms on a run queue per ms of CPU (its CPU samples
 * stand for 2 ms in every 10): cpu_starved, with both numbers. */
Test(verdict, run_queue_wait_is_cpu_starved)
{
	struct build b = start(100, 1);
	for (int i = 0; i <= 10; i++) {
		counter(&b, 100, "cpu_time", i * 10 * MS, i * 2000.0);
		counter(&b, 100, "wait_time", i * 10 * MS, i * 6000.0);
		if (i < 10) {
			ev(&b, ISC_T_CPU_SAMPLE, 100, "sample", i * 10 * MS + 8 * MS, 0)->v.bytes =
				2 * MS;
		}
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CPU_STARVED, "%s", isc_bound_name(a->verdict.type));
	/* The window ends with the last sample (90 ms): 3 ms of wait per ms of CPU. */
	cr_assert(evidence_has(a, "thread 100 waited 54.000 ms on a run queue against 18.000 ms"),
		  "%s", a->verdict.evidence[1]);
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* A shell (pid 100) waits in wait4 while its child (pid 200, its trace in the same
 * analysis) computes: child_bound, naming the child's trace. Without the wait (a wrapper
 * whose waiting no hook saw, or a child that merely exists) the child's work is the
 * window's own, judged by the other levers: cpu_bound, its host code. */
Test(verdict, waiting_for_a_child_is_child_bound)
{
	for (int waits = 1; waits >= 0; waits--) {
		struct build b = start(100, 1);
		ev(&b, ISC_T_SCOPE, 100, "sh", 0, 1 * MS);
		if (waits) {
			sys(&b, 100, "wait4", ISC_SYS_WAIT, 1 * MS, 100 * MS);
		}
		int child = isc_trace_add_input(b.t, "trace.200.json");
		b.t->inputs[child].pid = 200;
		b.t->inputs[child].ppid = 100;
		b.input = child;
		for (int i = 0; i < 10; i++) {
			ev(&b, ISC_T_SCOPE, 200, "work", 1 * MS + i * 10 * MS, 10 * MS);
		}
		struct isc_analysis *a = finish(&b);
		if (waits) {
			cr_assert_eq(a->verdict.type, ISC_BOUND_CHILD, "%s: %s",
				     isc_bound_name(a->verdict.type), a->verdict.evidence[0]);
			cr_assert(evidence_has(a, "trace.200.json"));
		} else {
			cr_assert_eq(a->verdict.type, ISC_BOUND_CPU, "%s",
				     isc_bound_name(a->verdict.type));
			cr_assert_str_eq(a->verdict.cause, "host_compute");
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(b.t);
	}
}

/* A wrapper shell whose last record is its wait for a child whose trace is not in the
 * analysis: the wait is the child's work as the shell saw it, and it ends the window
 * (a wait for a child is not a thread idling until exit). child_bound, half the wait
 * gained, the call named. */
Test(verdict, waiting_for_an_untraced_child_until_the_end_is_child_bound)
{
	struct build b = start(100, 1);
	ev(&b, ISC_T_SCOPE, 100, "sh", 0, 1 * MS);
	sys(&b, 100, "wait4", ISC_SYS_WAIT, 1 * MS, 100 * MS);
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CHILD, "%s: %s", isc_bound_name(a->verdict.type),
		     a->verdict.evidence[0]);
	/* 50 ms of the 101 ms window */
	cr_assert_float_eq(a->verdict.gain_pct, 100.0 * 50 / 101, 0.01);
	cr_assert(evidence_has(a, "in wait4 (1 call, 100.000 ms); no child's trace"), "%s",
		  a->verdict.evidence[1]);
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* The shell forks at 1 ms and waits; its child (trace in the analysis) computes 80 ms,
 * then exits for 19 ms (its teardown, unrecorded) before the wait returns; the shell
 * reports for 1 ms. The wait is tied to the child's end: making the child's code twice as
 * fast shortens the wait by as much (a what-if on the child's scopes alone gains 40 ms),
 * and the child lever, its code and its exit, gains 49.5 ms, naming the child's trace. */
Test(verdict, the_child_that_ends_a_wait_is_its_lever)
{
	struct build b = start(100, 1);
	ev(&b, ISC_T_SCOPE, 100, "sh", 0, 1 * MS);
	sys(&b, 100, "wait4", ISC_SYS_WAIT, 1 * MS, 100 * MS);
	ev(&b, ISC_T_SCOPE, 100, "report", 101 * MS, 1 * MS);
	int child = isc_trace_add_input(b.t, "trace.200.json");
	b.t->inputs[child].pid = 200;
	b.t->inputs[child].ppid = 100;
	b.input = child;
	for (int i = 0; i < 10; i++) {
		ev(&b, ISC_T_SCOPE, 200, "work", 2 * MS + i * 8 * MS, 8 * MS);
	}
	struct isc_analysis *a = finish(&b);
	cr_assert_eq(a->verdict.type, ISC_BOUND_CHILD, "%s: %s", isc_bound_name(a->verdict.type),
		     a->verdict.evidence[0]);
	cr_assert_float_eq(a->verdict.gain_pct, 100.0 * 49.5 / 102, 0.01);
	cr_assert(evidence_has(a, "waits for child process 200"));
	cr_assert(evidence_has(a, "in wait4 (1 call, 100.000 ms); its trace: trace.200.json"));
	/* the wait tied to the child counted alike in the report and the JSON result */
	char *md = render(b.t, a, "md", NULL), *json = render(b.t, a, "json", NULL);
	cr_assert(strstr(md, "1 wait for a child tied to the child that ended it") != NULL, "%s",
		  md);
	yajl_val root = yajl_tree_parse(json, NULL, 0);
	const char *waits[] = { "critical_path", "graph", "child_waits", NULL };
	yajl_val n = yajl_tree_get(root, waits, yajl_t_number);
	cr_assert(n != NULL && YAJL_GET_INTEGER(n) == 1, "%s", json);
	yajl_tree_free(root);
	free(md);
	free(json);
	struct isc_change ch;
	char pat[64], err[128];
	cr_assert_eq(isc_whatif_parse("scope:work*0.5", &ch, pat, sizeof(pat), err, sizeof(err)),
		     0);
	int64_t before, after;
	double gain;
	cr_assert_eq(isc_whatif_run(b.t, a, &ch, &before, &after, &gain), 0);
	cr_assert_eq(before - after, 40 * MS, "the wait ends with the child: %lld ns earlier",
		     (long long)(before - after));
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}

/* The shell waits once for two children; child 200's recorded work ends last inside the
 * wait, yet the wait returned child 300 (whose exit took longer). Where the call's return
 * value names the child (ISC_F_CHILD_PID), the wait is tied to 300 and moves with its
 * work alone; where it names none, the latest child by time, 200, is taken. */
Test(verdict, a_wait_is_tied_to_the_child_it_returned)
{
	for (int named = 0; named <= 1; named++) {
		struct build b = start(100, 1);
		ev(&b, ISC_T_SCOPE, 100, "sh", 0, 1 * MS);
		struct isc_ev *w = ev(&b, ISC_T_SYSCALL, 100, "wait4", 1 * MS, 99 * MS);
		w->sub = ISC_SYS_WAIT;
		w->flags |= named ? ISC_F_CHILD_PID : 0;
		w->aux = named ? 300 : UINT32_MAX;
		ev(&b, ISC_T_SCOPE, 100, "report", 101 * MS, 1 * MS);
		static const int64_t pids[2] = { 200, 300 }, ends[2] = { 82 * MS, 62 * MS };
		for (int k = 0; k < 2; k++) {
			char path[32], name[16];
			snprintf(path, sizeof(path), "trace.%lld.json", (long long)pids[k]);
			snprintf(name, sizeof(name), "w%lld", (long long)pids[k]);
			b.input = isc_trace_add_input(b.t, path);
			b.t->inputs[b.input].pid = pids[k];
			b.t->inputs[b.input].ppid = 100;
			ev(&b, ISC_T_SCOPE, pids[k], name, 2 * MS, ends[k] - 2 * MS);
		}
		struct isc_analysis *a = finish(&b);
		/* halving the tied child's work ends the wait and the report 30 ms (300) or 40
		 * ms (200) earlier, no earlier than the other child's own end (82 or 62 ms):
		 * 20 or 40 ms gained; the other child's work is off the path */
		static const char *const scopes[2] = { "scope:w200*0.5", "scope:w300*0.5" };
		int64_t want[2] = { named ? 0 : 40 * MS, named ? 20 * MS : 0 };
		for (int k = 0; k < 2; k++) {
			struct isc_change ch;
			char pat[64], err[128];
			cr_assert_eq(isc_whatif_parse(scopes[k], &ch, pat, sizeof(pat), err,
						      sizeof(err)),
				     0);
			int64_t before, after;
			double gain;
			cr_assert_eq(isc_whatif_run(b.t, a, &ch, &before, &after, &gain), 0);
			cr_assert_eq(before - after, want[k], "named %d, %s: %lld ns earlier",
				     named, scopes[k], (long long)(before - after));
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(b.t);
	}
}

/* A host-only trace whose window holds no timed event (counters only): nothing to judge,
 * said without a GPU word; the same window in a trace with CUDA calls outside it names
 * what could have been timed there, CUDA calls and GPU work among them. */
Test(verdict, nothing_to_judge_speaks_of_the_host_alone)
{
	for (int cuda = 0; cuda <= 1; cuda++) {
		struct build b = start(100, 1);
		counter(&b, 100, "cpu_time", 0, 0);
		counter(&b, 100, "cpu_time", 10 * MS, 0);
		if (cuda) {
			ev(&b, ISC_T_CUDA_API, 100, "cudaMalloc", 20 * MS, 1 * MS);
		}
		cr_assert_eq(isc_trace_finalize(b.t), 0);
		struct isc_analyze_opts o = { .window_explicit = true, .window_end = 10 * MS };
		struct isc_analysis *a = analyse(b.t, &o);
		cr_assert_eq(a->verdict.type, ISC_BOUND_UNKNOWN, "%s",
			     isc_bound_name(a->verdict.type));
		const char *line = a->verdict.evidence[0];
		cr_assert(strstr(line, "nothing to judge: no timed events") != NULL, "%s", line);
		cr_assert_eq(strstr(line, "GPU") == NULL && strstr(line, "CUDA") == NULL, !cuda,
			     "%s", line);
		isc_analysis_destroy(a);
		isc_trace_destroy(b.t);
	}
}

/* Allocation churn from the exact counters: 500,000 allocations in a 100 ms recording
 * fire alloc.host-churn with the rate; 5,000 do not. */
Test(verdict, host_churn_from_exact_counters)
{
	for (int k = 0; k < 2; k++) {
		struct build b = start(100, 1);
		for (int i = 0; i < 10; i++) {
			ev(&b, ISC_T_SCOPE, 100, "compute", i * 10 * MS, 10 * MS);
		}
		b.t->inputs[0].malloc_calls = k == 0 ? 500000 : 5000;
		b.t->inputs[0].malloc_bytes = 64 * b.t->inputs[0].malloc_calls;
		b.t->inputs[0].meta_start_ns = 0;
		b.t->inputs[0].meta_end_ns = 100 * MS;
		struct isc_analysis *a = finish(&b);
		const struct isc_suggestion *s = sugg(a, "alloc.host-churn");
		if (k == 0) {
			cr_assert_not_null(s, "500,000 allocations in 100 ms");
			cr_assert_not_null(strstr(s->evidence[0], "5000000 per second"), "%s",
					   s->evidence[0]);
		} else {
			cr_assert_null(s, "50,000 per second is under host.malloc_rate");
		}
		isc_analysis_destroy(a);
		isc_trace_destroy(b.t);
	}
}

/* A --what-if that picks nothing is an error naming what it looked for. */
Test(verdict, what_if_matching_nothing_is_an_error)
{
	struct build b = start(100, 1);
	ev(&b, ISC_T_SCOPE, 100, "compute", 0, 10 * MS);
	cr_assert_eq(isc_trace_finalize(b.t), 0);
	const char *const q[] = { "scope:nothing_here*0.5" };
	struct isc_analyze_opts o = { .what_if = q, .n_what_if = 1 };
	struct isc_analysis *a = NULL;
	struct isc_diag d = { "" };
	cr_assert_eq(isc_analyze(b.t, &o, &a, &d), -ENOENT);
	cr_assert_not_null(strstr(d.msg, "scope:nothing_here*0.5"), "%s", d.msg);
	cr_assert_not_null(strstr(d.msg, "nothing in the window matches"), "%s", d.msg);
	const char *const ok[] = { "scope:compute*0.5" };
	o.what_if = ok;
	a = analyse(b.t, &o);
	cr_assert_gt(a->causal->whatif[0].gain_pct, 40.0);
	isc_analysis_destroy(a);
	isc_trace_destroy(b.t);
}
