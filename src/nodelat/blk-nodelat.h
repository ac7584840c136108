/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blk-nodelat: per-NUMA-node completion latency of a blk-mq request queue.
 *
 * Interface for users of the tracker (nvme-core's "latency" iopolicy).
 * Users must not link against blk-nodelat.ko: they take the ops table with
 * symbol_request(blk_nodelat_ops) and drop it with symbol_put(), so the
 * module loads on demand and can be removed once nobody holds it.
 */
#ifndef _BLK_NODELAT_H
#define _BLK_NODELAT_H

#include <linux/types.h>

struct request_queue;

/*
 * I/O classes.  A path is only ever compared with another path on I/Os of
 * the same class, so a path that happens to carry large I/Os or writes
 * does not look slow next to one carrying small reads.  Size boundaries
 * are powers of four: <= 4 KiB, <= 16 KiB, <= 64 KiB, larger; reads are
 * classes 0-3, writes 4-7 (and other I/O, which is never sampled).
 */
#define NLAT_NR_SIZES		4
#define NLAT_NR_CLASSES		(2 * NLAT_NR_SIZES)

static inline unsigned int nlat_size_class(unsigned int bytes)
{
	if (bytes <= 4096)
		return 0;
	if (bytes <= 16384)
		return 1;
	if (bytes <= 65536)
		return 2;
	return 3;
}

/*
 * A size class's weight in 4 KiB units, a power of two (its log2 here, so
 * that read() scales by shifts): what a request of that class adds to its
 * group's load (nlat_view.inflight, .nbar).  128 KiB for the largest
 * class, the common maximum transfer of fabrics controllers.
 */
static inline unsigned int nlat_size_shift(unsigned int size_class)
{
	return size_class < 3 ? 2 * size_class : 5;
}

static inline unsigned int nlat_size_units(unsigned int size_class)
{
	return 1U << nlat_size_shift(size_class);
}

/* @units (4k, >= 0) as requests of 1 << @shift units, the last one partly */
static inline u64 nlat_units_nr(s64 units, unsigned int shift)
{
	return ((u64)units + (1ULL << shift) - 1) >> shift;
}

static inline unsigned int nlat_rw_class(bool read, unsigned int size_class)
{
	return size_class + (read ? 0 : NLAT_NR_SIZES);
}

static inline unsigned int nlat_io_class(bool read, unsigned int bytes)
{
	return nlat_rw_class(read, nlat_size_class(bytes));
}

/* Mean requests in flight, in 1/NLAT_NBAR_ONE units (nlat_view.nbar). */
#define NLAT_NBAR_SHIFT		8
#define NLAT_NBAR_ONE		(1U << NLAT_NBAR_SHIFT)
#define NLAT_NBAR_MAX		((1U << 20) << NLAT_NBAR_SHIFT)

/* nlat_view.late: in a burst (answering, behind), or silent */
#define NLAT_LATE_BURST		1
#define NLAT_LATE_SILENT	2
#define NLAT_SILENT_MAX_MS	0xffffU

/* What the tracker knows about one queue, for one node and class. */
struct nlat_view {
	u64	lat_ns;		/* EWMA of completion latency, 0 if none yet */
	/* both in requests of the class read: a 128 KiB one is 32 4 KiB */
	u32	inflight;	/* group's requests made, not completed */
	u32	nbar;		/* group's mean in flight, 1/NLAT_NBAR_ONE */
	bool	probe;		/* no fresh data: caller was granted a probe */
	bool	stalled;	/* in flight, yet nothing completed for a while */
	bool	unproven;	/* quiet, then given I/O: not answered since */
	bool	started;	/* inflight is not 0 */
	/* last, in what was padding: an older read() zeroed them */
	u8	late;		/* given more since its last answer: nlat_late() */
	u16	silent_ms;	/* NLAT_LATE_SILENT: since its last answer */
};

struct request;

struct blk_nodelat_ops {
	/*
	 * Start tracking @q (sleeps: freezes the queue, so not from @q's
	 * I/O path nor with @q frozen), in the group of queues attached
	 * with the same @group key: the requests in flight and the load
	 * that read() reports are the group's (nvme-core passes the
	 * controller).  Idempotent: a tracked queue keeps its group.
	 * Returns 1 when it
	 * started tracking, 0 when @q was tracked already, -EAGAIN when @q
	 * is not registered (yet), -EBUSY when the queue did not drain in
	 * time, -ENODEV (dying), -ENOMEM, -EINVAL (not blk-mq), or
	 * -EOPNOTSUPP (a kernel whose rq_qos hooks a module cannot enable).
	 */
	int (*attach)(struct request_queue *q, const void *group);
	/*
	 * Stop tracking @q (sleeps, as attach).  Idempotent; returns true if
	 * it stopped tracking.  Tracking also stops when @q is torn down.
	 */
	bool (*detach)(struct request_queue *q);
	/* Whether @q is tracked; for the control path. */
	bool (*tracked)(struct request_queue *q);
	/* Queues tracked now: the user holds the ops while this is > 0. */
	unsigned int (*nr_tracked)(void);
	/*
	 * Fill @v for I/O submitted from @node of class @cls.  Called
	 * per I/O under RCU or SRCU protection of the path; does not sleep.
	 * lat_ns is 0 until the first window with samples has been folded.
	 * When @may_probe and the estimate is missing (once per window) or
	 * stale (not updated for stale_windows windows, twice as long while
	 * probes find it unchanged; once until the probe's sample is folded;
	 * a stale estimate still reads its last value) and the queue is
	 * neither stalled nor unproven, one caller per (queue, node, class)
	 * is told v->probe = true (nlat_probe_due()).  The grant is used up
	 * whether or not the I/O is sent here: stop reading other paths once
	 * one grants a probe.  Pass !@may_probe for I/O that yields no
	 * sample (passthrough, flush, discard).  Returns false when @q is
	 * not tracked (v is then zeroed).
	 */
	bool (*read)(struct request_queue *q, int node, unsigned int cls,
		     bool may_probe, struct nlat_view *v);
	/*
	 * @rq ends in error or is failed over: it is no latency sample.
	 * Call before the request ends.
	 */
	void (*end_error)(struct request *rq);
};

extern const struct blk_nodelat_ops blk_nodelat_ops;

/*
 * Read-only state for sysfs, added after blk_nodelat_ops: a symbol of its
 * own, so that a user running against an older blk-nodelat.ko finds it
 * missing (symbol_get() returns NULL) instead of reading past the end of
 * an older ops table.  Members beyond @version are added with a version
 * bump; a user checks @version before calling one.
 */
#define BLK_NODELAT_INFO_V1	1

struct blk_nodelat_info_ops {
	unsigned int	version;
	/*
	 * (V1) Print @q's state at offset @at of sysfs page @buf (see
	 * sysfs_emit_at()): in-flight count, stalled, probes granted, and a
	 * line per online node and size class.  Does not sleep.  Returns
	 * the new length of @buf, or -ENODEV when @q is not tracked.
	 */
	int		(*emit)(struct request_queue *q, char *buf, int at);
};

extern const struct blk_nodelat_info_ops blk_nodelat_info_ops;

/*
 * The user's waker, added after blk_nodelat_info_ops (a symbol of its own
 * for the same reason).  A group turns unproven when it gets I/O after
 * it was quiet (no completion for stale_windows windows, or ever): it may
 * have died idle, so a user sends it nothing more until it answers, and
 * may hold I/O while all its candidates are unproven.  @answered is then
 * called, from completion context (must not sleep), by the completion
 * that ends such a quiet spell, after the group's state reads answered.
 */
struct blk_nodelat_waker {
	void	(*answered)(const void *group);
};

struct blk_nodelat_wake_ops {
	/*
	 * Install @w (NULL: none; one user at a time).  May sleep: returns
	 * once no completion still calls the waker it replaced.
	 */
	void	(*set_waker)(const struct blk_nodelat_waker *w);
};

extern const struct blk_nodelat_wake_ops blk_nodelat_wake_ops;

/*
 * Many queues at once, added after blk_nodelat_wake_ops (a symbol of its
 * own for the same reason).  Every freeze of a batch is started before
 * the first is waited for, under one deadline: a batch costs about one
 * RCU grace period, not one per queue.
 */
struct blk_nodelat_batch_ops {
	/* attach() of each @qs[i] in group @groups[i], returning @rets[i] */
	void	(*attach)(struct request_queue *const *qs,
			  const void *const *groups, int *rets,
			  unsigned int n);
	/*
	 * detach() of each, bounded as attach is: @rets[i] is 1 when it
	 * stopped tracking, 0 when it was not tracked, -EBUSY when the queue
	 * did not drain in time (it stays tracked).
	 */
	void	(*detach)(struct request_queue *const *qs, int *rets,
			  unsigned int n);
};

extern const struct blk_nodelat_batch_ops blk_nodelat_batch_ops;

/*
 * Two queues at one clock, added after blk_nodelat_batch_ops (a symbol of
 * its own for the same reason; members beyond @version come with a
 * version bump): for a user that chooses between two paths per I/O.
 */
#define BLK_NODELAT_PAIR_V1	1

struct blk_nodelat_pair_ops {
	unsigned int	version;
	/*
	 * (V1) read() of @qs[0] into @v[0], then of @qs[1] into @v[1], at
	 * one clock, the caller holding rcu_read_lock() (read() takes its
	 * own).  Stops at a queue that is not tracked (its view zeroed) or
	 * that is granted a probe.  Returns the views filled of tracked
	 * queues: 0 (@qs[0] untracked), 1 (@v[0].probe, or @qs[1]
	 * untracked) or 2.
	 */
	unsigned int	(*read2)(struct request_queue *const qs[2], int node,
				 unsigned int cls, bool may_probe,
				 struct nlat_view v[2]);
};

extern const struct blk_nodelat_pair_ops blk_nodelat_pair_ops;

#endif /* _BLK_NODELAT_H */
