/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path comparison of the "latency" iopolicy, kept free of kernel
 * structures so that tests/unit and tests/sim compile this very file in
 * userspace.
 *
 * Each candidate path is the tracker's view of it (struct nlat_view), for
 * the submitting node and the I/O's class: its EWMA latency (ns, 0 = no
 * estimate), the requests in flight on its controller now, nbar (their
 * mean number while the estimate was measured) and its states.  The
 * expected completion time of one more I/O on the path is taken as
 *
 *	cost = lat_ns * (S + inflight) / (S + nbar * f),  S = NVME_LAT_QUEUE_SHARE
 *
 * A request in flight costs a 1/S of a latency (an NVMe path serves many
 * at once): that spreads a burst over paths of equal latency, as
 * queue-depth does, before the estimates move.  The estimate already holds
 * the queueing of the load it was measured at, so that load (nbar) is
 * charged again only in part, f, set by the pair of paths compared:
 *
 * - f = 1 between paths whose latencies differ by 1/4 of the lower or
 *   more (NVME_LAT_NEAR_SHIFT): a path is charged only for load beyond
 *   what it was measured at, so the faster path keeps a load at which it
 *   is still the faster.  With less, a path carrying depth D costs up to
 *   (S + D) / (S + D * f) of its latency: at f = 1/2 a path 1.5x slower
 *   takes a share at depth 16, and any path less than 2x slower at some
 *   depth, though its latency does not grow with the load at all;
 * - f = 1/2 between paths of one latency: with all of it, a path is never
 *   charged for the load it carries and two equal paths keep whatever
 *   split they had (a path that recovers never wins its share back); with
 *   half, they converge to an even split;
 * - in between, f rises linearly with the difference.  A step would move
 *   a burst each time the latencies cross it: on links, where latency
 *   follows load, the split settles where the latencies meet, so they
 *   keep crossing, and each time f drops, the loaded path costs more at
 *   once and the next requests pile onto the slow link.
 *
 * lat_ns is capped at NVME_LAT_MAX_NS (~18 minutes) and inflight at
 * NVME_LAT_MAX_INFLIGHT, so lat_ns * (S + inflight) stays below 2^61;
 * mul_u64_u64_div_u64() scales it by the nbar fraction without wrapping.
 */
#ifndef _NVME_LATENCY_COST_H
#define _NVME_LATENCY_COST_H

#include <linux/math64.h>
#include "blk-nodelat.h"

#define NVME_LAT_MAX_NS		(1ULL << 40)
#define NVME_LAT_MAX_INFLIGHT	((1U << 20) - 1)
#define NVME_LAT_QUEUE_SHARE	8
#define NVME_LAT_NEAR_SHIFT	2	/* f < 1 within 1/4 of the lower latency */

static inline u64 nvme_lat_capped(u64 lat_ns)
{
	return lat_ns < NVME_LAT_MAX_NS ? lat_ns : NVME_LAT_MAX_NS;
}

/*
 * The part of @nbar charged between two paths whose latencies are @d
 * apart, @w being 1/2^NVME_LAT_NEAR_SHIFT of the lower: nbar * f, half
 * at one latency, rising linearly to all of it at @w apart.
 */
static inline u32 nvme_lat_charge(u32 nbar, u64 d, u64 w)
{
	nbar = nbar < NLAT_NBAR_MAX ? nbar : NLAT_NBAR_MAX;
	if (d >= w)
		return nbar;
	/* d < w: less than nbar / 2 more */
	return nbar / 2 + (u32)mul_u64_u64_div_u64(nbar / 2, d, w);
}

/* The cost of @c, @charge of its nbar charged (nvme_lat_charge()). */
static inline u64 nvme_lat_cost(const struct nlat_view *c, u32 charge)
{
	u64 lat = nvme_lat_capped(c->lat_ns);
	u32 nr = c->inflight < NVME_LAT_MAX_INFLIGHT ?
		 c->inflight : NVME_LAT_MAX_INFLIGHT;

	return mul_u64_u64_div_u64(lat * (NVME_LAT_QUEUE_SHARE + nr),
				   NLAT_NBAR_ONE,
				   NVME_LAT_QUEUE_SHARE * NLAT_NBAR_ONE +
				   (u64)charge);
}

/*
 * The order of the states nvme_lat_cmp() ranks before any estimate:
 * < 0 if @a is the better, > 0 if @b is, 0 if their states tie.
 */
static inline int nvme_lat_cmp_state(const struct nlat_view *a,
				     const struct nlat_view *b)
{
	if (a->stalled != b->stalled)
		return a->stalled ? 1 : -1;
	if (a->unproven != b->unproven)
		return a->unproven ? 1 : -1;
	if (a->late != b->late)
		return a->late > b->late ? 1 : -1;
	/* both silent: a starved host leaves a live path silent too */
	if (a->late == NLAT_LATE_SILENT && a->silent_ms != b->silent_ms)
		return a->silent_ms < b->silent_ms ? -1 : 1;
	return 0;
}

/*
 * nvme_lat_cmp() - which of two candidate paths takes the next I/O.
 *
 * Returns < 0 if @a is the better path, > 0 if @b is, 0 if they are equal.
 * A path that answers beats a stalled one, whatever their estimates (a
 * stalled path's estimate is from before it stopped answering), then an
 * unproven one (it may have died idle: its first I/O after a quiet spell
 * has not answered yet; the caller holds I/O when every path is), then a
 * late one (it took more since its last answer than a live path does:
 * one that died under load, whatever its estimate; a silent one after
 * one in a burst, and of two silent ones the one silent longer); then a
 * path with an estimate beats one without (a path without data only gets
 * I/O as a probe, granted by the tracker, not here); two paths with
 * estimates compare by cost (nbar charged by half at one latency, in full
 * 1/4 apart: nvme_lat_charge()), then by fewer in-flight requests; two paths
 * without estimates compare by fewer in-flight requests (queue-depth).
 */
static inline int nvme_lat_cmp(const struct nlat_view *a,
			       const struct nlat_view *b)
{
	int st = nvme_lat_cmp_state(a, b);
	u64 ca, cb;

	if (st)
		return st;
	if (!a->lat_ns != !b->lat_ns)
		return a->lat_ns ? -1 : 1;
	if (a->lat_ns) {
		u64 la = nvme_lat_capped(a->lat_ns);
		u64 lb = nvme_lat_capped(b->lat_ns);
		u64 d = la > lb ? la - lb : lb - la;
		u64 w = (la < lb ? la : lb) >> NVME_LAT_NEAR_SHIFT;

		ca = nvme_lat_cost(a, nvme_lat_charge(a->nbar, d, w));
		cb = nvme_lat_cost(b, nvme_lat_charge(b->nbar, d, w));
		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	if (a->inflight != b->inflight)
		return a->inflight < b->inflight ? -1 : 1;
	return 0;
}

/*
 * A candidate the pair cannot judge alone: stalled, unproven or late.
 * Every other path may beat it (nvme_lat_cmp_state()), so a scan decides.
 */
static inline bool nvme_lat_doubtful(const struct nlat_view *c)
{
	return c->stalled || c->unproven || c->late;
}

/*
 * A candidate that never answered an I/O of this class (no estimate) and
 * was given I/O: it is unproven, not yet stalled.  Paths given their
 * first I/O together answer about together, so its answer is as near as
 * the one a proven path gave.
 */
static inline bool nvme_lat_fresh(const struct nlat_view *c)
{
	return c->unproven && !c->stalled && !c->lat_ns;
}

/*
 * nvme_lat_wait_beside() - should an I/O wait rather than take @best?
 *
 * @best is proven and the better path; another candidate is
 * nvme_lat_fresh() (@fresh).  Until that one answers, @best wins only
 * because the other has not answered yet, so a burst would all go to
 * it: with a start that holds I/O until the first answer, the first path
 * to answer takes every held request, which on a link it then serves one
 * after another.  @best takes NVME_LAT_QUEUE_SHARE requests, as an equal
 * path would before the in-flight term turns; the rest wait for the
 * answer (or for the fresh path to stall).
 */
static inline bool nvme_lat_wait_beside(const struct nlat_view *best,
					bool fresh)
{
	return fresh && !best->stalled && !best->unproven &&
	       best->inflight >= NVME_LAT_QUEUE_SHARE;
}

#endif /* _NVME_LATENCY_COST_H */
