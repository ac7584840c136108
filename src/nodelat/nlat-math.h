/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nlat-math.h - fixed-point arithmetic of blk-nodelat.
 *
 * Pure functions of their arguments: no locking, no clock, no allocation.
 * The kernel module and the userspace unit tests (tests/unit/, with a shim
 * for <linux/types.h> and <linux/math64.h>) compile this same file.
 *
 * Formats and units
 *   latency, times	u64 nanoseconds.  A sample is clamped to
 *			[1, NLAT_LAT_MAX_NS]: 0 means "no estimate" and
 *			anything over ~17 s is a hung I/O, not a latency.
 *   estimate		u64, nanoseconds << NLAT_EWMA_SHIFT (1/256 ns units),
 *			0 = no estimate.  It is a convex combination of
 *			clamped samples, so it never exceeds
 *			NLAT_LAT_MAX_NS << NLAT_EWMA_SHIFT = 2^42.
 *   weights		u32, 1/1024 units (NLAT_FP_SHIFT), 0 .. NLAT_FP_ONE.
 *
 * Overflow ceiling
 *   estimate * weight <= 2^42 * 2^10 = 2^52, the sum of the two weighted
 *   terms <= 2^52 + 2^10: far from 2^64.  A window sum is the sum of at
 *   most 2^30 clamped samples (2^64 / 2^34), i.e. 2^30 I/Os in one window.
 *
 * The estimate of one (queue, node, size class) -- "cell" -- advances once
 * per fold (every window while the queue is active):
 *
 *	est = est * w^age + mean * (1 - w^age)
 *
 * w is the history weight per window, age the number of windows since the
 * last update (>= 1) and mean the mean latency of the samples gathered
 * since.  A cell updated every window keeps weight w on its history; one
 * that went quiet for n windows keeps only w^n, so an old value is
 * forgotten at the same rate as if it had been updated with every window
 * in between.  Samples of a window with fewer than min_samples samples are
 * carried over to the next window, unless the cell is stale (no update for
 * stale_windows windows) or has no estimate: then any sample is folded.
 *
 * A stale or empty cell asks for a probe: read() grants one to a caller,
 * who sends that I/O to the queue so that the cell gets a fresh sample
 * (nlat_probe_due(): an empty cell once per window, a stale one once per
 * stale interval).  A probe that finds the estimate
 * unchanged (within NLAT_PROBE_SAME_PCT) doubles the time until the next
 * one, up to stale_windows << NLAT_PROBE_BACKOFF_MAX windows: a path that
 * stays slow costs ever fewer slow I/Os, one that changed is probed at the
 * base rate again.
 *
 * A sample above NLAT_OUTLIER_MULT times the estimate is counted at that
 * bound: one hung I/O among a window's thousand must not move the mean by
 * its own length, and a real step still shows within a few windows.
 */
#ifndef _NLAT_MATH_H
#define _NLAT_MATH_H

#include <linux/types.h>
#include <linux/math64.h>
#include "blk-nodelat.h"

#define NLAT_FP_SHIFT		10
#define NLAT_FP_ONE		(1U << NLAT_FP_SHIFT)
#define NLAT_EWMA_SHIFT		8
#define NLAT_LAT_MAX_NS		(1ULL << 34)

/* Knobs: defaults and ranges; why these, docs/design.md ("Defaults"). */
#define NLAT_WINDOW_USEC_DEF	50000U
#define NLAT_WINDOW_USEC_MIN	1000U
#define NLAT_WINDOW_USEC_MAX	1000000U
#define NLAT_HISTORY_PCT_DEF	75U
#define NLAT_HISTORY_PCT_MIN	0U
#define NLAT_HISTORY_PCT_MAX	99U
#define NLAT_MIN_SAMPLES_DEF	4U
#define NLAT_MIN_SAMPLES_MIN	1U
#define NLAT_MIN_SAMPLES_MAX	1000U
#define NLAT_STALE_WINDOWS_DEF	4U
#define NLAT_STALE_WINDOWS_MIN	1U
#define NLAT_STALE_WINDOWS_MAX	1000U

#define NLAT_PROBE_BACKOFF_MAX	1U	/* 4 windows << 1: 0.4 s by default */
#define NLAT_QUIET_MULT		4U	/* quiet: this many own latencies */
#define NLAT_PROBE_SAME_PCT	25U
#define NLAT_OUTLIER_MULT	8U

/* Knob values in the units the math uses. */
struct nlat_params {
	u64	window_ns;	/* 1e6 .. 1e9 */
	u32	hist_w;		/* history weight per window, 0 .. 1014 */
	u32	min_samples;	/* 1 .. 1000 */
	u32	stale_windows;	/* 1 .. 1000 */
};

/* State of one cell that the fold updates. */
struct nlat_est {
	u64	ewma;		/* ns << NLAT_EWMA_SHIFT, 0: no estimate */
	u64	upd_ns;		/* clock of the last update */
	u64	acc_sum;	/* ns of samples carried over, not folded */
	u32	acc_nr;		/* number of those samples */
	u32	backoff;	/* probe interval is stale_windows << backoff */
	u64	samples;	/* samples folded into ewma, ever */
};

/* @pct: 0 .. 100.  Returns the weight in 1/1024 units, rounded. */
static inline u32 nlat_pct_to_w(u32 pct)
{
	return (pct * NLAT_FP_ONE + 50) / 100;
}

static inline u64 nlat_clamp_lat(u64 ns)
{
	if (!ns)
		return 1;
	return ns > NLAT_LAT_MAX_NS ? NLAT_LAT_MAX_NS : ns;
}

/* The estimate in ns, rounded; 0 for no estimate. */
static inline u64 nlat_ewma_ns(u64 ewma)
{
	return (ewma + (1U << (NLAT_EWMA_SHIFT - 1))) >> NLAT_EWMA_SHIFT;
}

/* A clamped sample, bounded by NLAT_OUTLIER_MULT times the estimate. */
static inline u64 nlat_bound_lat(u64 lat_ns, u64 ewma)
{
	u64 max = nlat_ewma_ns(ewma) * NLAT_OUTLIER_MULT;

	return ewma && lat_ns > max ? max : lat_ns;
}

/*
 * w^k in 1/1024 units.  @w: 0 .. NLAT_FP_ONE, @k: any.
 * Square-and-multiply in 1/2^30 units (NLAT_POW_SHIFT: products < 2^61),
 * rounded once at the end: within one unit of the exact power, where
 * 10-bit squaring would be off by 7 units at k ~ 100.  At most 64 rounds;
 * for w <= 1014 (99%) the power reaches 0 in fewer than 13.
 */
#define NLAT_POW_SHIFT		30

static inline u32 nlat_w_pow(u32 w, u64 k)
{
	u64 half = 1ULL << (NLAT_POW_SHIFT - 1);
	u64 r = 1ULL << NLAT_POW_SHIFT;
	u64 x = (u64)w << (NLAT_POW_SHIFT - NLAT_FP_SHIFT);

	while (k && x) {
		if (k & 1)
			r = (r * x + half) >> NLAT_POW_SHIFT;
		x = (x * x + half) >> NLAT_POW_SHIFT;
		k >>= 1;
	}
	if (k)
		return 0;
	return (r + (half >> NLAT_FP_SHIFT)) >> (NLAT_POW_SHIFT - NLAT_FP_SHIFT);
}

/*
 * Fold a mean into an estimate.
 * @ewma:    current estimate (ns << NLAT_EWMA_SHIFT), 0 = none
 * @mean_ns: mean of the new samples, clamped to [1, NLAT_LAT_MAX_NS]
 * @w:       history weight per window, 0 .. NLAT_FP_ONE - 1
 * @age:     windows since the last update; 0 is taken as 1
 * Returns the new estimate, never 0, rounded to nearest.
 */
static inline u64 nlat_ewma_update(u64 ewma, u64 mean_ns, u32 w, u64 age)
{
	u64 mean = nlat_clamp_lat(mean_ns) << NLAT_EWMA_SHIFT;
	u64 wk;

	if (!ewma)
		return mean;
	wk = nlat_w_pow(w, age ? age : 1);
	return (ewma * wk + mean * (NLAT_FP_ONE - wk) + NLAT_FP_ONE / 2) >>
		NLAT_FP_SHIFT;
}

/*
 * The mean number of requests in flight over the @dt_ns since the last
 * fold, by Little's law the latencies completed in it (@sum_ns) over its
 * length, folded into @nbar (1/NLAT_NBAR_ONE units) with the history
 * weight of the windows it spans (@w per window of @window_ns).  It is the
 * load the queue's estimates were measured at.
 */
static inline u32 nlat_nbar_fold(u32 nbar, u64 sum_ns, u64 dt_ns, u32 w,
				 u64 window_ns)
{
	u64 unit = dt_ns >> NLAT_NBAR_SHIFT, age = 1, n, wk;

	n = div64_u64(sum_ns, unit ? unit : 1);
	if (n > NLAT_NBAR_MAX)
		n = NLAT_NBAR_MAX;
	if (dt_ns > window_ns)
		age = div64_u64(dt_ns, window_ns);
	wk = nlat_w_pow(w, age);
	return ((u64)nbar * wk + n * (NLAT_FP_ONE - wk) + NLAT_FP_ONE / 2) >>
		NLAT_FP_SHIFT;
}

/*
 * Whole windows from @then to @now; 0 when the clock went backwards
 * (a coarse clock read on another CPU may lag the one that stored @then).
 */
static inline u64 nlat_windows(u64 now, u64 then, u64 window_ns)
{
	if ((s64)(now - then) <= 0)
		return 0;
	return div64_u64(now - then, window_ns);
}

/* No estimate, or no update for stale_windows windows. */
static inline bool nlat_stale(u64 ewma, u64 upd_ns, u64 now,
			      const struct nlat_params *p)
{
	if (!ewma)
		return true;
	if ((s64)(now - upd_ns) <= 0)
		return false;
	return now - upd_ns >= (u64)p->stale_windows * p->window_ns;
}

/*
 * @since: the queue's last completion or, if later, the start of its busy
 * period (0: none).  A queue that has kept requests waiting for a whole
 * window without answering says more than its estimate does: it reads as
 * slow as it has kept us waiting.  Shorter gaps are how completions come
 * (batched, or a vCPU not running) and change nothing.
 */
static inline u64 nlat_waited_lat(u64 lat_ns, u32 inflight, u64 since,
				  u64 now, const struct nlat_params *p)
{
	if (!lat_ns || !inflight || (s64)(now - since) <= 0 ||
	    now - since < p->window_ns)
		return lat_ns;
	return now - since > lat_ns ? now - since : lat_ns;
}

/*
 * A group's last completion (done_ns) is only compared with thresholds of
 * a window or more (nlat_waited_lat(), nlat_stalled_for(),
 * nlat_unproven_for()): a completion moves it only once it is a
 * 1/2^NLAT_DONE_SHIFT window old, so that most completions only read it.
 * It then lags the last completion by less than that, and whoever finds
 * a quiet spell (which lasts at least a window) still moves it.
 */
#define NLAT_DONE_SHIFT		4

static inline bool nlat_done_moves(u64 done, u64 now, u64 window_ns)
{
	return (s64)(now - done) >= (s64)(window_ns >> NLAT_DONE_SHIFT);
}

/*
 * Requests started and no answer for a whole window (@since as above):
 * the queue owes an answer already, so a probe would learn nothing sooner
 * and, if the path died, be one more I/O parked on it.
 */
static inline bool nlat_waiting(u32 inflight, u64 since, u64 now,
				const struct nlat_params *p)
{
	return inflight && (s64)(now - since) > 0 &&
	       now - since >= p->window_ns;
}

/*
 * How long a group may leave us without an answer before that means more
 * than slowness: stale_windows windows, or NLAT_QUIET_MULT times its own
 * latency @lat_ns (0: none known) if longer.  A path that answers in
 * 300 ms is not dead for being silent 200 ms.
 */
static inline u64 nlat_quiet_ns(u64 lat_ns, const struct nlat_params *p)
{
	u64 base = (u64)p->stale_windows * p->window_ns;

	if (lat_ns > NLAT_LAT_MAX_NS)
		lat_ns = NLAT_LAT_MAX_NS;
	return lat_ns * NLAT_QUIET_MULT > base ? lat_ns * NLAT_QUIET_MULT :
						 base;
}

/*
 * A queue is stalled when it has requests in flight and answered nothing
 * for @quiet_ns (nlat_quiet_ns(); @since as above): a path that silently
 * stopped answering.  It gets no more I/O while another path answers, and
 * no probe.
 */
static inline bool nlat_stalled_for(u32 inflight, u64 since, u64 now,
				    u64 quiet_ns)
{
	if (!inflight)
		return false;
	if ((s64)(now - since) <= 0)
		return false;
	return now - since >= quiet_ns;
}

/* nlat_stalled_for() a group of unknown latency */
static inline bool nlat_stalled(u32 inflight, u64 since, u64 now,
				const struct nlat_params *p)
{
	return nlat_stalled_for(inflight, since, now, nlat_quiet_ns(0, p));
}

/*
 * Quiet: no completion for @quiet_ns (@done: the last one, 0 if none
 * ever).  A quiet queue that is given I/O is unproven until it answers:
 * it may have died while idle, which nothing else can tell yet.  @busy:
 * requests in flight, or made within the last window (a plugged batch is
 * routed before any of it starts).
 */
static inline bool nlat_unproven_for(bool busy, u64 done, u64 now,
				     u64 quiet_ns)
{
	if (!busy)
		return false;
	if (!done)
		return true;
	if ((s64)(now - done) <= 0)
		return false;
	return now - done >= quiet_ns;
}

/*
 * Late: given more requests since its last answer than a path that
 * answers takes.  @unanswered: requests started since then; @nbar: its
 * mean in flight (1/NLAT_NBAR_ONE); @recent: it answered lately
 * (nlat_recent()).  One that answers lately may take twice its mean load
 * (its in flight swings about the mean: a batch of answers is refilled
 * as one burst) plus one per answer, so its in flight can grow, and
 * beyond that is NLAT_LATE_BURST: a burst it has not answered yet.  One
 * silent longer may take one request, then is NLAT_LATE_SILENT until it
 * answers.  A path that died under load answers nothing, while its
 * estimate and in-flight cost may still read cheaper than a live path's
 * for a window (nlat_waited_lat() needs one): silent, it loses even to a
 * live path in a burst.
 */
static inline u8 nlat_late(u32 unanswered, u32 nbar, bool recent)
{
	u32 allow;

	if (!recent)
		return unanswered > 0 ? NLAT_LATE_SILENT : 0;
	allow = nbar >> (NLAT_NBAR_SHIFT - 1);	/* 2 x nbar, in requests */
	if (allow < 1)
		allow = 1;
	return unanswered > allow ? NLAT_LATE_BURST : 0;
}

/*
 * Answered lately (@done: the last completion, 0 if none ever; @now: the
 * coarse clock, which may read before it), as finely as the clocks tell:
 * done_ns lags the last completion by less than a 1/2^NLAT_DONE_SHIFT
 * window, the coarse clock the fine one by less than a tick (@tick_ns).
 */
static inline bool nlat_recent(u64 done, u64 now, u64 window_ns, u64 tick_ns)
{
	return done && (s64)(now - done) <
		       (s64)((window_ns >> NLAT_DONE_SHIFT) + 2 * tick_ns);
}

/* nlat_view.silent_ms: ms since @done (0: never), capped */
static inline u16 nlat_silent_ms(u64 done, u64 now)
{
	u64 ms;

	if (!done)
		return NLAT_SILENT_MAX_MS;
	if ((s64)(now - done) <= 0)
		return 0;
	ms = (now - done) / 1000000;
	return ms < NLAT_SILENT_MAX_MS ? ms : NLAT_SILENT_MAX_MS;
}

/* nlat_unproven_for() a group of unknown latency */
static inline bool nlat_unproven(bool busy, u64 done, u64 now,
				 const struct nlat_params *p)
{
	return nlat_unproven_for(busy, done, now, nlat_quiet_ns(0, p));
}

/*
 * Is a probe to be granted?  @probe_ns is the clock of the last probe
 * granted for this cell, 0 if none; @backoff the cell's est.backoff.  A
 * cell without an estimate is probed once per window.  One with an
 * estimate once it has not been updated for stale_windows << @backoff
 * windows, and then once: another probe only after as long again, as one
 * that ended in error yields no sample (a probe's sample is folded up to
 * a window after it ends).  The caller publishes @now as the new probe_ns
 * (the kernel with a cmpxchg, so that one of several concurrent readers
 * wins).
 */
static inline bool nlat_probe_due(u64 ewma, u64 upd_ns, u32 backoff,
				  u64 probe_ns, u64 now,
				  const struct nlat_params *p)
{
	u64 lim;

	if (!ewma)
		return !probe_ns || (s64)(now - probe_ns) >= (s64)p->window_ns;
	if (backoff > NLAT_PROBE_BACKOFF_MAX)
		backoff = NLAT_PROBE_BACKOFF_MAX;
	lim = ((u64)p->stale_windows << backoff) * p->window_ns;
	if ((s64)(now - upd_ns) < (s64)lim)
		return false;
	/* none granted since the update */
	if (!probe_ns || (s64)(probe_ns - upd_ns) <= 0)
		return true;
	return (s64)(now - probe_ns) >= (s64)lim;
}

/*
 * The back-off after a fold of @mean_ns into a cell that had estimate
 * @ewma: one step more when a stale cell's fresh samples confirm it, none
 * when they do not or the cell was in use.
 */
static inline u32 nlat_next_backoff(u32 backoff, u64 ewma, u64 mean_ns,
				    bool stale)
{
	u64 old = nlat_ewma_ns(ewma), diff;

	if (!ewma || !stale)
		return 0;
	diff = mean_ns > old ? mean_ns - old : old - mean_ns;
	if (diff * 100 > old * NLAT_PROBE_SAME_PCT)
		return 0;
	return backoff < NLAT_PROBE_BACKOFF_MAX ? backoff + 1 :
		NLAT_PROBE_BACKOFF_MAX;
}

/*
 * One fold of a cell: add the @nr samples summing to @sum_ns gathered
 * since the last fold, and update the estimate if there are enough of
 * them (see the top of this file).  Returns true if the estimate changed.
 */
static inline bool nlat_fold(struct nlat_est *e, u64 sum_ns, u64 nr, u64 now,
			     const struct nlat_params *p)
{
	bool stale = nlat_stale(e->ewma, e->upd_ns, now, p);
	u64 age = 1, mean;

	e->acc_sum += sum_ns;
	e->acc_nr += nr;
	if (!e->acc_nr)
		return false;
	if (e->acc_nr < p->min_samples && !stale)
		return false;
	if (e->ewma)
		age = nlat_windows(now, e->upd_ns, p->window_ns);
	mean = div64_u64(e->acc_sum, e->acc_nr);
	e->backoff = nlat_next_backoff(e->backoff, e->ewma, mean, stale);
	e->ewma = nlat_ewma_update(e->ewma, mean, p->hist_w, age);
	e->upd_ns = now;
	e->samples += e->acc_nr;
	e->acc_sum = 0;
	e->acc_nr = 0;
	return true;
}

/*
 * Requests made on a queue with an I/O scheduler and not started yet:
 * those get their driver tag, and so their count, only at dispatch, while
 * a plugged batch (one io_submit(), one io_uring submission) is routed
 * bio by bio before any of it is dispatched.  Kept as
 * (tick << NLAT_QUEUED_BITS) | count and read for the current tick only: a request made and never started (an empty flush
 * the flush machinery ends at once, one freed on error) is forgotten
 * within a tick, and a start that was never counted (a requeued request,
 * a flush sequence's own) does not drive it below 0.
 */
#define NLAT_QUEUED_BITS	16
#define NLAT_QUEUED_MASK	((1ULL << NLAT_QUEUED_BITS) - 1)

/* The count of @v if it is of @tick, else 0. */
static inline u32 nlat_queued_nr(u64 v, u64 tick)
{
	if ((v & ~NLAT_QUEUED_MASK) != tick << NLAT_QUEUED_BITS)
		return 0;
	return v & NLAT_QUEUED_MASK;
}

static inline u64 nlat_queued_inc(u64 v, u64 tick)
{
	u32 nr = nlat_queued_nr(v, tick);

	if (!nr)
		return tick << NLAT_QUEUED_BITS | 1;
	return nr == NLAT_QUEUED_MASK ? v : v + 1;
}

/* Ticks since a request was last made (mod 2^48); ~0 if never. */
static inline u64 nlat_queued_age(u64 v, u64 tick)
{
	if (!v)
		return ~0ULL;
	return (tick - (v >> NLAT_QUEUED_BITS)) & (~0ULL >> NLAT_QUEUED_BITS);
}

/* Returns @v itself when there is nothing to take back. */
static inline u64 nlat_queued_dec(u64 v, u64 tick)
{
	return nlat_queued_nr(v, tick) ? v - 1 : v;
}

#endif /* _NLAT_MATH_H */
