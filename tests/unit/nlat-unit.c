// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of src/nodelat/nlat-math.h (the tracker's math), of
 * src/nvme/nvme-latency-cost.h (the iopolicy's path comparison) and of
 * src/nvme/nvme-latency-retry.h (the bound on timed retries).  All are
 * the headers the kernel modules compile; shim/ stands in for
 * <linux/types.h> and <linux/math64.h> (<linux/errno.h> is the system's).
 *
 * Each test reports through CHECK(); a test passes when none of its checks
 * failed.  The two sim_* tests drive the math with a small closed-loop model
 * of two paths and the selection rule of nvme-core's "latency" iopolicy
 * (probe first, else the best path by nvme_lat_cmp()) to check the default
 * knobs against the lab targets.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "nlat-math.h"
#include "blk-nodelat.h"
#include "shim-atomic.h"
#include "nlat-acc.h"
#include "nlat-group.h"
#include "nvme-latency-cost.h"
#include "nvme-latency-retry.h"

#define US	1000ULL
#define MS	1000000ULL
#define SEC	1000000000ULL

static int nr_bad;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			nr_bad++;					\
			fprintf(stderr, "  %s:%d: %s: " fmt "\n",	\
				__func__, __LINE__, #cond, ##__VA_ARGS__); \
		}							\
	} while (0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ULL(x)		((unsigned long long)(x))

static struct nlat_params defaults(void)
{
	struct nlat_params p = {
		.window_ns	= NLAT_WINDOW_USEC_DEF * US,
		.hist_w		= nlat_pct_to_w(NLAT_HISTORY_PCT_DEF),
		.min_samples	= NLAT_MIN_SAMPLES_DEF,
		.stale_windows	= NLAT_STALE_WINDOWS_DEF,
	};
	return p;
}

/* xorshift64*: deterministic, so a failure reproduces. */
static u64 rng = 88172645463325252ULL;

static u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static u64 rnd_range(u64 lo, u64 hi)
{
	return lo + rnd() % (hi - lo + 1);
}

/* An empty cell takes its first sample as is, whatever min_samples says. */
static void test_first_sample(void)
{
	struct nlat_params p = defaults();
	struct nlat_est e = { 0 };

	CHECK(nlat_ewma_ns(nlat_ewma_update(0, 12345, p.hist_w, 1)) == 12345,
	      "first mean not taken as is");
	CHECK(nlat_ewma_update(0, 0, p.hist_w, 1) != 0,
	      "a 0 ns sample must not read as 'no estimate'");
	CHECK(nlat_ewma_ns(nlat_ewma_update(0, 0, p.hist_w, 1)) == 1, "");
	CHECK(nlat_fold(&e, 250 * US, 1, 7 * MS, &p), "empty cell not folded");
	CHECK(nlat_ewma_ns(e.ewma) == 250 * US, "ewma %llu", ULL(e.ewma));
	CHECK(e.samples == 1 && e.upd_ns == 7 * MS && !e.acc_nr && !e.acc_sum,
	      "samples %llu upd %llu acc %llu",
	      ULL(e.samples), ULL(e.upd_ns), ULL(e.acc_nr));
	CHECK(!nlat_fold(&e, 0, 0, 60 * MS, &p) && e.upd_ns == 7 * MS,
	      "a fold without samples changed the cell");
}

/* Step response follows est_k = T - (T - S) * w^k to 1 ns, then sits on T. */
static void test_ewma_convergence(void)
{
	u32 w = nlat_pct_to_w(75);
	u64 est = nlat_ewma_update(0, 100 * US, w, 1);
	double ref = 100e3, err, max_err = 0;
	int k;

	for (k = 1; k <= 80; k++) {
		est = nlat_ewma_update(est, 10 * MS, w, 1);
		ref = ref * w / 1024.0 + 10e6 * (1 - w / 1024.0);
		err = fabs((double)nlat_ewma_ns(est) - ref);
		if (err > max_err)
			max_err = err;
		if (k == 8)
			CHECK(nlat_ewma_ns(est) > 10 * MS - 0.11 * 9.9e6,
			      "8 windows at 3/4 should close 90%%: %llu",
			      ULL(nlat_ewma_ns(est)));
	}
	CHECK(max_err <= 1.0, "step response off by %.2f ns", max_err);
	CHECK(nlat_ewma_ns(est) == 10 * MS, "up: settled at %llu",
	      ULL(nlat_ewma_ns(est)));
	for (k = 0; k < 80; k++)
		est = nlat_ewma_update(est, 100 * US, w, 1);
	CHECK(nlat_ewma_ns(est) == 100 * US, "down: settled at %llu",
	      ULL(nlat_ewma_ns(est)));
}

/* One update is exact to half a fixed-point unit (1/512 ns). */
static void test_ewma_precision(void)
{
	u64 est = nlat_ewma_update(0, 1 * MS, 0, 1);
	double max_err = 0, exact, err;
	int i;

	for (i = 0; i < 200000; i++) {
		u32 w = rnd_range(0, NLAT_FP_ONE - 10);
		u64 age = rnd_range(1, 6);
		u64 mean = rnd_range(1, 100 * MS);
		double wk = nlat_w_pow(w, age) / 1024.0;

		exact = est / 256.0 * wk + mean * (1 - wk);
		est = nlat_ewma_update(est, mean, w, age);
		err = fabs(est / 256.0 - exact);
		if (err > max_err)
			max_err = err;
	}
	CHECK(max_err <= 1.0 / 512 + 1e-9, "max error %.6f ns", max_err);
}

/* History weight 0 is the plain window mean; 99% still moves every window. */
static void test_decay_extremes(void)
{
	u32 wmax = nlat_pct_to_w(NLAT_HISTORY_PCT_MAX);
	u64 est = 0, prev, target = 2 * MS;
	int k, windows = 0;

	CHECK(nlat_pct_to_w(0) == 0 && nlat_pct_to_w(75) == 768 &&
	      nlat_pct_to_w(50) == 512 && wmax == 1014 &&
	      nlat_pct_to_w(100) == NLAT_FP_ONE, "pct to weight");
	for (k = 0; k < 100; k++) {
		u64 mean = rnd_range(1, 50 * MS);

		est = nlat_ewma_update(est, mean, 0, 1);
		CHECK(nlat_ewma_ns(est) == mean, "w=0: %llu != %llu",
		      ULL(nlat_ewma_ns(est)), ULL(mean));
	}
	est = nlat_ewma_update(0, 1 * MS, wmax, 1);
	while (nlat_ewma_ns(est) != target && windows < 100000) {
		u64 gap = target - nlat_ewma_ns(est), step;

		prev = est;
		est = nlat_ewma_update(est, target, wmax, 1);
		step = nlat_ewma_ns(est) - nlat_ewma_ns(prev);
		windows++;
		if (gap > 100000 && (step * 1000 < gap * 9 || step * 1000 > gap * 11))
			CHECK(0, "w=99%%: step %llu of gap %llu", ULL(step),
			      ULL(gap));
		if (est <= prev)
			break;
	}
	CHECK(nlat_ewma_ns(est) == target, "w=99%%: stuck at %llu",
	      ULL(nlat_ewma_ns(est)));
	CHECK(windows > 500 && windows < 3000, "w=99%%: %d windows", windows);
}

/* w^k against pow(), including the ends of both ranges. */
static void test_weight_power(void)
{
	double max_err = 0, exact, err;
	u32 w;
	u64 k;

	for (w = 0; w <= NLAT_FP_ONE; w += 7) {
		for (k = 0; k <= 200; k++) {
			exact = pow(w / 1024.0, (double)k) * 1024;
			err = fabs(exact - nlat_w_pow(w, k));
			if (err > max_err)
				max_err = err;
		}
	}
	CHECK(max_err <= 0.5 + 1e-6, "w^k off by %.3f/1024", max_err);
	CHECK(nlat_w_pow(777, 0) == NLAT_FP_ONE, "w^0");
	CHECK(nlat_w_pow(NLAT_FP_ONE, ~0ULL) == NLAT_FP_ONE, "1^k");
	CHECK(nlat_w_pow(1014, ~0ULL) == 0, "history of a huge age");
	CHECK(nlat_w_pow(0, 1) == 0 && nlat_w_pow(0, 0) == NLAT_FP_ONE, "0^k");
}

/* A value that went unsampled keeps only w^age of its weight. */
static void test_age_forgets(void)
{
	struct nlat_params p = defaults();
	static const struct { u64 age; u64 lo, hi; } c[] = {
		{ 1,   7524 * US, 7526 * US },	/* 10 ms * 3/4 + 0.1 ms / 4 */
		{ 5,   2440 * US, 2460 * US },	/* 243/1024 of 10 ms + ... */
		{ 100, 100 * US,  101 * US },	/* history forgotten */
	};
	unsigned int i;

	p.hist_w = 768;		/* the expected values are for 3/4 */
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct nlat_est e = { 0 };
		u64 t0 = 3 * SEC;

		nlat_fold(&e, 10 * MS, 1, t0, &p);
		CHECK(nlat_fold(&e, p.min_samples * 100 * US, p.min_samples,
				t0 + c[i].age * p.window_ns + p.window_ns / 3,
				&p), "age %llu not folded", ULL(c[i].age));
		CHECK(nlat_ewma_ns(e.ewma) >= c[i].lo &&
		      nlat_ewma_ns(e.ewma) <= c[i].hi, "age %llu: %llu",
		      ULL(c[i].age), ULL(nlat_ewma_ns(e.ewma)));
	}
	CHECK(nlat_windows(5 * SEC, 5 * SEC + 1, p.window_ns) == 0,
	      "clock behind the last update");
	CHECK(nlat_windows(5 * SEC + 149 * MS, 5 * SEC, p.window_ns) == 2, "");
}

static void test_staleness(void)
{
	struct nlat_params p = defaults();
	u64 lim = p.stale_windows * p.window_ns, t = 10 * SEC;

	CHECK(nlat_stale(0, t, t, &p), "no estimate is stale");
	CHECK(!nlat_stale(256, t, t, &p), "just updated");
	CHECK(!nlat_stale(256, t, t + lim - 1, &p), "one ns before the limit");
	CHECK(nlat_stale(256, t, t + lim, &p), "at the limit");
	CHECK(!nlat_stale(256, t, t - 1, &p), "clock behind the update");
	p.stale_windows = NLAT_STALE_WINDOWS_MAX;
	p.window_ns = NLAT_WINDOW_USEC_MAX * US;
	CHECK(!nlat_stale(256, t, t + 999 * SEC, &p) &&
	      nlat_stale(256, t, t + 1000 * SEC, &p), "largest knobs");
}

/* Below min_samples a fresh cell carries samples over, a stale one not. */
static void test_min_samples(void)
{
	struct nlat_params p = defaults();
	struct nlat_est e = { 0 };
	u64 t = 20 * SEC, w = p.window_ns;

	p.hist_w = 768;
	p.min_samples = 4;
	nlat_fold(&e, 1 * MS, 1, t, &p);
	CHECK(!nlat_fold(&e, 3 * 200 * US, 3, t + w, &p), "3 < 4 folded");
	CHECK(e.acc_nr == 3 && e.acc_sum == 600 * US && e.upd_ns == t,
	      "carry lost: %llu/%llu", ULL(e.acc_nr), ULL(e.acc_sum));
	CHECK(nlat_fold(&e, 400 * US, 1, t + 2 * w, &p), "4 not folded");
	/* mean 250 us over 2 windows: 1 ms * 0.5625 + 250 us * 0.4375 */
	CHECK(nlat_ewma_ns(e.ewma) == 671875, "two-window fold %llu",
	      ULL(nlat_ewma_ns(e.ewma)));
	CHECK(e.samples == 5 && !e.acc_nr, "samples %llu", ULL(e.samples));
	CHECK(nlat_fold(&e, 300 * US, 1, t + 2 * w + p.stale_windows * w, &p),
	      "a sample of a stale cell must be folded");
}

/* Reads every 37 us for 10 s of a stale cell: one probe per window. */
static void test_probe_bounding(void)
{
	struct nlat_params p = defaults();
	u64 t, start = 100 * SEC, end = start + 10 * SEC, probe_ns = 0;
	u64 last = 0, ewma = 500 * US << NLAT_EWMA_SHIFT, lim;
	u64 upd = start - 10 * SEC, min_gap = ~0ULL, grants = 0;

	/* stale, probes yield no sample: one per stale interval */
	lim = p.stale_windows * p.window_ns;
	for (t = start; t < end; t += 37 * US) {
		if (!nlat_probe_due(ewma, upd, 0, probe_ns, t, &p))
			continue;
		probe_ns = t;
		if (last && t - last < min_gap)
			min_gap = t - last;
		last = t;
		grants++;
	}
	CHECK(grants >= 10 * SEC / lim && grants <= 10 * SEC / lim + 1,
	      "%llu probes in 10 s", ULL(grants));
	CHECK(min_gap >= lim, "probes %llu ns apart", ULL(min_gap));

	/* fresh: no probe until stale_windows windows have passed */
	upd = end;
	grants = 0;
	for (t = end; t < end + 5 * SEC; t += 37 * US) {
		if (nlat_probe_due(ewma, upd, 0, probe_ns, t, &p)) {
			CHECK(t - upd >= lim, "probe %llu ns after an update",
			      ULL(t - upd));
			probe_ns = t;
			grants++;
		}
	}
	CHECK(grants >= 24 && grants <= 25, "%llu probes once stale",
	      ULL(grants));
	/* the first probe after an update, whatever the last one's age */
	CHECK(nlat_probe_due(ewma, end, 0, end - 1, end + lim, &p) &&
	      !nlat_probe_due(ewma, end, 0, end + 1, end + lim, &p),
	      "first probe after the update");
	CHECK(!nlat_probe_due(0, 0, 0, end, end + p.window_ns - 1, &p) &&
	      nlat_probe_due(0, 0, 0, end, end + p.window_ns, &p) &&
	      nlat_probe_due(0, 0, 0, 0, 1, &p), "empty cell");
}

/*
 * A probe that confirms the estimate doubles the interval up to
 * stale_windows << NLAT_PROBE_BACKOFF_MAX; one that does not, or a fold
 * of a cell in use, resets it.
 */
static void test_probe_backoff(void)
{
	struct nlat_params p = defaults();
	struct nlat_est e = { 0 };
	u64 t = 10 * SEC, w = p.window_ns, gap;
	unsigned int i;

	nlat_fold(&e, 20 * MS, 1, t, &p);
	for (i = 0; i <= NLAT_PROBE_BACKOFF_MAX + 1; i++) {
		u32 want = i < NLAT_PROBE_BACKOFF_MAX ? i + 1 :
			   NLAT_PROBE_BACKOFF_MAX;

		gap = ((u64)p.stale_windows << e.backoff) * w;
		CHECK(!nlat_probe_due(e.ewma, e.upd_ns, e.backoff, 0,
				      t + gap - 1, &p) &&
		      nlat_probe_due(e.ewma, e.upd_ns, e.backoff, 0, t + gap,
				     &p), "step %u: interval %llu", i, ULL(gap));
		t += gap + w;
		nlat_fold(&e, 21 * MS, 1, t, &p);	/* +5%: confirmed */
		CHECK(e.backoff == want, "step %u: backoff %u", i, e.backoff);
	}
	CHECK(gap == ((u64)p.stale_windows << NLAT_PROBE_BACKOFF_MAX) * w,
	      "longest interval %llu", ULL(gap));
	t += gap + w;
	nlat_fold(&e, 2 * MS, 1, t, &p);		/* the path changed */
	CHECK(!e.backoff, "backoff %u after a change", e.backoff);
	CHECK(nlat_ewma_ns(e.ewma) < 5 * MS, "%llu ns: most of 21 ms is gone",
	      ULL(nlat_ewma_ns(e.ewma)));
	e.backoff = 2;
	nlat_fold(&e, 4 * 2 * MS, 4, t + w, &p);	/* in use */
	CHECK(!e.backoff, "backoff %u in use", e.backoff);

	/* the bound on outliers */
	CHECK(nlat_bound_lat(17 * SEC, 1 * MS << NLAT_EWMA_SHIFT) ==
	      NLAT_OUTLIER_MULT * MS &&
	      nlat_bound_lat(7 * MS, 1 * MS << NLAT_EWMA_SHIFT) == 7 * MS &&
	      nlat_bound_lat(17 * SEC, 0) == 17 * SEC, "outlier bound");
}

/* Reads and writes never share a cell; sizes split at 4, 16, 64 KiB. */
static void test_io_class(void)
{
	static const struct { unsigned int bytes, cls; } t[] = {
		{ 0, 0 }, { 512, 0 }, { 4096, 0 }, { 4097, 1 }, { 16384, 1 },
		{ 16385, 2 }, { 65536, 2 }, { 65537, 3 }, { 1U << 30, 3 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		CHECK(nlat_io_class(true, t[i].bytes) == t[i].cls &&
		      nlat_io_class(false, t[i].bytes) ==
		      t[i].cls + NLAT_NR_SIZES, "%u bytes", t[i].bytes);
		CHECK(nlat_io_class(false, t[i].bytes) < NLAT_NR_CLASSES,
		      "%u bytes", t[i].bytes);
	}
}

/* Ceiling values: the largest sample, the most samples, the largest age. */
static void test_overflow_ceiling(void)
{
	struct nlat_params p = defaults();
	u64 top = NLAT_LAT_MAX_NS << NLAT_EWMA_SHIFT, est;
	struct nlat_est e = { 0 };
	u64 nr = (1ULL << 30) - 1;
	u32 w;

	for (w = 0; w < NLAT_FP_ONE; w += 13) {
		est = nlat_ewma_update(top, ~0ULL, w, 1);
		CHECK(est == top, "w %u: %llu at the ceiling", w, ULL(est));
		est = nlat_ewma_update(top, 1, w, 1);
		CHECK(est <= top && est >= 256, "w %u: %llu", w, ULL(est));
		est = nlat_ewma_update(256, NLAT_LAT_MAX_NS, w, ~0ULL);
		CHECK(est == top, "w %u huge age: %llu", w, ULL(est));
	}
	CHECK(nlat_clamp_lat(~0ULL) == NLAT_LAT_MAX_NS, "clamp");
	CHECK(nlat_fold(&e, nr * NLAT_LAT_MAX_NS, nr, 1 * SEC, &p), "");
	CHECK(e.ewma == top && e.samples == nr, "2^30-1 max samples: %llu",
	      ULL(e.ewma));
	CHECK(nlat_ewma_ns(top) == NLAT_LAT_MAX_NS, "");
}

/* nvme_lat_cmp(): the contract stated in nvme-latency-cost.h. */
static int cmp_nbar(u64 la, u32 ia, u32 na, u64 lb, u32 ib, u32 nb)
{
	struct nlat_view a = { .lat_ns = la, .inflight = ia, .nbar = na },
			 b = { .lat_ns = lb, .inflight = ib, .nbar = nb };
	int r = nvme_lat_cmp(&a, &b), r2 = nvme_lat_cmp(&b, &a);

	CHECK((r < 0 && r2 > 0) || (r > 0 && r2 < 0) || (r == 0 && r2 == 0),
	      "not antisymmetric: %d %d", r, r2);
	return r;
}

/* Paths measured idle (nbar 0). */
static int cmp(u64 la, u32 ia, u64 lb, u32 ib)
{
	return cmp_nbar(la, ia, 0, lb, ib, 0);
}

static void test_cmp_rule(void)
{
	/* an estimate beats none, whatever the queues */
	CHECK(cmp(5 * MS, 100, 0, 0) < 0, "");
	/* no estimates: fewer in flight (queue-depth), then equal */
	CHECK(cmp(0, 3, 0, 4) < 0, "");
	CHECK(cmp(0, 4, 0, 4) == 0, "");
	/* idle paths: lower latency */
	CHECK(cmp(200 * US, 0, 1200 * US, 0) < 0, "");
	/* equal latency: fewer in flight */
	CHECK(cmp(300 * US, 2, 300 * US, 5) < 0, "");
	CHECK(cmp(300 * US, 5, 300 * US, 5) == 0, "");
	/* a queue costs 1/NVME_LAT_QUEUE_SHARE of a latency per request */
	CHECK(cmp(1 * MS, 31, 5 * MS, 0) < 0, "5x slower idle loses at 31");
	CHECK(cmp(1 * MS, 32, 5 * MS, 0) > 0, "wins from 32 (equal cost: inflight)");
	CHECK(cmp(1 * MS, 33, 5 * MS, 0) > 0, "5x slower idle wins at 33");
	/* a path 20 ms slower never wins against a QD 32 fast path */
	CHECK(cmp(300 * US, 32, 20300 * US, 0) < 0, "");

	/*
	 * nbar: the load a path was measured at is charged in full between
	 * paths of different latency: a 0.5 ms path keeps all of depth 32
	 * against an idle 1 ms one (0.5 * 39 / 39 < 1), where measured idle
	 * the 1 ms path wins from 9 on
	 */
	CHECK(cmp_nbar(500 * US, 31, 31 * NLAT_NBAR_ONE, 1 * MS, 0, 0) < 0,
	      "operating point");
	CHECK(cmp(500 * US, 9, 1 * MS, 0) > 0, "measured idle");
	/*
	 * graded paths of pure delay: the faster keeps the whole depth
	 * against one 1.5x or 1.25x slower (by half, 2 * 24 / 16 = 3 ms: a
	 * tie at 16, lost to the idle path), and at depth 32 (2 * 39 / 24)
	 */
	CHECK(cmp_nbar(2 * MS, 16, 16 * NLAT_NBAR_ONE, 3 * MS, 0, 0) < 0,
	      "1.5x slower, depth 16");
	CHECK(cmp_nbar(2 * MS, 16, 16 * NLAT_NBAR_ONE, 2500 * US, 0, 0) < 0,
	      "1.25x slower, depth 16");
	CHECK(cmp_nbar(2 * MS, 31, 32 * NLAT_NBAR_ONE, 3 * MS, 0, 0) < 0,
	      "1.5x slower, depth 32");
	/* beyond the load it was measured at, the faster path is charged */
	CHECK(cmp_nbar(2 * MS, 40, 16 * NLAT_NBAR_ONE, 3 * MS, 0, 0) > 0,
	      "a burst beyond the measured load");
	/* nbar by half at one latency, in full from 1/4 apart, linear between */
	CHECK(nvme_lat_charge(16 * NLAT_NBAR_ONE, 0, 200 * US) ==
	      8 * NLAT_NBAR_ONE, "one latency");
	CHECK(nvme_lat_charge(16 * NLAT_NBAR_ONE, 100 * US, 200 * US) ==
	      12 * NLAT_NBAR_ONE, "halfway");
	CHECK(nvme_lat_charge(16 * NLAT_NBAR_ONE, 200 * US, 200 * US) ==
	      16 * NLAT_NBAR_ONE, "1/4 apart");
	CHECK(nvme_lat_charge(~0U, 1, 2) == NLAT_NBAR_MAX / 2 +
	      NLAT_NBAR_MAX / 4 && nvme_lat_charge(~0U, 0, 0) == NLAT_NBAR_MAX,
	      "capped");
	/* equal paths: the one with more than its share loses, even split */
	CHECK(cmp_nbar(1 * MS, 9, 8 * NLAT_NBAR_ONE, 1 * MS, 7,
		       8 * NLAT_NBAR_ONE) > 0, "back to an even split");
	CHECK(cmp_nbar(1 * MS, 15, 15 * NLAT_NBAR_ONE, 1 * MS, 1,
		       1 * NLAT_NBAR_ONE) > 0, "no lock-in on the loaded path");
	CHECK(cmp_nbar(1 * MS, 4, 4 * NLAT_NBAR_ONE, 1 * MS, 4,
		       4 * NLAT_NBAR_ONE) == 0, "equal");
	/* a burst beyond the measured load spreads */
	CHECK(cmp_nbar(1 * MS, 16, 4 * NLAT_NBAR_ONE, 1 * MS, 4,
		       4 * NLAT_NBAR_ONE) > 0, "a burst on one path");
}

/*
 * The requests @b (nbar 4) takes before @a (@la, 16 in flight, nbar 16)
 * is the better path again.
 */
static unsigned int cmp_takes(u64 la, u64 lb)
{
	unsigned int n;

	for (n = 0; n < 64; n++)
		if (cmp_nbar(la, 16, 16 * NLAT_NBAR_ONE, lb, n,
			     4 * NLAT_NBAR_ONE) < 0)
			break;
	return n;
}

/*
 * A latency that moves by 1/1000 moves at most one request: charged by a
 * step, the loaded path 1/8 slower cost (8 + 16) / (8 + 8) of its latency
 * and 1 ns more slower only its latency, a burst of three to the other.
 */
static void test_cmp_ramp(void)
{
	unsigned int prev = cmp_takes(1 * MS, 1 * MS), n;
	u64 la;

	for (la = 1 * MS + 1 * US; la <= 2 * MS; la += 1 * US) {
		n = cmp_takes(la, 1 * MS);
		CHECK((n > prev ? n - prev : prev - n) <= 1,
		      "%u then %u requests at %llu ns", prev, n, ULL(la));
		prev = n;
	}
}

/* nbar: Little's law over each fold, an EWMA across folds. */
static void test_nbar_fold(void)
{
	struct nlat_params p = defaults();
	u32 nbar = 0;
	unsigned int i;

	/* 4 in flight at 1 ms: 200 completions of 1 ms per 50 ms window */
	for (i = 0; i < 40; i++)
		nbar = nlat_nbar_fold(nbar, 200 * MS, p.window_ns, p.hist_w,
				      p.window_ns);
	CHECK(nbar >= 4 * NLAT_NBAR_ONE - 2 && nbar <= 4 * NLAT_NBAR_ONE,
	      "%u", nbar);
	/* one window: the history weight; 40 windows idle: forgotten */
	CHECK(nlat_nbar_fold(nbar, 0, p.window_ns, p.hist_w, p.window_ns) ==
	      (nbar * p.hist_w + NLAT_FP_ONE / 2) >> NLAT_FP_SHIFT, "");
	CHECK(nlat_nbar_fold(nbar, 0, 40 * p.window_ns, p.hist_w,
			     p.window_ns) == 0, "");
	/* ceiling: every sample the largest, in the shortest window */
	CHECK(nlat_nbar_fold(NLAT_NBAR_MAX, ~0ULL, 1000 * US, p.hist_w,
			     1000 * US) == NLAT_NBAR_MAX, "");
	CHECK(nlat_nbar_fold(0, 1, 0, p.hist_w, p.window_ns) <= NLAT_NBAR_MAX,
	      "0 ns fold");
}

/* A stalled path loses to any path that answers, whatever its numbers. */
static void test_cmp_stalled(void)
{
	struct nlat_view dead = { .lat_ns = 100 * US, .inflight = 1,
				  .stalled = true },
			 slow = { .lat_ns = 50 * MS, .inflight = 64 },
			 none = { 0 },
			 dead2 = { .lat_ns = 100 * US, .inflight = 2,
				   .stalled = true };
	struct nlat_params p = defaults();

	CHECK(nvme_lat_cmp(&slow, &dead) < 0 && nvme_lat_cmp(&dead, &slow) > 0, "");
	CHECK(nvme_lat_cmp(&none, &dead) < 0, "");
	/* all stalled: the usual order among them */
	CHECK(nvme_lat_cmp(&dead, &dead2) < 0, "");
	/* an overdue request raises the estimate to the time waited */
	CHECK(nlat_waited_lat(1 * MS, 1, 10 * SEC - 60 * MS, 10 * SEC, &p) == 60 * MS, "");
	CHECK(nlat_waited_lat(1 * MS, 1, 10 * SEC - 5 * MS, 10 * SEC, &p) == 1 * MS,
	      "a gap shorter than a window");
	CHECK(nlat_waited_lat(1 * MS, 0, 0, 10 * SEC, &p) == 1 * MS, "idle");
	CHECK(nlat_waited_lat(0, 3, 0, 10 * SEC, &p) == 0, "no estimate stays none");
	/* stalled: in flight and no completion for stale_windows windows */
	CHECK(!nlat_stalled(0, 0, 10 * SEC, &p), "idle is not stalled");
	CHECK(nlat_stalled(1, 0, 10 * SEC, &p), "never completed");
	CHECK(!nlat_stalled(1, 10 * SEC - 4 * p.window_ns + 1, 10 * SEC, &p), "");
	CHECK(nlat_stalled(1, 10 * SEC - 4 * p.window_ns, 10 * SEC, &p), "");
	CHECK(!nlat_stalled(1, 11 * SEC, 10 * SEC, &p), "clock behind");
}

/*
 * Late (nlat_late()): a path that answered lately takes twice its mean
 * load plus one per answer, one silent longer takes one; a late path
 * loses to any that is not, whatever its cost, a silent one to one in a
 * burst, and either ranks above an unproven one.
 */
static void test_late(void)
{
	struct nlat_view dead = { .lat_ns = 400 * US, .inflight = 2,
				  .nbar = 0, .late = NLAT_LATE_SILENT },
			 live = { .lat_ns = 1300 * US, .inflight = 14,
				  .nbar = 14 * NLAT_NBAR_ONE },
			 fresh = { .lat_ns = 0, .inflight = 1,
				   .unproven = true };
	u64 now = 100 * SEC, w = 50 * MS, tick = 4 * MS;

	CHECK(!nlat_late(0, 0, false), "nothing started since");
	CHECK(nlat_late(1, 0, false) == NLAT_LATE_SILENT, "silent: one, then wait");
	CHECK(!nlat_late(1, 0, true), "answering: one per answer");
	CHECK(nlat_late(2, 0, true) == NLAT_LATE_BURST, "");
	CHECK(nlat_late(2, NLAT_NBAR_ONE - 1, true) == NLAT_LATE_BURST,
	      "under one request");
	CHECK(!nlat_late(16, 8 * NLAT_NBAR_ONE, true), "twice its mean load");
	CHECK(nlat_late(17, 8 * NLAT_NBAR_ONE, true) == NLAT_LATE_BURST, "");
	CHECK(!nlat_late(3, 3 * NLAT_NBAR_ONE / 2, true), "");
	CHECK(nlat_late(4, 3 * NLAT_NBAR_ONE / 2, true) == NLAT_LATE_BURST, "");
	CHECK(nlat_late(2, 8 * NLAT_NBAR_ONE, false) == NLAT_LATE_SILENT,
	      "load of no answer");
	/* lately: within a done_ns step and two ticks; the clock may lag */
	CHECK(!nlat_recent(0, now, w, tick), "never answered");
	CHECK(nlat_recent(now + tick, now, w, tick), "coarse clock behind");
	CHECK(nlat_recent(now - (w >> NLAT_DONE_SHIFT) - 2 * tick + 1, now,
			  w, tick), "");
	CHECK(!nlat_recent(now - (w >> NLAT_DONE_SHIFT) - 2 * tick, now,
			   w, tick), "");
	/* issue 37's black hole: 3x cheaper and idle, but late */
	CHECK(nvme_lat_cmp(&live, &dead) < 0 && nvme_lat_cmp(&dead, &live) > 0,
	      "a late path loses whatever its cost");
	dead.late = 0;
	CHECK(nvme_lat_cmp(&dead, &live) < 0, "the cost alone sends it there");
	dead.late = NLAT_LATE_SILENT;
	CHECK(nvme_lat_cmp(&dead, &fresh) < 0, "late before unproven");
	/* a live path in a burst (issue 37's lab: 2 parked) */
	live.late = NLAT_LATE_BURST;
	CHECK(nvme_lat_cmp(&live, &dead) < 0, "silent after a burst");
	dead.late = NLAT_LATE_BURST;
	CHECK(nvme_lat_cmp(&dead, &live) < 0, "both in a burst: by cost");
	/* a starved host: the live path silent too, but not as long */
	dead.late = live.late = NLAT_LATE_SILENT;
	dead.silent_ms = nlat_silent_ms(now - 145 * MS, now);
	live.silent_ms = nlat_silent_ms(now - 79 * MS, now);
	CHECK(dead.silent_ms == 145 && live.silent_ms == 79, "");
	CHECK(nvme_lat_cmp(&live, &dead) < 0 && nvme_lat_cmp(&dead, &live) > 0,
	      "both silent: the one silent longer loses");
	live.silent_ms = dead.silent_ms;
	CHECK(nvme_lat_cmp(&dead, &live) < 0, "as long: by cost");
	CHECK(nlat_silent_ms(0, now) == NLAT_SILENT_MAX_MS, "never answered");
	CHECK(nlat_silent_ms(now + tick, now) == 0, "coarse clock behind");
	CHECK(nlat_silent_ms(now - 100 * SEC, now) == NLAT_SILENT_MAX_MS, "capped");
}

/*
 * nlat-acc.h under a real race: two threads add samples of exactly
 * TORN_LAT ns to one slot, as completions on two CPUs do for one
 * submitter; another takes the slot as the fold does.  A take that sees a
 * count without its sum or the reverse is torn; a sample taken twice or
 * never is lost.
 */
#define TORN_LAT	1000
#define TORN_SAMPLES	1000000ULL

static u64 torn_slot;
static volatile int torn_done;

static void *torn_writer(void *arg)
{
	u64 i;

	(void)arg;
	for (i = 0; i < TORN_SAMPLES; i++) {
		volatile unsigned int spin;

		__atomic_add_fetch(&torn_slot, nlat_acc_sample(TORN_LAT),
				   __ATOMIC_SEQ_CST);
		for (spin = 0; spin < (i & 511); spin++)	/* uneven gaps */
			;
	}
	__atomic_add_fetch(&torn_done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_acc_torn(void)
{
	u64 sum, nr, all_sum = 0, all_nr = 0, folds = 0, torn = 0;
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		CHECK(!pthread_create(&t[i], NULL, torn_writer, NULL), "thread");
	for (;;) {
		int done = torn_done;

		nlat_acc_split(__atomic_exchange_n(&torn_slot, 0,
						   __ATOMIC_SEQ_CST), &sum, &nr);
		if (nr) {
			folds++;
			/* 1000 ns is 62.5 units: rounded to 63, 1008 ns */
			if (sum != nr * 1008)
				torn++;
		}
		all_sum += sum;
		all_nr += nr;
		if (done == 2)
			break;
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("  %llu takes with new samples, %llu torn\n", ULL(folds),
	       ULL(torn));
	CHECK(all_nr == 2 * TORN_SAMPLES && all_sum == all_nr * 1008,
	      "lost adds: %llu", ULL(all_nr));
	CHECK(!torn, "%llu torn takes out of %llu", ULL(torn), ULL(folds));
}

/*
 * nlat-group.h under a real race: two threads started together advance
 * one clock to ever later ticks, as completions on two CPUs store done_ns,
 * and fold one mean into one EWMA, as two queues of a group fold.  A
 * thread that reads the clock behind its own tick saw it move back; an
 * EWMA that differs from as many updates in a row lost one.
 */
#define GROUP_ROUNDS	200
#define GROUP_UPDATES	5000

static u64 group_tick, group_clock, group_ewma, group_back;
static pthread_barrier_t group_start;

static void *group_writer(void *arg)
{
	u64 i, now;

	(void)arg;
	pthread_barrier_wait(&group_start);
	for (i = 0; i < GROUP_UPDATES; i++) {
		volatile unsigned int spin;

		now = __atomic_add_fetch(&group_tick, 1, __ATOMIC_SEQ_CST);
		for (spin = 0; spin < (i & 63); spin++)	/* clock read to store */
			;
		nlat_clock_advance(&group_clock, now);
		if ((s64)(READ_ONCE(group_clock) - now) < 0)
			__atomic_add_fetch(&group_back, 1, __ATOMIC_SEQ_CST);
		nlat_ewma_update_shared(&group_ewma, 1000000000, NLAT_FP_ONE - 1, 1);
	}
	return NULL;
}

static void test_group_race(void)
{
	u64 start = 1000ULL << NLAT_EWMA_SHIFT, want = start, lost = 0, behind = 0;
	pthread_t t[2];
	int r, i;

	for (i = 0; i < 2 * GROUP_UPDATES; i++)
		want = nlat_ewma_update(want, 1000000000, NLAT_FP_ONE - 1, 1);
	CHECK(want != nlat_ewma_update(want, 1000000000, NLAT_FP_ONE - 1, 1),
	      "the EWMA converged: a lost update would not show");
	for (r = 0; r < GROUP_ROUNDS; r++) {
		group_ewma = start;
		pthread_barrier_init(&group_start, NULL, 2);
		for (i = 0; i < 2; i++)
			CHECK(!pthread_create(&t[i], NULL, group_writer, NULL),
			      "thread");
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&group_start);
		lost += group_ewma != want;
		behind += group_clock != group_tick;
	}
	CHECK(!behind, "the clock ended behind the last tick in %llu of %d rounds",
	      ULL(behind), GROUP_ROUNDS);
	CHECK(!group_back, "the clock moved back %llu times", ULL(group_back));
	CHECK(!lost, "EWMA updates lost in %llu of %d rounds", ULL(lost),
	      GROUP_ROUNDS);
}

/* The packed slot: rounding, the largest sample, when to fold early. */
static void test_acc_pack(void)
{
	u64 v = 0, sum, nr, i;

	nlat_acc_split(nlat_acc_sample(7), &sum, &nr);
	CHECK(nr == 1 && sum == 0, "7 ns: %llu", ULL(sum));
	nlat_acc_split(nlat_acc_sample(8), &sum, &nr);
	CHECK(nr == 1 && sum == 16, "8 ns: %llu", ULL(sum));
	/* rounding to nearest: the mean of many samples stays exact */
	for (i = 0; i < 1000; i++)
		v += nlat_acc_sample(20000 + i);
	nlat_acc_split(v, &sum, &nr);
	CHECK(nr == 1000 && sum / 1000 >= 20491 && sum / 1000 <= 20507,
	      "mean %llu", ULL(sum / 1000));
	CHECK(!nlat_acc_full(v), "");
	/* 2048 of the largest samples after the early fold is asked */
	for (v = 0, i = 0; !nlat_acc_full(v); i++)
		v += nlat_acc_sample(NLAT_LAT_MAX_NS);
	CHECK(i == 2048, "full after %llu", ULL(i));
	for (i = 0; i < 2047; i++)
		v += nlat_acc_sample(NLAT_LAT_MAX_NS);
	nlat_acc_split(v, &sum, &nr);
	CHECK(nr == 4095 && sum == 4095 * NLAT_LAT_MAX_NS, "sum wrapped: %llu",
	      ULL(nr));
	/* the count half asks at 2^21 samples, with as many to spare */
	v = (1ULL << 21) * NLAT_ACC_ONE - NLAT_ACC_ONE;
	CHECK(!nlat_acc_full(v), "");
	CHECK(nlat_acc_full(v + nlat_acc_sample(1)), "");
	nlat_acc_split(v + (1ULL << 21) * NLAT_ACC_ONE, &sum, &nr);
	CHECK(nr == (1ULL << 22) - 1, "count %llu", ULL(nr));
}

/*
 * Thinning (nlat_rqos_done()): past NLAT_ACC_THIN_NR samples a slot takes
 * one completion in 2^NLAT_ACC_THIN_SHIFT by its start clock, weighted as
 * many.  Over folds of 1250 completions (50 ms at 25k IOPS) whose latency
 * climbs through the fold, with start clocks in steps of 2 ns (the
 * instruction-counted guest's) or random, the slot's count and mean stay
 * those of every completion: each fold within 30 % and 10 %, all within
 * 2 % and 1 %, and one thinned completion in 2^NLAT_ACC_THIN_SHIFT is
 * taken, within 8 %.
 */
static void test_acc_thin(void)
{
	unsigned int mode, f, i, kept, thinned;
	u64 start, lat, v, sum, nr, all_sum, all_nr, t_sum, t_nr;
	bool bad = false;

	for (mode = 0; mode < 2; mode++) {
		start = 123456789;
		all_sum = all_nr = t_sum = t_nr = 0;
		kept = thinned = 0;
		for (f = 0; f < 200; f++) {
			u64 f_sum = 0;

			v = 0;
			for (i = 0; i < 1250; i++) {
				start += mode ? rnd_range(1, 200000) :
						2 * rnd_range(1000, 30000);
				lat = 20 * US + i * 40 + rnd_range(0, 5 * US);
				f_sum += lat;
				if (nlat_acc_thin(v)) {
					thinned++;
					if (!nlat_acc_thin_keep(start))
						continue;
					kept++;
					v += nlat_acc_sample(lat) <<
					     NLAT_ACC_THIN_SHIFT;
				} else {
					v += nlat_acc_sample(lat);
				}
			}
			nlat_acc_split(v, &sum, &nr);
			if (!bad && (nr < 875 || nr > 1625 ||
				     llabs((long long)(sum / nr) -
					   (long long)(f_sum / 1250)) * 10 >
				     (long long)(f_sum / 1250))) {
				bad = true;
				CHECK(0, "mode %u fold %u: %llu, mean %llu of %llu",
				      mode, f, ULL(nr), ULL(sum / nr),
				      ULL(f_sum / 1250));
			}
			t_sum += sum;
			t_nr += nr;
			all_sum += f_sum;
			all_nr += 1250;
		}
		CHECK(llabs((long long)t_nr - (long long)all_nr) * 50 <=
		      (long long)all_nr, "mode %u: count %llu of %llu", mode,
		      ULL(t_nr), ULL(all_nr));
		CHECK(llabs((long long)(t_sum / t_nr) -
			    (long long)(all_sum / all_nr)) * 100 <=
		      (long long)(all_sum / all_nr),
		      "mode %u: mean %llu of %llu", mode, ULL(t_sum / t_nr),
		      ULL(all_sum / all_nr));
		CHECK(((u64)kept << NLAT_ACC_THIN_SHIFT) * 100 >= thinned * 92ULL &&
		      ((u64)kept << NLAT_ACC_THIN_SHIFT) * 100 <= thinned * 108ULL,
		      "mode %u: %u of %u taken", mode, kept, thinned);
	}
}

/*
 * The group's in-flight pair: any order of counts and uncounts, the low
 * half dipping below 0 on the way, reads back both totals; the units are
 * each class's size in 4 KiB.
 */
static void test_infl_pack(void)
{
	static const unsigned int units[NLAT_NR_SIZES] = { 1, 4, 16, 32 };
	s64 v = 0, nr = 0, u = 0;
	unsigned int i, k;

	for (k = 0; k < NLAT_NR_SIZES; k++)
		CHECK(nlat_size_units(k) == units[k], "class %u: %u", k,
		      nlat_size_units(k));
	CHECK(nlat_size_units(nlat_size_class(131072)) == 32 &&
	      nlat_size_units(nlat_size_class(4096)) == 1, "");
	for (i = 0; i < 200000; i++) {
		unsigned int uk = nlat_size_units(rnd() % NLAT_NR_SIZES);
		/* an uncount may run before its count is seen: dip below 0 */
		bool add = (rnd() % 100) < (nr < -3 ? 100 : nr > 5000 ? 0 : 52);

		v += add ? nlat_infl_delta(uk) : -nlat_infl_delta(uk);
		nr += add ? 1 : -1;
		u += add ? uk : -(s64)uk;
		if (nlat_infl_nr(v) != nr || nlat_infl_units(v) != u) {
			CHECK(0, "step %u: %d/%lld against %lld/%lld", i,
			      nlat_infl_nr(v), (long long)nlat_infl_units(v),
			      (long long)nr, (long long)u);
			break;
		}
	}
}

static void test_cmp_ceiling(void)
{
	struct nlat_view huge = { .lat_ns = ~0ULL, .inflight = ~0U },
			 cap = { .lat_ns = NVME_LAT_MAX_NS,
				 .inflight = NVME_LAT_MAX_INFLIGHT },
			 low = { .lat_ns = ~0ULL, .inflight = ~0U,
				 .nbar = ~0U },
			 low_cap = { .lat_ns = NVME_LAT_MAX_NS,
				     .inflight = NVME_LAT_MAX_INFLIGHT,
				     .nbar = NLAT_NBAR_MAX };

	unsigned int near;

	/* capped, no wrap: the largest cost is the cap's, and finite */
	CHECK(nvme_lat_cost(&huge, 0) == nvme_lat_cost(&cap, 0), "");
	CHECK(nvme_lat_cost(&cap, 0) == NVME_LAT_MAX_NS / NVME_LAT_QUEUE_SHARE *
	      (NVME_LAT_QUEUE_SHARE + NVME_LAT_MAX_INFLIGHT), "wrapped");
	/* (S + max) / (S + max * f) of the latency cap, to the ns */
	for (near = 0; near < 2; near++) {
		u32 f = nvme_lat_charge(low.nbar, near ? 0 : 1, 1);

		CHECK(nvme_lat_cost(&low, f) == nvme_lat_cost(&low_cap, f) &&
		      fabs((double)nvme_lat_cost(&low, f) - (double)NVME_LAT_MAX_NS *
			   (NVME_LAT_QUEUE_SHARE + NVME_LAT_MAX_INFLIGHT) /
			   (NVME_LAT_QUEUE_SHARE + NLAT_NBAR_MAX / (near ? 2.0 : 1.0) /
			    NLAT_NBAR_ONE)) < 2,
		      "nbar at its cap: %llu", ULL(nvme_lat_cost(&low, f)));
	}
	CHECK(cmp(~0ULL, ~0U, NVME_LAT_MAX_NS - 1, 0) > 0, "");
	CHECK(cmp(1, ~0U, 2, 0) > 0, "");
}

/* The queued count: one tick's requests made and not started. */
static void test_queued(void)
{
	u64 v = 0, w;
	unsigned int i;

	v = nlat_queued_inc(v, 100);
	v = nlat_queued_inc(v, 100);
	CHECK(nlat_queued_nr(v, 100) == 2, "two made: %u", nlat_queued_nr(v, 100));
	CHECK(nlat_queued_nr(v, 101) == 0, "read a tick later");
	v = nlat_queued_dec(v, 100);
	CHECK(nlat_queued_nr(v, 100) == 1, "one started");
	v = nlat_queued_dec(nlat_queued_dec(v, 100), 100);
	CHECK(nlat_queued_nr(v, 100) == 0, "below 0");
	CHECK(nlat_queued_dec(v, 100) == v, "a start never counted writes");
	/* a leak (made, never started) lasts until the tick ends */
	v = nlat_queued_inc(nlat_queued_inc(v, 100), 100);
	w = nlat_queued_inc(v, 101);
	CHECK(nlat_queued_nr(w, 101) == 1, "new tick restarts: %u",
	      nlat_queued_nr(w, 101));
	CHECK(nlat_queued_dec(v, 101) == v, "start in the next tick");
	for (i = 0, v = 0; i < NLAT_QUEUED_MASK + 10; i++)
		v = nlat_queued_inc(v, 7);
	CHECK(nlat_queued_nr(v, 7) == NLAT_QUEUED_MASK, "saturates");
	/* jiffies' top bits fall off the shift on both sides alike */
	v = nlat_queued_inc(0, ~0ULL);
	CHECK(nlat_queued_nr(v, ~0ULL) == 1 && !nlat_queued_nr(v, 0), "");
}

/*
 * A plugged batch of 16 (one io_submit()) on two paths whose estimates are
 * 5% apart, as nvme/020 saw them: routed bio by bio, each request made
 * (and counted by track) before the next is routed, none started before
 * the plug is flushed.  Counting only started requests sends the whole
 * batch to the cheaper path; counting made ones splits it about evenly.
 */
static void test_plug_batch(void)
{
	u64 lat[2] = { 1258 * US, 1199 * US };
	unsigned int n[2] = { 0, 0 }, old[2] = { 0, 0 }, i, k;

	for (i = 0; i < 16; i++) {
		struct nlat_view c[2];

		for (k = 0; k < 2; k++)
			c[k] = (struct nlat_view){ .lat_ns = lat[k],
						   .inflight = n[k] };
		n[nvme_lat_cmp(&c[0], &c[1]) <= 0 ? 0 : 1]++;
		for (k = 0; k < 2; k++)
			c[k] = (struct nlat_view){ .lat_ns = lat[k] };
		old[nvme_lat_cmp(&c[0], &c[1]) <= 0 ? 0 : 1]++;
	}
	CHECK(n[1] >= 6 && n[1] <= 10, "batch split %u/%u", n[0], n[1]);
	CHECK(old[1] == 16, "started only: %u/%u", old[0], old[1]);
}

/*
 * The first burst after idle (nvme/020): both paths quiet for 10 s, one
 * plugged batch of 16.  Each path may take one I/O, then every candidate
 * is unproven and the rest is held; once path 0 answers, the held I/O all
 * goes there.  Without the rule (the bound of the old nvme/020) the batch
 * split about evenly, half of it parked behind a dead path 1.
 */
static void test_unproven(void)
{
	u64 lat[2] = { 1258 * US, 1199 * US },
	    done[2] = { 1 * SEC, 1 * SEC }, now = 11 * SEC;
	unsigned int n[2] = { 0, 0 }, held = 0, i, k;
	struct nlat_params p = defaults();
	struct nlat_view c[2];

	CHECK(!nlat_unproven(false, 0, now, &p), "idle");
	CHECK(nlat_unproven(true, 0, now, &p), "never answered");
	CHECK(!nlat_unproven(true, now - 4 * p.window_ns + 1, now, &p), "");
	CHECK(nlat_unproven(true, now - 4 * p.window_ns, now, &p), "");
	CHECK(!nlat_unproven(true, now + 1, now, &p), "clock behind");

	/* requests made count from track on: the batch's own are busy */
	for (i = 0; i < 16; i++) {
		for (k = 0; k < 2; k++)
			c[k] = (struct nlat_view){ .lat_ns = lat[k],
				.inflight = n[k],
				.unproven = nlat_unproven(n[k], done[k], now,
							  &p) };
		k = nvme_lat_cmp(&c[0], &c[1]) <= 0 ? 0 : 1;
		if (c[k].unproven) {
			held++;
			continue;
		}
		n[k]++;
	}
	CHECK(n[0] == 1 && n[1] == 1 && held == 14, "%u/%u, %u held",
	      n[0], n[1], held);
	/* path 0 answers a tick later; path 1 never does */
	done[0] = now + 1 * MS;
	now += 2 * MS;
	for (i = 0; i < 14; i++) {
		for (k = 0; k < 2; k++)
			c[k] = (struct nlat_view){ .lat_ns = lat[k],
				.unproven = nlat_unproven(true, done[k], now, &p) };
		CHECK(nvme_lat_cmp(&c[0], &c[1]) < 0, "held I/O goes to path 0");
	}
	/* a stalled path loses to an unproven one */
	c[0] = (struct nlat_view){ .lat_ns = 1 * MS, .unproven = true };
	c[1] = (struct nlat_view){ .lat_ns = 1 * US, .stalled = true,
				   .unproven = true };
	CHECK(nvme_lat_cmp(&c[0], &c[1]) < 0, "");
}

/*
 * done_ns moves only once it is a step (a 1/2^NLAT_DONE_SHIFT window) old:
 * under steady completions it lags by less than a step, is written once a
 * step, and reads neither waiting nor unproven; the completion that ends
 * a quiet spell always moves it, and sees the spell (the waker's call).
 */
static void test_done_steps(void)
{
	struct nlat_params p = defaults();
	u64 step = p.window_ns >> NLAT_DONE_SHIFT, done = 0, t, n = 0, moves = 0;

	CHECK(nlat_done_moves(0, 1 * SEC, p.window_ns), "never answered");
	CHECK(!nlat_done_moves(1 * SEC - step + 1, 1 * SEC, p.window_ns), "");
	CHECK(nlat_done_moves(1 * SEC - step, 1 * SEC, p.window_ns), "");
	CHECK(!nlat_done_moves(1 * SEC + 1, 1 * SEC, p.window_ns), "clock behind");
	for (t = 1 * SEC; t < 2 * SEC; t += 100 * US, n++) {
		if (nlat_done_moves(done, t, p.window_ns)) {
			done = t;
			moves++;
		}
		CHECK(t - done < step, "lags %llu ns", (unsigned long long)(t - done));
		CHECK(nlat_waited_lat(1 * MS, 1, done, t + 99 * US, &p) == 1 * MS &&
		      !nlat_unproven(true, done, t + 99 * US, &p) &&
		      !nlat_stalled(1, done, t + 99 * US, &p), "");
	}
	CHECK(moves <= n / (step / (100 * US)) + 1, "%llu moves of %llu",
	      (unsigned long long)moves, (unsigned long long)n);
	t = done + nlat_quiet_ns(0, &p);
	CHECK(nlat_done_moves(done, t, p.window_ns) &&
	      nlat_unproven(true, done, t, &p), "a quiet spell ends");
}

/*
 * Slow is not dead: a group's quiet time scales with its own latency
 * (NLAT_QUIET_MULT of it, at least stale_windows windows).  Two live paths
 * answering in 300 ms, 5 I/Os a second each: a 250 ms gap between answers
 * is how such a path answers, not a silence; with the fixed 200 ms every
 * such gap made a busy path unproven, then stalled, and held I/O for a
 * round trip.  A 1 ms path keeps the 200 ms.
 */
static void test_quiet_relative(void)
{
	struct nlat_params p = defaults();
	u64 base = (u64)p.stale_windows * p.window_ns, now = 100 * SEC;

	CHECK(nlat_quiet_ns(0, &p) == base, "unknown latency: the base");
	CHECK(nlat_quiet_ns(1 * MS, &p) == base, "fast path: the base");
	CHECK(nlat_quiet_ns(300 * MS, &p) == 1200 * MS, "%llu",
	      (unsigned long long)nlat_quiet_ns(300 * MS, &p));
	CHECK(nlat_quiet_ns(~0ULL, &p) == NLAT_LAT_MAX_NS * NLAT_QUIET_MULT,
	      "capped");
	/* a 300 ms path, 250 ms since its last answer, a request out */
	CHECK(nlat_unproven(true, now - 250 * MS, now, &p), "the fixed rule");
	CHECK(!nlat_unproven_for(true, now - 250 * MS, now,
				 nlat_quiet_ns(300 * MS, &p)), "slow, alive");
	CHECK(!nlat_stalled_for(3, now - 250 * MS, now,
				nlat_quiet_ns(300 * MS, &p)), "slow, alive");
	CHECK(nlat_stalled_for(3, now - 1200 * MS, now,
			       nlat_quiet_ns(300 * MS, &p)), "silent 4x");
	CHECK(nlat_unproven_for(true, now - 1200 * MS, now,
				nlat_quiet_ns(300 * MS, &p)), "quiet 4x");
	CHECK(nlat_stalled(1, now - base, now, &p) ==
	      nlat_stalled_for(1, now - base, now, nlat_quiet_ns(0, &p)), "");
}

/*
 * A history must not set the quiet time of the present.  A group learned
 * 2 s (links rate-limited), then got only probes 8 windows apart for 3 s,
 * each answering in 90 us.  Its quiet time must be back at the base
 * (200 ms): with each probe's mean weighted as one window (history 75 %)
 * it stayed over 1 s, and a path that died then took a probe every 0.2
 * to 0.4 s for that long.
 */
static void test_quiet_forgets(void)
{
	struct nlat_params p = defaults();
	u64 base = (u64)p.stale_windows * p.window_ns, now = 100 * SEC;
	u64 ewma = 0, upd = 0, one = 0;
	int i;

	for (i = 0; i < 40; i++, now += p.window_ns) {
		nlat_ewma_update_shared(&ewma, 2 * SEC, p.hist_w,
					nlat_windows(now, upd, p.window_ns));
		nlat_clock_advance(&upd, now);
	}
	one = ewma;
	CHECK(nlat_quiet_ns(nlat_ewma_ns(ewma), &p) > 7 * SEC, "learned");
	for (i = 0; i < 7; i++) {
		now += 8 * p.window_ns;
		nlat_ewma_update_shared(&ewma, 90 * US, p.hist_w,
					nlat_windows(now, upd, p.window_ns));
		nlat_clock_advance(&upd, now);
		nlat_ewma_update_shared(&one, 90 * US, p.hist_w, 1);
	}
	CHECK(nlat_quiet_ns(nlat_ewma_ns(ewma), &p) == base, "quiet %llu ms",
	      ULL(nlat_quiet_ns(nlat_ewma_ns(ewma), &p) / MS));
	/* what one window's weight per fold leaves */
	CHECK(nlat_quiet_ns(nlat_ewma_ns(one), &p) > SEC, "%llu ms",
	      ULL(nlat_quiet_ns(nlat_ewma_ns(one), &p) / MS));
	/* folds a window apart weigh as before */
	ewma = 1000ULL << NLAT_EWMA_SHIFT;
	nlat_ewma_update_shared(&ewma, 2000, p.hist_w, 1);
	CHECK(ewma == nlat_ewma_update(1000ULL << NLAT_EWMA_SHIFT, 2000,
				       p.hist_w, 1), "");
}

/*
 * A queue with requests started and no answer for a window owes one: no
 * probe adds to what a silent death parks.  Shorter gaps are how answers
 * come.
 */
static void test_waiting(void)
{
	struct nlat_params p = defaults();
	u64 now = 100 * SEC;

	CHECK(!nlat_waiting(0, now - SEC, now, &p), "idle");
	CHECK(!nlat_waiting(1, now - p.window_ns + 1, now, &p), "answering");
	CHECK(nlat_waiting(1, now - p.window_ns, now, &p), "a window");
	CHECK(!nlat_waiting(1, now + 1, now, &p), "clock behind");
}

/*
 * Random histories: a group whose latency L (100 us .. 2 s) is learned
 * from fold means of samples within [L/2, 3L/2], as the fold learns
 * lat_ewma, is checked at random moments.  Live (its last answer at most
 * 2L ago, or within the base quiet time) it is never unproven or
 * stalled; silent for max(base, 6L) it always is both, however slow.
 */
static void test_quiet_histories(void)
{
	struct nlat_params p = defaults();
	u64 base = (u64)p.stale_windows * p.window_ns, now = 10 * SEC;
	unsigned int i, k, live_bad = 0, dead_bad = 0;

	for (i = 0; i < 2000; i++) {
		u64 lat = rnd_range(100 * US, 2 * SEC), ewma = 0, q, gap;

		for (k = 0; k < 1 + rnd_range(0, 40); k++)
			ewma = nlat_ewma_update(ewma, rnd_range(lat / 2, lat * 3 / 2),
						p.hist_w, 1);
		q = nlat_quiet_ns(nlat_ewma_ns(ewma), &p);
		now += rnd_range(1 * MS, 10 * SEC);
		gap = rnd_range(0, 2 * lat > base ? 2 * lat : base - 1);
		if (nlat_unproven_for(true, now - gap, now, q) ||
		    nlat_stalled_for(1, now - gap, now, q))
			live_bad++;
		gap = 6 * lat > base ? 6 * lat : base;
		if (!nlat_unproven_for(true, now - gap, now, q) ||
		    !nlat_stalled_for(1, now - gap, now, q))
			dead_bad++;
	}
	CHECK(!live_bad, "%u live histories read unproven or stalled", live_bad);
	CHECK(!dead_bad, "%u silent histories did not", dead_bad);
}

/*
 * Two paths, a closed loop of @qd threads, latencies fixed by the scenario
 * with +-10% noise; a path's "fold work" is queued by its first completion
 * after a fold and runs one window later, as in the module.
 */
#define SIM_PATHS	2
#define SIM_BIN_NS	(100 * MS)
#define SIM_BINS	200

struct sim_path {
	struct nlat_est	est;
	u64		probe_ns;
	u64		sum, nr;	/* the per-CPU counters */
	u64		fold_at;	/* 0: fold not queued */
	u64		done_ns;	/* last completion */
	u64		busy_ns;	/* inflight went 0 -> 1 */
	u64		last_fold;	/* 0: none yet */
	u32		nbar;
	unsigned int	inflight;
};

struct sim {
	struct nlat_params p;
	struct sim_path path[SIM_PATHS];
	u64 issued[SIM_BINS][SIM_PATHS];
	u64 probes[SIM_PATHS];
	u64 base_ns, extra_ns;
	int (*slow)(u64 t);	/* slow path at @t, -1 for none */
	int dead;		/* this path never completes (-1: none) */
	u64 dead_from;		/* ... what is issued to it from then on */
	u64 start;		/* first I/O; estimates kept from before if set */
	bool nowait;		/* the rule before nvme_lat_wait_beside() */
	unsigned int skew;	/* most in flight on one path over the other */
};

static u64 sim_lat(struct sim *s, int path, u64 t)
{
	u64 lat = s->base_ns + (s->slow(t) == path ? s->extra_ns : 0);

	return lat * rnd_range(90, 110) / 100;
}

static u64 sim_since(const struct sim_path *sp)
{
	return sp->done_ns > sp->busy_ns ? sp->done_ns : sp->busy_ns;
}

/* -1: held until a path answers (every candidate is unproven) */
static int sim_choose(struct sim *s, u64 now)
{
	struct nlat_view c, best_c = { 0 };
	int i, best = -1;
	bool fresh = false;

	for (i = 0; i < SIM_PATHS; i++) {
		struct sim_path *sp = &s->path[i];

		if (!nlat_stalled(sp->inflight, sim_since(sp), now, &s->p) &&
		    !nlat_unproven(sp->inflight, sp->done_ns, now, &s->p) &&
		    nlat_probe_due(sp->est.ewma, sp->est.upd_ns,
				   sp->est.backoff, sp->probe_ns, now, &s->p)) {
			sp->probe_ns = now;
			s->probes[i]++;
			return i;
		}
	}
	/* as nvme_latency_pick() in the nvme-core patch */
	for (i = 0; i < SIM_PATHS; i++) {
		c.inflight = s->path[i].inflight;
		c.nbar = s->path[i].nbar;
		c.lat_ns = nlat_waited_lat(nlat_ewma_ns(s->path[i].est.ewma),
					   c.inflight, sim_since(&s->path[i]), now,
					   &s->p);
		c.stalled = nlat_stalled(c.inflight, sim_since(&s->path[i]),
					 now, &s->p);
		c.unproven = nlat_unproven(c.inflight, s->path[i].done_ns, now,
					   &s->p);
		fresh |= nvme_lat_fresh(&c);
		if (best < 0 || nvme_lat_cmp(&c, &best_c) < 0) {
			best = i;
			best_c = c;
		}
	}
	if (!s->nowait && nvme_lat_wait_beside(&best_c, fresh))
		return -1;
	return best_c.unproven ? -1 : best;
}

/*
 * Slot @i goes to a path chosen at @t, or is held (path -1, never done)
 * until a completion lets it be chosen again: the kernel's waker fires on
 * the completions that end a quiet spell, the only ones that change what
 * an unproven path reads.
 */
static void sim_issue(struct sim *s, unsigned int i, int *path_of,
		      u64 *issued_at, u64 *done_at, u64 t)
{
	int path = sim_choose(s, t);

	path_of[i] = path;
	issued_at[i] = t;
	done_at[i] = ~0ULL;
	if (path < 0)
		return;
	if (!s->path[path].inflight++)
		s->path[path].busy_ns = t;
	if (s->path[path].inflight > s->path[!path].inflight + s->skew)
		s->skew = s->path[path].inflight - s->path[!path].inflight;
	/* a request to the dead path never completes */
	if (path != s->dead || t < s->dead_from)
		done_at[i] = t + sim_lat(s, path, t);
	if (t / SIM_BIN_NS < SIM_BINS)
		s->issued[t / SIM_BIN_NS][path]++;
}

static void sim_run(struct sim *s, unsigned int qd, u64 end)
{
	u64 done_at[64], issued_at[64], t;
	int path_of[64];
	unsigned int i, ev;

	if (!s->start)
		memset(s->path, 0, sizeof(s->path));
	/* the earlier run's requests all completed before it ended */
	for (i = 0; i < SIM_PATHS; i++)
		s->path[i].inflight = 0;
	memset(s->issued, 0, sizeof(s->issued));
	memset(s->probes, 0, sizeof(s->probes));
	for (i = 0; i < qd; i++)
		sim_issue(s, i, path_of, issued_at, done_at,
			  (s->start ?: SEC) + i * US);
	for (;;) {
		/* next event: a completion (ev < qd) or a fold */
		ev = 0;
		t = done_at[0];
		for (i = 1; i < qd; i++)
			if (done_at[i] < t)
				t = done_at[ev = i];
		for (i = 0; i < SIM_PATHS; i++) {
			if (s->path[i].fold_at && s->path[i].fold_at < t) {
				ev = qd + i;
				t = s->path[i].fold_at;
			}
		}
		if (t >= end)
			return;
		if (ev >= qd) {
			struct sim_path *sp = &s->path[ev - qd];

			nlat_fold(&sp->est, sp->sum, sp->nr, t, &s->p);
			sp->nbar = nlat_nbar_fold(sp->nbar, sp->sum,
						  sp->last_fold ? t - sp->last_fold :
								  s->p.window_ns,
						  s->p.hist_w, s->p.window_ns);
			sp->last_fold = t;
			sp->sum = sp->nr = sp->fold_at = 0;
			continue;
		}
		{
			struct sim_path *sp = &s->path[path_of[ev]];

			sp->inflight--;
			sp->done_ns = t;
			sp->sum += nlat_bound_lat(nlat_clamp_lat(t - issued_at[ev]),
						  sp->est.ewma);
			sp->nr++;
			if (!sp->fold_at)
				sp->fold_at = t + s->p.window_ns;
		}
		sim_issue(s, ev, path_of, issued_at, done_at, t);
		for (i = 0; i < qd; i++)
			if (path_of[i] < 0)
				sim_issue(s, i, path_of, issued_at, done_at, t);
	}
}

/* Share of the I/O issued in [t0, t1) that went to @path. */
static double sim_share(struct sim *s, int path, u64 t0, u64 t1)
{
	u64 b, mine = 0, all = 0;

	for (b = t0 / SIM_BIN_NS; b < t1 / SIM_BIN_NS; b++) {
		mine += s->issued[b][path];
		all += s->issued[b][0] + s->issued[b][1];
	}
	return all ? (double)mine / all : 0;
}

/* I/Os issued to @path in [t0, t1). */
static u64 sim_issued(struct sim *s, int path, u64 t0, u64 t1)
{
	u64 b, n = 0;

	for (b = t0 / SIM_BIN_NS; b < t1 / SIM_BIN_NS; b++)
		n += s->issued[b][path];
	return n;
}

/* Seconds from @t0 until every later bin before @end gives @path @goal. */
static double sim_settle_sec(struct sim *s, int path, u64 t0, u64 end,
			     double goal)
{
	u64 t, settled = t0;

	for (t = t0; t + SIM_BIN_NS <= end; t += SIM_BIN_NS)
		if (sim_share(s, path, t, t + SIM_BIN_NS) < goal)
			settled = t + SIM_BIN_NS;
	return (double)(settled - t0) / SEC;
}

static int slow_swap(u64 t)
{
	return t < 5 * SEC ? 1 : 0;
}

/* Paths swap speeds at 5 s: >= 90% of I/O must have moved by 7 s. */
static void test_sim_swap(void)
{
	static const u64 extra[] = { 1 * MS, 20 * MS };
	static const unsigned int qds[] = { 1, 16 };
	struct sim s = { .p = defaults(), .base_ns = 100 * US,
			 .slow = slow_swap, .dead = -1 };
	unsigned int i, j;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			double before, after, moved;

			s.extra_ns = extra[i];
			sim_run(&s, qds[j], 9 * SEC);
			before = sim_share(&s, 0, 4 * SEC, 5 * SEC);
			after = sim_share(&s, 1, 7 * SEC, 9 * SEC);
			moved = sim_settle_sec(&s, 1, 5 * SEC, 9 * SEC, 0.9);
			printf("  swap +%llu ms qd %u: fast share %.3f before, %.3f 2 s after; moved in %.1f s\n",
			       ULL(extra[i] / MS), qds[j], before, after, moved);
			CHECK(moved <= 2.0, "+%llu ms qd %u: moved in %.1f s",
			      ULL(extra[i] / MS), qds[j], moved);
			CHECK(before >= 0.9, "+%llu ms qd %u: %.3f before",
			      ULL(extra[i] / MS), qds[j], before);
			CHECK(after >= 0.9, "+%llu ms qd %u: %.3f after",
			      ULL(extra[i] / MS), qds[j], after);
		}
	}
}

static int slow_restore(u64 t)
{
	return t >= 5 * SEC && t < 10 * SEC ? 0 : -1;
}

/* Path 0 is slowed from 5 s to 10 s: its share is back by 13 s. */
static void test_sim_restore(void)
{
	static const u64 extra[] = { 1 * MS, 20 * MS };
	struct sim s = { .p = defaults(), .base_ns = 200 * US,
			 .slow = slow_restore, .dead = -1 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		double before, during, after, back;

		s.extra_ns = extra[i];
		sim_run(&s, 16, 15 * SEC);
		before = sim_share(&s, 0, 4 * SEC, 5 * SEC);
		during = sim_share(&s, 0, 7 * SEC, 10 * SEC);
		after = sim_share(&s, 0, 13 * SEC, 15 * SEC);
		back = sim_settle_sec(&s, 0, 10 * SEC, 15 * SEC, 0.8 * before);
		printf("  restore +%llu ms qd 16: share %.3f before, %.3f slow, %.3f 3 s after; back in %.1f s; probes %llu/%llu\n",
		       ULL(extra[i] / MS), before, during, after, back,
		       ULL(s.probes[0]), ULL(s.probes[1]));
		CHECK(back <= 3.0, "+%llu ms: back in %.1f s",
		      ULL(extra[i] / MS), back);
		CHECK(before > 0.35 && before < 0.65, "+%llu ms: %.3f before",
		      ULL(extra[i] / MS), before);
		CHECK(during < before / 4, "+%llu ms: %.3f while slow",
		      ULL(extra[i] / MS), during);
		CHECK(after >= 0.8 * before, "+%llu ms: %.3f after",
		      ULL(extra[i] / MS), after);
	}
}

static int slow_none(u64 t)
{
	(void)t;
	return -1;
}

/*
 * Black hole: both paths known (3 s of symmetric I/O), idle until 5 s,
 * path 1 answers nothing from then on.  The burst gives each quiet path
 * one I/O and holds the rest until path 0 answers: one parks.  From then
 * on, path 1 gets no further I/O, probes included.
 */
static void test_sim_blackhole(void)
{
	struct sim s = { .p = defaults(), .base_ns = 200 * US,
			 .slow = slow_none, .dead = -1 };
	u64 late, parked;
	double share;

	sim_run(&s, 16, 3 * SEC);
	s.dead = 1;
	s.start = 5 * SEC;
	sim_run(&s, 16, 13 * SEC);
	parked = sim_issued(&s, 1, 5 * SEC, 13 * SEC);
	late = sim_issued(&s, 1, 5 * SEC + SIM_BIN_NS, 13 * SEC);
	share = sim_share(&s, 0, 6 * SEC, 13 * SEC);
	printf("  black hole qd 16: %llu I/Os parked on the dead path, %llu after the first 100 ms; live path share %.3f\n",
	       ULL(parked), ULL(late), share);
	CHECK(parked == 1, "%llu parked", ULL(parked));
	CHECK(!late, "%llu sent to the dead path after 100 ms", ULL(late));
	CHECK(share == 1.0, "%.3f", share);

	/* dies while busy: what it held, and at most half the QD more */
	memset(&s, 0, sizeof(s));
	s.p = defaults();
	s.base_ns = 200 * US;
	s.slow = slow_none;
	s.dead = 1;
	s.dead_from = 5 * SEC;
	sim_run(&s, 16, 9 * SEC);
	parked = sim_issued(&s, 1, 5 * SEC, 9 * SEC);
	late = sim_issued(&s, 1, 5 * SEC + SIM_BIN_NS, 9 * SEC);
	share = sim_share(&s, 0, 6 * SEC, 9 * SEC);
	printf("  black hole while busy: %llu more I/Os parked, %llu after the first 100 ms; live path share %.3f\n",
	       ULL(parked), ULL(late), share);
	CHECK(parked <= 16 / 2, "%llu parked", ULL(parked));
	CHECK(!late, "%llu sent to the dead path after 100 ms", ULL(late));
	CHECK(share == 1.0, "%.3f", share);
}

/*
 * Start: two equal paths that never answered, a burst of 64.  Each gets
 * one I/O and the rest wait for an answer; the first path to answer may
 * not take them all while the other's answer is due as soon: it takes
 * NVME_LAT_QUEUE_SHARE, the rest wait for the other (nvme_lat_wait_beside()),
 * and the two stay within twice that.
 * Without that, 62 went to the first (the rule before: @nowait).  A path
 * dead from the start still parks one I/O, and the live one takes the
 * rest once it stalls.
 */
static void test_sim_start(void)
{
	struct sim s = { .p = defaults(), .base_ns = 200 * US,
			 .slow = slow_none, .dead = -1 };
	u64 parked;
	double share;
	unsigned int old;

	s.nowait = true;
	sim_run(&s, 64, 2 * SEC);
	old = s.skew;
	memset(&s, 0, sizeof(s));
	s.p = defaults();
	s.base_ns = 200 * US;
	s.slow = slow_none;
	s.dead = -1;
	sim_run(&s, 64, 2 * SEC);
	printf("  start qd 64: most in flight on one path over the other %u (rule before: %u)\n",
	       s.skew, old);
	CHECK(s.skew <= 2 * NVME_LAT_QUEUE_SHARE, "skew %u", s.skew);

	memset(&s, 0, sizeof(s));
	s.p = defaults();
	s.base_ns = 200 * US;
	s.slow = slow_none;
	s.dead = 1;
	sim_run(&s, 64, 3 * SEC);
	parked = sim_issued(&s, 1, 0, 3 * SEC);
	share = sim_share(&s, 0, 2 * SEC, 3 * SEC);
	printf("  start, path 1 dead: %llu I/Os parked on it; live path share %.3f from 2 s\n",
	       ULL(parked), share);
	CHECK(parked == 1, "%llu parked", ULL(parked));
	CHECK(share == 1.0, "%.3f", share);
}

static int slow_always(u64 t)
{
	(void)t;
	return 1;
}

/*
 * The lab's latency-bound case: 4 ms against 44 ms at queue depth 4.
 * Probes of the slow path hold a slot each for 44 ms: they must stay a
 * small share of the I/O, and fewer once they keep confirming the path.
 */
static void test_sim_probe_share(void)
{
	struct sim s = { .p = defaults(), .base_ns = 4 * MS,
			 .extra_ns = 40 * MS, .slow = slow_always, .dead = -1 };
	u64 slow, fast, longest = ((u64)s.p.stale_windows <<
				   NLAT_PROBE_BACKOFF_MAX) * s.p.window_ns;
	double share;

	sim_run(&s, 4, 20 * SEC + SEC);
	slow = sim_issued(&s, 1, 5 * SEC, 20 * SEC);
	fast = sim_issued(&s, 0, 5 * SEC, 20 * SEC);
	share = (double)slow / (slow + fast);
	printf("  latency-bound qd 4: %llu of %llu I/Os to the slow path (%.3f%%) in 15 s\n",
	       ULL(slow), ULL(slow + fast), 100 * share);
	/* one per longest interval (the old rule: two per shortest) */
	CHECK(slow <= 15 * SEC / longest + 2, "%llu probes in 15 s (%.3f%%)",
	      ULL(slow), 100 * share);
	/* at least one per longest interval and fold delay */
	CHECK(slow >= 15 * SEC / (longest + 2 * s.p.window_ns),
	      "%llu probes: the slow path is still probed", ULL(slow));
}

/*
 * nvme_lat_retry_failed(): a path whose timed retries fail only for want
 * of memory (the tracker allocates before it freezes) is never given up
 * on: memory comes back and a later retry tracks it.  Tries that may have
 * frozen a live path give up at the NVME_LAT_RETRY_FREEZES-th, once.
 */
static void test_retry_bound(void)
{
	static const int nofreeze[] = { -ENOMEM, -ENOLINK, -ENOENT };
	static const int froze[] = { -EBUSY, -ENODEV, -EINVAL };
	unsigned int i, k, freezes, gave_up;

	for (i = 0; i < ARRAY_SIZE(nofreeze); i++) {
		freezes = 0;
		gave_up = 0;
		for (k = 0; k < 100; k++)
			gave_up += nvme_lat_retry_failed(&freezes, nofreeze[i]);
		CHECK(!gave_up && !freezes,
		      "error %d: given up %u times, %u freezes counted",
		      nofreeze[i], gave_up, freezes);
	}
	for (i = 0; i < ARRAY_SIZE(froze); i++) {
		freezes = 0;
		for (k = 1; k < NVME_LAT_RETRY_FREEZES; k++)
			CHECK(!nvme_lat_retry_failed(&freezes, froze[i]),
			      "error %d: given up at try %u", froze[i], k);
		/* memory failures between them count for nothing */
		CHECK(!nvme_lat_retry_failed(&freezes, -ENOMEM),
		      "error %d: given up at an ENOMEM", froze[i]);
		CHECK(nvme_lat_retry_failed(&freezes, froze[i]),
		      "error %d: not given up at try %u", froze[i],
		      NVME_LAT_RETRY_FREEZES);
	}
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "first_sample",	test_first_sample },
	{ "ewma_convergence",	test_ewma_convergence },
	{ "ewma_precision",	test_ewma_precision },
	{ "decay_extremes",	test_decay_extremes },
	{ "weight_power",	test_weight_power },
	{ "age_forgets",	test_age_forgets },
	{ "staleness",		test_staleness },
	{ "min_samples",	test_min_samples },
	{ "probe_bounding",	test_probe_bounding },
	{ "probe_backoff",	test_probe_backoff },
	{ "io_class",		test_io_class },
	{ "overflow_ceiling",	test_overflow_ceiling },
	{ "cmp_rule",		test_cmp_rule },
	{ "cmp_ramp",		test_cmp_ramp },
	{ "nbar_fold",		test_nbar_fold },
	{ "cmp_ceiling",	test_cmp_ceiling },
	{ "infl_pack",		test_infl_pack },
	{ "plug_batch",		test_plug_batch },
	{ "unproven",		test_unproven },
	{ "done_steps",		test_done_steps },
	{ "quiet_relative",	test_quiet_relative },
	{ "quiet_histories",	test_quiet_histories },
	{ "quiet_forgets",	test_quiet_forgets },
	{ "waiting",		test_waiting },
	{ "cmp_stalled",	test_cmp_stalled },
	{ "late",		test_late },
	{ "acc_torn",		test_acc_torn },
	{ "acc_pack",		test_acc_pack },
	{ "acc_thin",		test_acc_thin },
	{ "group_race",		test_group_race },
	{ "queued",		test_queued },
	{ "sim_swap",		test_sim_swap },
	{ "sim_restore",	test_sim_restore },
	{ "sim_blackhole",	test_sim_blackhole },
	{ "sim_start",		test_sim_start },
	{ "sim_probe_share",	test_sim_probe_share },
	{ "retry_bound",	test_retry_bound },
};

int main(void)
{
	int passed = 0, failed = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		int before = nr_bad;

		tests[i].fn();
		if (nr_bad == before) {
			passed++;
			printf("ok   %s\n", tests[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", tests[i].name);
		}
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
