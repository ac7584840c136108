// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: the scenario grid.  As the VM bench (tests/bench/guest) does,
 * paths get a base delay (netem delay: no concurrency limit, so throughput
 * = depth / latency) unless a scenario is about a device that saturates
 * (servers) or a link (rate, FIFO as netem rate; *-sh: the rate shared by
 * 4 streams, FIFO each, as TCP connections of two queues both ways over
 * one netem qdisc).  Times are from the
 * start of the run; measurement starts after the warm-up.
 *
 * F_CLAIM: where the published adaptive rule's own result applies (an
 * asymmetric pair, a large and stable latency gap, as its 30 ms
 * experiment): ours must lead it there.  *-lab: the bench's own shapes
 * of goals open on some series, and beside them the same problems at
 * another depth, gap or size (F_OPEN: a goal the simulator's rule does
 * not meet yet, reported, not counted).  F_FIO: the lab's fio run
 * (time-based): also held to MiB/s as fio counts it, the drain after
 * the end included.
 */
#include "sim.h"

#define MBIT(x)		((u64)(x) * 1000000 / 8)
#define DLY(d)		{ .delay_ns = (d) }
#define RATE(d, r)	{ .delay_ns = (d), .rate_Bps = MBIT(r) }
#define SHARED(d, r)	{ .delay_ns = (d), .rate_Bps = MBIT(r), .streams = 4 }
#define DEV(d, s, k)	{ .delay_ns = (d), .svc_ns = (s), .servers = (k) }
#define JOB(q, b)	{ .qd = (q), .bs = (b) }
/* the public iopolicy test: 4 jobs of 1 MiB randrw 50/50 at QD16 */
#define BW4_JOB		{ .qd = 16, .bs = 1 << 20, .write_pct = 50 }
#define BW4_JOBS	{ BW4_JOB, BW4_JOB, BW4_JOB, BW4_JOB }

const struct scen scenarios[] = {
	{ "d20-qd8", "both 0.5 ms, path 2 +20 ms; 4k QD8",
	  2, { DLY(500 * US), DLY(20500 * US) }, 1, 1, { JOB(8, 4096) },
	  0, F_ASYM | F_CLAIM },
	{ "d20-qd32", "both 0.5 ms, path 2 +20 ms; 4k QD32",
	  2, { DLY(500 * US), DLY(20500 * US) }, 1, 1, { JOB(32, 4096) },
	  0, F_ASYM | F_CLAIM },
	{ "d30-qd8", "both 0.5 ms, path 2 +30 ms; 4k QD8",
	  2, { DLY(500 * US), DLY(30500 * US) }, 1, 1, { JOB(8, 4096) },
	  0, F_ASYM | F_CLAIM },
	{ "d30-qd32", "both 0.5 ms, path 2 +30 ms; 4k QD32",
	  2, { DLY(500 * US), DLY(30500 * US) }, 1, 1, { JOB(32, 4096) },
	  0, F_ASYM | F_CLAIM },
	{ "bw-sym", "both 0.5 ms + 400 Mbit/s; 128k QD16",
	  2, { RATE(500 * US, 400), RATE(500 * US, 400) }, 1, 1,
	  { JOB(16, 131072) }, 0, 0 },
	{ "bw-4:1", "both 0.5 ms; 400 vs 100 Mbit/s; 128k QD16",
	  2, { RATE(500 * US, 400), RATE(500 * US, 100) }, 1, 1,
	  { JOB(16, 131072) }, 0, 0 },
	{ "sym-2node", "unshaped: 100 us x 8 servers each; 2 nodes x 4k QD16",
	  2, { DEV(0, 100 * US, 8), DEV(0, 100 * US, 8) }, 1, 2,
	  { { .node = 0, .qd = 16, .bs = 4096 },
	    { .node = 1, .qd = 16, .bs = 4096 } }, 0, 0 },
	{ "graded-4", "4 paths 0.5, 1, 2, 4 ms; 4k QD32",
	  4, { DLY(500 * US), DLY(1 * MS), DLY(2 * MS), DLY(4 * MS) }, 1, 1,
	  { JOB(32, 4096) }, 0, 0 },
	{ "graded-lab", "as the bench's graded4: 4 paths 2, 3, 4, 6 ms; 4k QD16",
	  4, { DLY(2 * MS), DLY(3 * MS), DLY(4 * MS), DLY(6 * MS) }, 1, 1,
	  { JOB(16, 4096) }, 0, 0 },
	{ "graded-q32", "as graded-lab at QD32",
	  4, { DLY(2 * MS), DLY(3 * MS), DLY(4 * MS), DLY(6 * MS) }, 1, 1,
	  { JOB(32, 4096) }, 0, 0 },
	{ "pair-1.25", "2 paths 2 and 2.5 ms; 4k QD16",
	  2, { DLY(2 * MS), DLY(2500 * US) }, 1, 1, { JOB(16, 4096) }, 0, 0 },
	{ "cap-2:1", "0.1 ms + 400 us each, path 1 x 8 servers, path 2 x 4; 4k QD16",
	  2, { DEV(100 * US, 400 * US, 8), DEV(100 * US, 400 * US, 4) }, 1, 1,
	  { JOB(16, 4096) }, 0, 0 },
	{ "ns8-qd1", "8 namespaces x 4k QD1; 0.1 ms + 400 us x 4 servers each",
	  2, { DEV(100 * US, 400 * US, 4), DEV(100 * US, 400 * US, 4) }, 8, 8,
	  { { .ns = 0, .qd = 1, .bs = 4096 }, { .ns = 1, .qd = 1, .bs = 4096 },
	    { .ns = 2, .qd = 1, .bs = 4096 }, { .ns = 3, .qd = 1, .bs = 4096 },
	    { .ns = 4, .qd = 1, .bs = 4096 }, { .ns = 5, .qd = 1, .bs = 4096 },
	    { .ns = 6, .qd = 1, .bs = 4096 }, { .ns = 7, .qd = 1, .bs = 4096 } },
	  0, 0 },
	{ "mixed", "both 0.5 ms + 400 Mbit/s; 4k QD8 + 128k QD8",
	  2, { RATE(500 * US, 400), RATE(500 * US, 400) }, 1, 2,
	  { JOB(8, 4096), JOB(8, 131072) }, 0, 0 },
	{ "mixed-lab", "as the bench's mixed4k+128k: 0.5 ms + 200 vs 2.5 ms + 100 Mbit/s; 4k QD8 + 128k QD8",
	  2, { RATE(500 * US, 200), RATE(2500 * US, 100) }, 1, 2,
	  { JOB(8, 4096), JOB(8, 131072) }, 0, 0 },
	{ "mixed-64k", "as mixed-lab with 64k for 128k",
	  2, { RATE(500 * US, 200), RATE(2500 * US, 100) }, 1, 2,
	  { JOB(8, 4096), JOB(8, 65536) }, 0, 0 },
	{ "randrw", "4k 70/30 QD16; 0.25 ms + 100 us (write 400 us) x 4 servers each",
	  2, { { .delay_ns = 250 * US, .svc_ns = 100 * US, .servers = 4,
		 .write_x100 = 400 },
	       { .delay_ns = 250 * US, .svc_ns = 100 * US, .servers = 4,
		 .write_x100 = 400 } }, 1, 1,
	  { { .qd = 16, .bs = 4096, .write_pct = 30 } }, 0, 0 },
	{ "jitter", "0.1 ms + 400 us x 8 each; path 2 sd 150 us, 1/1000 +20 ms; 4k QD16",
	  2, { DEV(100 * US, 400 * US, 8),
	       { .delay_ns = 100 * US, .svc_ns = 400 * US, .servers = 8,
		 .dist = D_NORMAL, .spread_ns = 150 * US,
		 .outlier_every = 1000, .outlier_ns = 20 * MS } }, 1, 1,
	  { JOB(16, 4096) }, 0, 0 },
	{ "bogus17", "as jitter, fixed; path 2: 1/20000 samples read 17 s; 4k QD16",
	  2, { DEV(100 * US, 400 * US, 8),
	       { .delay_ns = 100 * US, .svc_ns = 400 * US, .servers = 8,
		 .outlier_every = 20000, .outlier_ns = NLAT_LAT_MAX_NS,
		 .outlier_bogus = true } }, 1, 1,
	  { JOB(16, 4096) }, 0, 0 },
	{ "flip", "path 1 0.5/10.5 ms, path 2 10.5/0.5 ms, swapping every 2 s; 4k QD16",
	  2, { { .delay_ns = 500 * US, .sched = S_FLIP, .sched_ns = 2 * SEC,
		 .alt_delay_ns = 10500 * US },
	       { .delay_ns = 10500 * US, .sched = S_FLIP, .sched_ns = 2 * SEC,
		 .alt_delay_ns = 500 * US } }, 1, 1,
	  { JOB(16, 4096) }, 0, F_FLIP },
	{ "step", "both 0.5 ms; path 1 +20 ms from 5 s; 4k QD16",
	  2, { { .delay_ns = 500 * US, .sched = S_STEP, .sched_ns = 5 * SEC,
		 .alt_delay_ns = 20500 * US }, DLY(500 * US) }, 1, 1,
	  { JOB(16, 4096) }, 1, F_STEP },
	{ "restore", "both 0.5 ms; path 1 +2 ms from 3 s to 6 s; 4k QD16",
	  2, { { .delay_ns = 500 * US, .sched = S_PULSE, .sched_ns = 3 * SEC,
		 .sched_end_ns = 6 * SEC, .alt_delay_ns = 2500 * US },
	       DLY(500 * US) }, 1, 1, { JOB(16, 4096) }, 1, F_RESTORE },
	{ "restore-dev", "0.1 ms + 400 us x 8 each; path 1 +2 ms from 3 s to 6 s; 4k QD16",
	  2, { { .delay_ns = 100 * US, .svc_ns = 400 * US, .servers = 8,
		 .sched = S_PULSE, .sched_ns = 3 * SEC,
		 .sched_end_ns = 6 * SEC, .alt_delay_ns = 2100 * US },
	       DEV(100 * US, 400 * US, 8) }, 1, 1, { JOB(16, 4096) }, 1,
	  F_RESTORE },
	/*
	 * Issue 37's black hole: the path that carries a trickle dies as the
	 * other's estimate swings up (a loaded host's noise in the lab), so
	 * the dead one reads the cheaper for a window.
	 */
	{ "hole", "path 1 0.5 ms, +10 ms from 4.95 s to 5.5 s; path 2 1 ms, a black hole from 5 s; 4k QD16",
	  2, { { .delay_ns = 500 * US, .sched = S_PULSE, .sched_ns = 4950 * MS,
		 .sched_end_ns = 5500 * MS, .alt_delay_ns = 10500 * US },
	       { .delay_ns = 1 * MS, .hole_ns = 5 * SEC } }, 1, 1,
	  { JOB(16, 4096) }, 0, F_HOLE },
	{ "hole-near", "path 1 0.5 ms, +2 ms from 4.97 s to 5.5 s; path 2 1 ms, a black hole from 5 s; 4k QD16",
	  2, { { .delay_ns = 500 * US, .sched = S_PULSE, .sched_ns = 4970 * MS,
		 .sched_end_ns = 5500 * MS, .alt_delay_ns = 2500 * US },
	       { .delay_ns = 1 * MS, .hole_ns = 5 * SEC } }, 1, 1,
	  { JOB(16, 4096) }, 0, F_HOLE },
	{ "bw4-sym", "4 paths 0.5 ms + 100 Mbit/s; 1M randrw 50/50, 4 jobs QD16",
	  4, { RATE(500 * US, 100), RATE(500 * US, 100), RATE(500 * US, 100),
	       RATE(500 * US, 100) }, 1, 4,
	  BW4_JOBS, 0, F_OPEN | F_FIO },
	{ "bw4-slow", "as bw4-sym, path 4 at 25 Mbit/s",
	  4, { RATE(500 * US, 100), RATE(500 * US, 100), RATE(500 * US, 100),
	       RATE(500 * US, 25) }, 1, 4,
	  BW4_JOBS, 0, F_SLOWLINK | F_FIO },
	{ "bw4-sym-sh", "as bw4-sym, each link shared by its transfers (TCP streams)",
	  4, { SHARED(500 * US, 100), SHARED(500 * US, 100), SHARED(500 * US, 100),
	       SHARED(500 * US, 100) }, 1, 4,
	  BW4_JOBS, 0, F_OPEN | F_FIO },
	{ "bw4-slow-sh", "as bw4-sym-sh, path 4 at 25 Mbit/s",
	  4, { SHARED(500 * US, 100), SHARED(500 * US, 100), SHARED(500 * US, 100),
	       SHARED(500 * US, 25) }, 1, 4,
	  BW4_JOBS, 0, F_SLOWLINK | F_FIO },
	{ "one-path", "one path, CPU-bound stand-in: 20 us x 1 server; 4k QD16",
	  1, { DEV(0, 20 * US, 1) }, 1, 1, { JOB(16, 4096) }, 0, 0 },
};

const unsigned int nr_scenarios = sizeof(scenarios) / sizeof(scenarios[0]);

const struct scen *scen_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < nr_scenarios; i++)
		if (!strcmp(scenarios[i].name, name))
			return &scenarios[i];
	return NULL;
}
