/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nlat-sim: shared types.  The tracker state below mirrors struct
 * nlat_queue, nlat_cell and nlat_group of src/nodelat/nlat-internal.h; the
 * math is the kernel's own (nlat-math.h, blk-nodelat.h,
 * nvme-latency-cost.h), compiled through the unit tests' shim.
 */
#ifndef _NLAT_SIM_H
#define _NLAT_SIM_H

#include <stdio.h>
#include <string.h>

#include "nlat-math.h"
#include "blk-nodelat.h"
#include "nvme-latency-cost.h"

#define US		1000ULL
#define MS		1000000ULL
#define SEC		1000000000ULL
#define MAXP		4	/* paths (controllers) */
#define MAXNS		8	/* namespaces */
#define MAXNODES	2
#define MAXJOBS		8
#define MAXSRV		64	/* parallel servers per path */
#define MAXSTREAMS	8	/* streams of a shared link */
#define MAXSLOTS	256	/* I/Os in flight, all jobs */
#define BIN_NS		(100 * MS)	/* share-over-time bins */
#define MAXBINS		1000
#define BOOT_NS		(60 * SEC)	/* sim clock at t = 0: clocks never read 0 */

/* ---- scenario description ---- */

enum dist { D_FIXED, D_UNIFORM, D_NORMAL };
enum sched { S_NONE, S_STEP, S_FLIP, S_PULSE };

struct path_cfg {
	u64		delay_ns;	/* pure delay (netem delay): no concurrency limit */
	enum sched	sched;		/* delay schedule */
	u64		sched_ns;	/* S_STEP: time of the step; S_FLIP: period */
	u64		sched_end_ns;	/* S_PULSE: alt delay from sched_ns to this */
	u64		alt_delay_ns;	/* delay after the step / in odd periods */
	unsigned int	servers;	/* device concurrency; 0: unlimited */
	u64		svc_ns;		/* service time (mean) */
	enum dist	dist;
	u64		spread_ns;	/* D_UNIFORM: half width; D_NORMAL: sd */
	unsigned int	write_x100;	/* write service time, % of svc_ns (0: 100) */
	u64		rate_Bps;	/* link bytes/s, FIFO (netem rate); 0: none */
	unsigned int	streams;	/* rate_Bps shared by this many FIFO streams (0: one FIFO) */
	unsigned int	outlier_every;	/* 1 in N I/Os is an outlier; 0: none */
	u64		outlier_ns;	/* ... this much later */
	bool		outlier_bogus;	/* ... or only its sample reads outlier_ns */
	u64		hole_ns;	/* from then on it answers nothing (0: never) */
};

struct job_cfg {
	unsigned int	node;
	unsigned int	ns;
	unsigned int	qd;
	unsigned int	bs;
	unsigned int	write_pct;
};

#define F_ASYM		1	/* delay-asymmetric: also checked against fast-only */
#define F_STEP		2	/* report the time until the share moves off path 1 at 5 s */
#define F_FLIP		4	/* report the mean time to follow a flip */
#define F_RESTORE	8	/* path 1 slowed then restored: its share back */
#define F_CLAIM		16	/* the published adaptive rule's own claim: ours must lead it */
#define F_OPEN		32	/* a goal not met yet: --check reports, does not count it */
#define F_SLOWLINK	64	/* the last path is slower: no more in flight there than queue-depth */
#define F_FIO		128	/* the lab's fio run: MiB/s as fio counts it (the drain) too */
#define F_HOLE		256	/* a path turns a black hole: at most one I/O parked there */

struct scen {
	const char	*name;
	const char	*desc;
	unsigned int	nr_paths;
	struct path_cfg	path[MAXP];
	unsigned int	nr_ns;
	unsigned int	nr_jobs;
	struct job_cfg	job[MAXJOBS];
	unsigned int	fast;		/* the path fast-only uses */
	unsigned int	flags;
};

extern const struct scen scenarios[];
extern const unsigned int nr_scenarios;
const struct scen *scen_find(const char *name);

/* ---- latency rules (rules.c) ---- */

enum cost_kind {
	COST_KERNEL,	/* nvme_lat_cmp() of the header, nbar filled */
	COST_NORM,	/* lat * (S + inflight) / (S + nbar * pct / 100) */
	COST_SHARE,	/* lat * (share + inflight): no nbar */
};

struct rule {
	char		name[64];
	enum cost_kind	cost;
	unsigned int	pct;		/* COST_NORM */
	unsigned int	s;		/* COST_NORM: S (NVME_LAT_QUEUE_SHARE) */
	unsigned int	share;		/* COST_SHARE */
	unsigned int	tie;		/* costs within tie % compare by in flight */
	unsigned int	near;		/* latencies within 1/near: nbar / 2 charged */
	unsigned int	near_s;		/* near: S of their comparison (0: s) */
	bool		near_svc;	/* near also by lat / (S + nbar) */
	unsigned int	ramp;		/* nbar / 2 at one latency to all at 1/ramp apart */
	unsigned int	svc;		/* ramp: lat / nbar within 1/svc: nbar / 2 */
	bool		sq;		/* ramp: quadratic, not linear */
	unsigned int	flat;		/* ramp: from 1/flat apart, nbar / 2 within */
	bool		v1;		/* the old tracker (rules.c) */
	bool		rwcell;		/* reads and writes of a size share a cell */
	unsigned int	lead;		/* lead: in flight ahead by more, within 2x: fewer wins */
	bool		chase;		/* ranked: the first candidate is the last winner */
	unsigned int	lead_svc;	/* lsvc: lead only where lat / nbar are within 1/N */
	bool		bytes;		/* in flight and nbar in units of the I/O's size */
	bool		base;		/* only the latency above its floor is charged for load */
	bool		rr;		/* deliberately bad: round robin */
	bool		two;		/* two candidates per I/O: the last winner and the next */
	bool		ranked;		/* two: the best by idle cost, ranked once a window */
	bool		budget;		/* ranked: probes within the node's budget */
	bool		hold;		/* unproven paths, and bios held while every one is */
	bool		wait;		/* hold: also beside a loaded proven path (nvme_lat_wait_beside()) */
	bool		late;		/* a path given more since its last answer than it takes loses (nlat_late()) */
	bool		one;		/* ranked: one path read per I/O, in turn among those in use, up to a cap */
	unsigned int	one_slack;	/* one: requests over the ranking's level a path may take */
};

int rule_parse(const char *spec, struct rule *r);
bool rule_selftest(void);
/* A candidate, and for rule base its latency floor (ns, 0: none). */
struct sim_cand {
	struct nlat_view	c;
	u64			base;
};

int rule_cmp(const struct rule *r, const struct sim_cand *a,
	     const struct sim_cand *b);

struct cell;
bool v1_probe_due(const struct cell *c, u64 now, const struct nlat_params *p);

/* ---- model state (model.c) ---- */

/* One (queue, node, class): struct nlat_cell. */
struct cell {
	struct nlat_est	est;
	u64		probe_ns;	/* last probe granted */
	u64		sum, nr;	/* samples since the last fold (the per-CPU counters) */
	u64		sum_u;		/* bytes: sum of sample x 4k units */
	u64		wmin;		/* base: the window's lowest sample; 0: none */
	u64		base;		/* base: the latency floor, ns */
};

/*
 * Queues attached with one key: struct nlat_group.  The kernel rule keys
 * by controller (nvme-core passes ns->ctrl); v1 had one per queue.
 */
struct grp {
	unsigned int	inflight;
	u64		done_ns;	/* last completion */
	u64		busy_ns;	/* inflight went 0 -> 1 */
	unsigned int	answer_nr;	/* inflight after its last completion */
	long		nbar;		/* sum of its queues' nbar */
	u64		inflight_u;	/* bytes: in flight, 4k units */
	long		nbar_u;		/* bytes: nbar in 4k units */
	u64		fold_ns;	/* last fold of any of them */
	u64		lat_ewma;	/* hold: all its samples, for nlat_quiet_ns() */
	u64		lat_upd_ns;
};

/* A path's request queue of one namespace: struct nlat_queue. */
struct nq {
	struct cell	cell[MAXNODES][NLAT_NR_CLASSES];
	struct grp	*grp;
	struct grp	own;		/* v1: the queue is its own group */
	u32		nbar;		/* nlat_nbar_fold(), by the fold */
	u32		nbar_u;		/* bytes: the same in 4k units */
	u64		fold_ns;	/* last fold */
	u64		fold_at;	/* fold work queued for then; 0: not queued */
	u64		probes;
};

/* A controller: the shared device, link and delay of a path. */
struct ctrl {
	u64		srv_free[MAXSRV];
	u64		link_free;
	/*
	 * shared link: its streams' head transfers share the rate equally
	 * (processor sharing, by virtual bytes served per transfer); the
	 * others wait in their stream, FIFO
	 */
	double		ps_v;		/* bytes served to each head so far */
	u64		ps_t;		/* ps_v is as of then */
	u64		ps_at;		/* next completion pushed for then; 0: none */
	unsigned int	ps_nr;		/* streams with a transfer */
	double		ps_end[MAXSTREAMS];	/* ps_v at which its head is done */
	unsigned int	sq[MAXSTREAMS][MAXSLOTS];	/* each stream's slots, a ring */
	unsigned int	sq_head[MAXSTREAMS], sq_nr[MAXSTREAMS];
	double		ps_served;	/* bytes it served while measuring */
	double		inflight_area;	/* sum of nr_active x ns, measured */
	u64		inflight_t;	/* inflight_area is as of then */
	unsigned int	nr_active;	/* in flight, all namespaces (upstream's nr_active) */
	struct grp	grp;		/* the tracker's group of its queues */
};

/* bytes: an I/O's weight in 4k units, by its size class, as the tracker's */
#define IO_UNITS(b)	nlat_size_units(nlat_size_class(b))

struct io {
	unsigned int	job, path, cls, node, ns;
	unsigned int	bytes;
	bool		write, probe, bogus, measured;
	bool		held;		/* hold: waiting on the head for an answer */
	u64		submit;
	u64		extra_ns;	/* outlier delay */
};

enum policy { POL_NUMA, POL_RR, POL_QD, POL_ADAPT, POL_LAT, POL_FAST, NR_POL };
extern const char *const policy_names[NR_POL];

#define HBUCKETS	(256 + 40 * 128)

/* The upstream "adaptive" rule's state for one (namespace, CPU, direction). */
struct ad_set {
	u64		sum[MAXP], nr[MAXP];	/* the batch */
	u64		batch_ns[MAXP];		/* the batch began; 0: no sample yet */
	u64		ewma[MAXP];		/* ns (per 512 bytes); 0: none yet */
	unsigned int	weight[MAXP], credits[MAXP];
	unsigned int	cur;			/* the path picked last */
};

struct result {
	u64		ios, bytes, probes;
	u64		picks, reads;	/* I/Os routed, paths read to route them */
	u64		parked;		/* I/Os a black hole swallowed (F_HOLE) */
	u64		per_path[MAXP];
	u64		job_ios[MAXJOBS][MAXP], job_lat_ns[MAXJOBS][MAXP];
	u32		job_hist[MAXJOBS][HBUCKETS];
	double		secs;
	double		iops, mibs, p50_us, p99_us, p999_us, probe_pct;
	double		share[MAXP];
	double		inflight[MAXP];	/* mean requests in flight per path */
	double		move_s;		/* F_STEP / F_FLIP; < 0: n/a or never */
	double		fio_mibs;	/* as fio's time-based run: with the drain */
	double		drain_s;	/* from the end until the last completion */
	unsigned int	nr_bins;
	u64		bins[MAXBINS][MAXP];	/* I/O issued per path per BIN_NS */
	double		ibins[MAXBINS][MAXP];	/* in flight x ns per path per BIN_NS */
	u32		hist[HBUCKETS];
};

struct simcfg {
	u64		warm_ns, run_ns;
	u64		tick_ns;	/* coarse clock and timer tick (HZ); 0: exact */
	u64		seed;
	unsigned int	noise_pct;	/* every delay and service time +- this %, uniform */
	struct nlat_params p;
	struct rule	rule;
	u64		ad_batch_ns;	/* adaptive: batch interval (15 s) */
	u64		ad_pre_ns;	/* adaptive: run before the scenario's t = 0 */
	u64		ad_run_ns;	/* adaptive: measured, unless the delays are scheduled */
	bool		ad_norm;	/* adaptive: samples per 512 bytes */
};

struct sim {
	const struct scen	*sc;
	const struct simcfg	*cfg;
	enum policy		pol;
	u64			rng;
	u64			now;
	u64			t0;	/* the scenario's t = 0 */
	/* after the end: no new I/O, the slots' last completions counted */
	bool			draining;
	unsigned int		drain_left;	/* slots not completed since */
	u64			drain_end, fio_bytes;
	struct nq		nq[MAXNS][MAXP];
	struct ctrl		ctrl[MAXP];
	unsigned int		rr_cur[MAXNS][MAXNODES];
	/* two: per (namespace, node, class), the last winner and challenger */
	unsigned int		two_won[MAXNS][MAXNODES][NLAT_NR_CLASSES];
	unsigned int		two_next[MAXNS][MAXNODES][NLAT_NR_CLASSES];
	u64			two_rank_ns[MAXNS][MAXNODES][NLAT_NR_CLASSES];
	/* one: per (namespace, node, class), the paths in use at the ranking,
	 * each one's cap of requests in flight, and the turn */
	unsigned int		one_nr[MAXNS][MAXNODES][NLAT_NR_CLASSES];
	unsigned int		one_set[MAXNS][MAXNODES][NLAT_NR_CLASSES][MAXP];
	unsigned int		one_cap[MAXNS][MAXNODES][NLAT_NR_CLASSES][MAXP];
	unsigned int		one_cur[MAXNS][MAXNODES][NLAT_NR_CLASSES];
	/* budget: per (namespace, node), no probe before; the gap after one */
	u64			probe_at[MAXNS][MAXNODES], probe_gap[MAXNS][MAXNODES];
	bool			may_probe;	/* the I/O being routed */
	u64			rate;		/* ranking: I/O per s served, 1/NLAT_NBAR_ONE */
	struct io		io[MAXSLOTS];
	struct ad_set		ad[MAXNS][MAXNODES][2];
	unsigned int		pick_u;	/* bytes: the I/O being routed, 4k units */
	u64			pick_base;	/* base: tracker_read()'s floor */
	struct sim_cand		last;		/* the candidate rank() read last */
	/* hold: bios every candidate of which was unproven (nvme_lat_hold()) */
	unsigned int		held[MAXSLOTS], nr_held;
	u64			recheck_at;	/* their recheck is due; 0: none */
	u64			holds;		/* bios held, ever */
	bool			any_fresh;	/* rank(): a candidate read nvme_lat_fresh() */
	bool			waits;		/* the I/O routed last waits beside a proven path */
	struct result		*res;
};

double hist_pct(const u32 *hist, u64 nr, double pct);

u64 sim_rng_state(u64 seed, const char *name);
void sim_run(const struct scen *sc, enum policy pol, const struct simcfg *cfg,
	     struct result *res);

/* The tracker's read() for one queue: nlat_read(). */
void tracker_read(struct sim *s, struct nq *q, unsigned int node,
		  unsigned int cls, bool may_probe, struct nlat_view *v);

/* policies.c; PICK_HOLD: the bio waits for an answer (rule hold) */
#define PICK_HOLD	(~0U)
unsigned int policy_pick(struct sim *s, struct io *io);

/* adaptive.c */
void adaptive_init(struct sim *s);
unsigned int adaptive_pick(struct sim *s, const struct io *io);
void adaptive_done(struct sim *s, const struct io *io, u64 lat, u64 now);

#endif /* _NLAT_SIM_H */
