/* SPDX-License-Identifier: MIT */
/*
 * What a rule's change gains, from the what-if engine (graph.h): every suggestion states
 * the change it simulates, and its estimate is the simulated change of the window, so no
 * estimate exceeds what the simulation gives or 100 %.
 */
#include "analyzer/base/fmt.h"
#include "analyzer/causal/graph.h"
#include "analyzer/rules/rules.h"

double isc_sugg_simulate(const struct isc_rule_ctx *c, const struct isc_change *ch,
			 struct isc_suggestion *s, const char *what)
{
	int64_t before = 0, after = 0;
	double gain = 0;
	if (c->a->causal == NULL || c->a->causal->n == 0 ||
	    isc_whatif_run(c->t, c->a, ch, &before, &after, &gain) < 0) {
		/* No graph (or no memory for the run): nothing simulated, nothing claimed. */
		isc_sugg_evidence(s, "simulated: %s: no dependency graph to re-time", what);
		return 0;
	}
	gain = gain > 0 ? gain : 0;
	char b1[ISC_FMT_LEN];
	isc_sugg_evidence(s,
			  "simulated on the dependency graph: %s: the window's work ends %s "
			  "earlier (%.1f %% of the window)",
			  what, isc_fmt_dur(b1, (double)(before - after > 0 ? before - after : 0)),
			  gain);
	return gain;
}
