/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU sample counters of one tracker cell, kept free of kernel
 * structures so that tests/unit runs this very file with threads.
 *
 * Only one CPU adds to a counter pair, with interrupts off (completions
 * nest: an irq can end a request while a kworker on the same CPU is ending
 * another).  The fold reads every CPU's pair from another CPU and must
 * never pair a sample's count with a sum that lacks it: a stale cell folds
 * even one sample, and a 0 ns mean would win every I/O of its node and
 * class.  seq is odd while an add is under way, as in a seqcount; the
 * reader retries, which costs it nothing while the CPU is not adding.
 */
#ifndef _NLAT_ACC_H
#define _NLAT_ACC_H

struct nlat_acc {
	u32	seq;
	u64	sum_ns;
	u64	nr;
};

/* Caller runs on the counters' CPU with interrupts off. */
static inline void nlat_acc_add(struct nlat_acc *a, u64 lat_ns)
{
	WRITE_ONCE(a->seq, a->seq + 1);
	smp_wmb();		/* seq odd before the counters change */
	WRITE_ONCE(a->sum_ns, a->sum_ns + lat_ns);
	WRITE_ONCE(a->nr, a->nr + 1);
	smp_wmb();		/* counters before seq even */
	WRITE_ONCE(a->seq, a->seq + 1);
}

static inline void nlat_acc_read(const struct nlat_acc *a, u64 *sum_ns,
				 u64 *nr)
{
	u32 seq;

	do {
		seq = READ_ONCE(a->seq);
		smp_rmb();	/* pairs with the first smp_wmb() */
		*sum_ns = READ_ONCE(a->sum_ns);
		*nr = READ_ONCE(a->nr);
		smp_rmb();	/* pairs with the second smp_wmb() */
	} while ((seq & 1) || READ_ONCE(a->seq) != seq);
}

#endif /* _NLAT_ACC_H */
