// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: the iopolicies, as nvme-core picks a path per I/O.  All paths
 * are ANA optimized and no path has a NUMA affinity, so numa is "the
 * first path".
 */
#include "sim.h"

const char *const policy_names[NR_POL] = {
	[POL_NUMA]	= "numa",
	[POL_RR]	= "round-robin",
	[POL_QD]	= "queue-depth",
	[POL_ADAPT]	= "adaptive",
	[POL_LAT]	= "latency",
	[POL_FAST]	= "fast-only",
};

/* nvme_round_robin_path(): per (head, node), the path after the last one. */
static unsigned int pick_rr(struct sim *s, const struct io *io)
{
	unsigned int *cur = &s->rr_cur[io->ns][io->node];

	*cur = (*cur + 1) % s->sc->nr_paths;
	return *cur;
}

/* nvme_queue_depth_path(): lowest ctrl->nr_active, ties to the first. */
static unsigned int pick_qd(struct sim *s)
{
	unsigned int i, best = 0;

	for (i = 0; i < s->sc->nr_paths; i++) {
		if (s->ctrl[i].nr_active < s->ctrl[best].nr_active)
			best = i;
		if (!s->ctrl[best].nr_active)
			break;
	}
	return best;
}

/*
 * nvme_latency_pick(): paths in list order; the first that the tracker
 * grants a probe takes the I/O, else the lowest by the rule's comparison
 * (nvme_lat_cmp() for kernel), ties to the first.
 */
static unsigned int pick_latency(struct sim *s, struct io *io)
{
	const struct rule *r = &s->cfg->rule;
	struct sim_cand c = { 0 }, best = { 0 };
	unsigned int i;
	int found = -1;

	if (r->rr)
		return pick_rr(s, io);
	s->pick_u = IO_UNITS(io->bytes);
	for (i = 0; i < s->sc->nr_paths; i++) {
		struct nlat_view v;

		tracker_read(s, &s->nq[io->ns][i], io->node, io->cls, true, &v);
		if (v.probe) {
			io->probe = true;
			return i;
		}
		/* nvme_lat_read() */
		c.c.lat_ns = v.lat_ns;
		c.c.inflight = v.inflight;
		c.c.nbar = v.nbar;
		c.c.stalled = v.stalled;
		c.base = r->base ? s->pick_base : 0;
		if (found < 0 || rule_cmp(r, &c, &best) < 0) {
			found = i;
			best = c;
		}
	}
	return found;
}

unsigned int policy_pick(struct sim *s, struct io *io)
{
	switch (s->pol) {
	case POL_RR:
		return pick_rr(s, io);
	case POL_QD:
		return pick_qd(s);
	case POL_ADAPT:
		return adaptive_pick(s, io);
	case POL_LAT:
		return pick_latency(s, io);
	case POL_FAST:
		return s->sc->fast;
	default:
		return 0;
	}
}
