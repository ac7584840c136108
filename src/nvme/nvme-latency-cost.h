/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path comparison of the "latency" iopolicy, kept free of kernel
 * structures so that tests/unit compiles this very file in userspace.
 *
 * Each candidate path is described, for the submitting node and the I/O's
 * size class, by the tracker's EWMA latency (ns, 0 = no estimate) and the
 * number of requests in flight on it.  The expected completion time of one
 * more I/O on the path is taken as
 *
 *	cost = lat_ns * (1 + inflight / NVME_LAT_QUEUE_SHARE)
 *
 * dm-ps-historical-service-time uses (1 + inflight): a serial server, where
 * each request ahead costs a whole service time.  An NVMe path serves many
 * requests at once (queues, a pipelined fabric), so a request ahead costs
 * a fraction of one: 1/NVME_LAT_QUEUE_SHARE.  Either way the in-flight term
 * is what keeps the fastest path from taking every I/O of a window (the
 * estimate only moves once per window) and spreads I/O over paths of equal
 * latency like queue-depth does; the latency term keeps a path that is
 * several times slower from getting I/O just because it is idle.  With a
 * share of 8, a path 5x slower than an idle one only wins once the fast one
 * has 32 requests in flight.  make bench compares the rule with the others.
 *
 * Computed as lat_ns * (NVME_LAT_QUEUE_SHARE + inflight), the same order.
 * lat_ns is capped at NVME_LAT_MAX_NS (~18 minutes) and inflight at
 * NVME_LAT_MAX_INFLIGHT, so the product stays below 2^61 and never wraps.
 */
#ifndef _NVME_LATENCY_COST_H
#define _NVME_LATENCY_COST_H

#define NVME_LAT_MAX_NS		(1ULL << 40)
#define NVME_LAT_MAX_INFLIGHT	((1U << 20) - 1)
#define NVME_LAT_QUEUE_SHARE	8

struct nvme_lat_cand {
	u64	lat_ns;		/* tracker estimate, 0 = no data */
	u32	inflight;	/* requests in flight on the path */
	bool	stalled;	/* in flight, nothing completing */
};

static inline u64 nvme_lat_cost(const struct nvme_lat_cand *c)
{
	u64 lat = c->lat_ns < NVME_LAT_MAX_NS ? c->lat_ns : NVME_LAT_MAX_NS;
	u32 nr = c->inflight < NVME_LAT_MAX_INFLIGHT ?
		 c->inflight : NVME_LAT_MAX_INFLIGHT;

	return lat * (NVME_LAT_QUEUE_SHARE + nr);
}

/*
 * nvme_lat_cmp() - which of two candidate paths takes the next I/O.
 *
 * Returns < 0 if @a is the better path, > 0 if @b is, 0 if they are equal.
 * A path that answers beats a stalled one, whatever their estimates (a
 * stalled path's estimate is from before it stopped answering); then a
 * path with an estimate beats one without (a path without data only gets
 * I/O as a probe, granted by the tracker, not here); two paths with
 * estimates compare by cost, then by fewer in-flight requests; two paths
 * without estimates compare by fewer in-flight requests (queue-depth).
 */
static inline int nvme_lat_cmp(const struct nvme_lat_cand *a,
			       const struct nvme_lat_cand *b)
{
	u64 ca, cb;

	if (a->stalled != b->stalled)
		return a->stalled ? 1 : -1;
	if (!a->lat_ns != !b->lat_ns)
		return a->lat_ns ? -1 : 1;
	if (a->lat_ns) {
		ca = nvme_lat_cost(a);
		cb = nvme_lat_cost(b);
		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	if (a->inflight != b->inflight)
		return a->inflight < b->inflight ? -1 : 1;
	return 0;
}

#endif /* _NVME_LATENCY_COST_H */
