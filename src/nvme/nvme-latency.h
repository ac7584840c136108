/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "latency" iopolicy of nvme-core: hooks called from multipath.c and
 * core.c (see src/patches/<series>/), implemented in nvme-latency.c.
 */
#ifndef _NVME_LATENCY_H
#define _NVME_LATENCY_H

#include <linux/bio.h>
#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/rcupdate.h>
#include <linux/tracepoint-defs.h>
#include "blk-nodelat.h"
#include "nvme-latency-cost.h"

struct nvme_ns;
struct nvme_ns_head;
struct nvme_subsystem;
struct request;

enum nvme_lat_read_ret {
	NVME_LAT_UNTRACKED,
	NVME_LAT_TRACKED,
	NVME_LAT_PROBE,
};

enum nvme_lat_read2_ret {
	NVME_LAT2_OLD,
	NVME_LAT2_UNTRACKED,
	NVME_LAT2_PROBE_A,
	NVME_LAT2_PROBE_B,
	NVME_LAT2_BOTH,
};

/* A read or write with data: the I/O that yields a latency sample. */
static inline bool nvme_lat_bio_rw(struct bio *bio)
{
	return (bio_op(bio) == REQ_OP_READ || bio_op(bio) == REQ_OP_WRITE) &&
	       bio->bi_iter.bi_size;
}

/* The tracker's class of @bio: whose estimates it is chosen by. */
static inline unsigned int nvme_lat_bio_class(struct bio *bio)
{
	return nlat_io_class(bio_op(bio) == REQ_OP_READ, bio->bi_iter.bi_size);
}

/* A whole scan ranks a route's paths at most this often (a tracker window). */
#define NVME_LAT_RANK_JIFFIES	max(1, HZ / 20)

/*
 * A head's route for one (node, class), nvme-latency-route.c: the path of
 * lowest idle cost at the last ranking, the last challenger, when it was
 * ranked, and its probe budget.  Pointers under the head's SRCU.
 */
struct nvme_lat_slot {
	struct nvme_ns __rcu	*best;
	struct nvme_ns __rcu	*next;
	unsigned long		ranked;		/* jiffies */
	/* the node's probe budget, in its first class's slot only */
	unsigned long		probe_at;	/* no probe before, jiffies */
	unsigned long		probe_gap;	/* after a probe, jiffies */
};

/* The slot holding the probe budget of @s, the slot of class @cls. */
static inline struct nvme_lat_slot *nvme_lat_budget(struct nvme_lat_slot *s,
						    unsigned int cls)
{
	return s - cls;
}

#if IS_ENABLED(CONFIG_NVME_MULTIPATH)
struct nvme_lat_slot *nvme_lat_slot(struct nvme_ns_head *head, int node,
				    unsigned int cls);

/*
 * Whether the caller is to rank @s's paths now: one caller per interval,
 * the others keep using the last ranking.
 */
static inline bool nvme_lat_rank_due(struct nvme_lat_slot *s)
{
	unsigned long t = READ_ONCE(s->ranked), now = jiffies;

	/* also while nothing is ranked: a scan decides each I/O meanwhile */
	if (time_before(now, t + NVME_LAT_RANK_JIFFIES))
		return false;
	return cmpxchg(&s->ranked, t, now) == t;
}

void nvme_lat_route_add(struct nvme_ns_head *head);
void nvme_lat_route_forget(struct nvme_ns *ns, bool last);
void nvme_lat_route_exit(void);
bool nvme_lat_default(void);
int nvme_lat_set_iopolicy(struct nvme_subsystem *subsys, int policy);
void nvme_lat_add_path(struct nvme_ns *ns);
void nvme_lat_remove_path(struct nvme_ns *ns);
void nvme_lat_path_removed(struct nvme_ns *ns);
void nvme_lat_unwind_path(struct nvme_ns *ns);
enum nvme_lat_read_ret nvme_lat_read(struct nvme_ns *ns, int node,
				     unsigned int cls, bool may_probe,
				     struct nlat_view *c);
enum nvme_lat_read2_ret nvme_lat_read2(struct nvme_ns *a, struct nvme_ns *b,
				       int node, unsigned int cls,
				       bool may_probe, struct nlat_view c[2]);
void nvme_lat_end_error(struct request *req);
bool nvme_lat_may_hold(void);
bool nvme_lat_hold(struct nvme_ns_head *head, struct bio *bio, bool busy);
void nvme_lat_release_head(struct nvme_ns_head *head);
void nvme_lat_exit(void);

/* /sys/block/<path>/latency, in nvme-core's namespace attributes */
extern struct device_attribute nvme_lat_attr;
bool nvme_lat_attr_visible(struct device *dev);

DECLARE_TRACEPOINT(nvme_latency_path);
DECLARE_TRACEPOINT(nvme_latency_probe);
void __nvme_lat_trace_path(struct nvme_ns_head *head, int node,
			   unsigned int cls, struct nvme_ns *ns,
			   const struct nlat_view *c);
void __nvme_lat_trace_probe(struct nvme_ns_head *head, int node,
			    unsigned int cls, struct nvme_ns *ns,
			    const struct nlat_view *c);

/* @ns is the choice for @node (not a probe); under head->srcu */
static inline void nvme_lat_trace_path(struct nvme_ns_head *head, int node,
				       unsigned int cls, struct nvme_ns *ns,
				       const struct nlat_view *c)
{
	if (tracepoint_enabled(nvme_latency_path))
		__nvme_lat_trace_path(head, node, cls, ns, c);
}

/* The tracker granted @ns a probe; under head->srcu */
static inline void nvme_lat_trace_probe(struct nvme_ns_head *head, int node,
					unsigned int cls, struct nvme_ns *ns,
					const struct nlat_view *c)
{
	if (tracepoint_enabled(nvme_latency_probe))
		__nvme_lat_trace_probe(head, node, cls, ns, c);
}
#else
static inline void nvme_lat_remove_path(struct nvme_ns *ns)
{
}

static inline void nvme_lat_path_removed(struct nvme_ns *ns)
{
}

static inline void nvme_lat_unwind_path(struct nvme_ns *ns)
{
}

static inline void nvme_lat_end_error(struct request *req)
{
}

static inline void nvme_lat_exit(void)
{
}
#endif

#endif /* _NVME_LATENCY_H */
