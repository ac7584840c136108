/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fields of a group (the queues of one controller) that the completions
 * and folds of its queues write from several CPUs at once: each update is
 * one compare-and-exchange loop, so none is lost and a clock never moves
 * back.  Kept free of kernel structures: tests/unit runs it with threads.
 * Include nlat-math.h first.
 */
#ifndef _NLAT_GROUP_H
#define _NLAT_GROUP_H

/*
 * Move the clock *@t forward to @now, never back: a completion may store
 * a clock read before another CPU's later one.  Returns the value @now
 * replaced, or the newer value that stays.
 */
static inline u64 nlat_clock_advance(u64 *t, u64 now)
{
	u64 old = READ_ONCE(*t);

	do {
		if ((s64)(now - old) <= 0)
			return old;
	} while (!try_cmpxchg64(t, &old, now));
	return old;
}

/*
 * Fold a fold's mean into the group's EWMA *@ewma: weight @w per window,
 * @age windows since the last mean was folded (nlat_ewma_update()), so a
 * group that got no sample for a while forgets as a cell does.
 */
static inline void nlat_ewma_update_shared(u64 *ewma, u64 mean_ns, u32 w,
					   u64 age)
{
	u64 old = READ_ONCE(*ewma);

	while (!try_cmpxchg64(ewma, &old,
			      nlat_ewma_update(old, mean_ns, w, age)))
		;
}

#endif /* _NLAT_GROUP_H */
