// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim model: paths, submitters, the blk-nodelat tracker and the event
 * loop.  The tracker does per I/O and per window what src/nodelat does,
 * in its order, with the headers' functions:
 *
 *   issue	group inflight++, busy_ns on 0 -> 1	(nlat_rqos_issue)
 *   done	group inflight--, done_ns (nlat_done_moves()); the sample,
 *		nlat_bound_lat() by the cell's estimate, into the window
 *		sums of its nlat_io_class() cell; fold work queued one
 *		window later if not pending (nlat_rqos_done; delayed work
 *		on a HZ tick clock)
 *   fold	nlat_fold() of every cell, then the queue's nlat_nbar_fold()
 *		of the ns folded, into the group's sum	(nlat_fold_work)
 *   read	estimate, the group's inflight and nbar, waited latency and
 *		stalled, probe grant by nlat_probe_due()	(nlat_read)
 *
 * A group is a controller's queues (nvme-core's key); rule v1 keeps the
 * old tracker instead (rules.c).  Policy adaptive keeps its own state
 * (adaptive.c) and runs ad_pre_ns before the scenario's t = 0 (t0), the
 * delays held at their t = 0 values.  Clocks as in the module: the coarse
 * (tick) one for estimates, probes, ages and read(), the fine one for
 * samples, done_ns and busy_ns.
 */
#include <stdlib.h>

#include "sim.h"

/* ---- random numbers: xorshift64* ---- */

static u64 rnd(struct sim *s)
{
	u64 x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 2685821657736338717ULL;
}

static double rnd_unit(struct sim *s)
{
	return (double)(rnd(s) >> 11) * (1.0 / 9007199254740992.0);
}

static u64 rnd_below(struct sim *s, u64 n)
{
	return rnd(s) % n;
}

/* @v +- noise_pct %, uniform: no two I/Os take exactly as long */
static u64 noisy(struct sim *s, u64 v)
{
	double n = s->cfg->noise_pct / 100.0;

	if (!n || !v)
		return v;
	return (u64)((double)v * (1 + (2 * rnd_unit(s) - 1) * n));
}

static u64 svc_sample(struct sim *s, const struct path_cfg *pc)
{
	double v = (double)noisy(s, pc->svc_ns), z;

	switch (pc->dist) {
	case D_FIXED:
		break;
	case D_UNIFORM:
		v += (2 * rnd_unit(s) - 1) * (double)pc->spread_ns;
		break;
	case D_NORMAL:
		/* Irwin-Hall of 4: mean 0, sd 1, within +-3.46 */
		z = rnd_unit(s) + rnd_unit(s) + rnd_unit(s) + rnd_unit(s) - 2;
		v += z * 1.7320508 * (double)pc->spread_ns;
		break;
	}
	return v > 0 ? (u64)v : 0;
}

/* The delay at @rel from the scenario's t = 0. */
static u64 path_delay(const struct path_cfg *pc, u64 rel)
{
	switch (pc->sched) {
	case S_STEP:
		return rel >= pc->sched_ns ? pc->alt_delay_ns : pc->delay_ns;
	case S_FLIP:
		return (rel / pc->sched_ns) & 1 ? pc->alt_delay_ns : pc->delay_ns;
	case S_PULSE:
		return rel >= pc->sched_ns && rel < pc->sched_end_ns ?
			pc->alt_delay_ns : pc->delay_ns;
	default:
		return pc->delay_ns;
	}
}

/* ---- clocks ---- */

/* ktime_get_coarse_ns(): the time of the last tick. */
static u64 coarse(const struct sim *s, u64 t)
{
	u64 tick = s->cfg->tick_ns;

	return tick ? t / tick * tick : t;
}

/*
 * schedule_delayed_work(usecs_to_jiffies(window_usec)) from @t: the timer
 * fires on the tick usecs_to_jiffies() (rounded up) ticks after @t's.
 */
static u64 fold_time(const struct sim *s, u64 t)
{
	u64 tick = s->cfg->tick_ns, w = s->cfg->p.window_ns;

	if (!tick)
		return t + w;
	return (t / tick + (w + tick - 1) / tick) * tick;
}

/* ---- event queue: binary heap on (time, sequence) ---- */

enum { EV_ISSUE, EV_SVC, EV_DONE, EV_FOLD, EV_PS, EV_RECHECK };

struct ev {
	u64		t, seq;
	unsigned int	type, id;
};

#define MAXEV	(4 * MAXSLOTS + MAXNS * MAXP + 8)

static struct ev heap[MAXEV];
static unsigned int heap_n;
static u64 heap_seq;

static bool ev_before(const struct ev *a, const struct ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void ev_push(u64 t, unsigned int type, unsigned int id)
{
	unsigned int i = heap_n++;
	struct ev e = { t, heap_seq++, type, id };

	if (heap_n > MAXEV) {
		fprintf(stderr, "nlat-sim: event heap overflow\n");
		exit(2);
	}
	while (i && ev_before(&e, &heap[(i - 1) / 2])) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = e;
}

static struct ev ev_pop(void)
{
	struct ev top = heap[0], last = heap[--heap_n];
	unsigned int i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= heap_n)
			break;
		if (c + 1 < heap_n && ev_before(&heap[c + 1], &heap[c]))
			c++;
		if (!ev_before(&heap[c], &last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = last;
	return top;
}

/* ---- latency histogram: 128 sub-buckets per power of two (< 0.8 %) ---- */

static unsigned int hist_idx(u64 v)
{
	unsigned int msb, idx;

	if (v < 256)
		return v;
	msb = 63 - __builtin_clzll(v);
	idx = 256 + (msb - 8) * 128 + ((v >> (msb - 7)) - 128);
	return idx < HBUCKETS ? idx : HBUCKETS - 1;
}

static double hist_val(unsigned int idx)
{
	unsigned int msb, m;

	if (idx < 256)
		return idx;
	msb = (idx - 256) / 128 + 8;
	m = (idx - 256) % 128 + 128;
	return ((double)m + 0.5) * (double)(1ULL << (msb - 7));
}

double hist_pct(const u32 *hist, u64 nr, double pct)
{
	u64 want = (u64)((double)nr * pct / 100.0), seen = 0;
	unsigned int i;

	for (i = 0; i < HBUCKETS; i++) {
		seen += hist[i];
		if (seen > want)
			return hist_val(i);
	}
	return 0;
}

/* ---- tracker ---- */

void tracker_read(struct sim *s, struct nq *q, unsigned int node,
		  unsigned int cls, bool may_probe, struct nlat_view *v)
{
	const struct nlat_params *p = &s->cfg->p;
	const struct rule *r = &s->cfg->rule;
	struct cell *c = &q->cell[node][cls];
	struct grp *g = q->grp;
	u64 now = coarse(s, s->now), since, wnow;
	bool due;

	memset(v, 0, sizeof(*v));
	v->lat_ns = nlat_ewma_ns(c->est.ewma);
	s->pick_base = c->base;
	v->inflight = g->inflight;
	/* clamp_val(nbar, 0, NLAT_NBAR_MAX), unless no fold for a stale interval */
	if ((s64)(now - g->fold_ns) < (s64)(p->stale_windows * p->window_ns))
		v->nbar = g->nbar < 0 ? 0 : g->nbar > NLAT_NBAR_MAX ?
			  NLAT_NBAR_MAX : (u32)g->nbar;
	/* bytes: both in units of the I/O being routed (a count if one size) */
	if (r->bytes) {
		u64 u = s->pick_u ? s->pick_u : 1;
		long nb = (s64)(now - g->fold_ns) <
			  (s64)(p->stale_windows * p->window_ns) ? g->nbar_u : 0;

		v->inflight = (g->inflight_u + u - 1) / u;
		v->nbar = nb < 0 ? 0 : (u64)nb / u > NLAT_NBAR_MAX ?
			  NLAT_NBAR_MAX : (u32)((u64)nb / u);
	}
	/* nlat_read_nq(): started since the last answer */
	if (r->late)
		v->late = nlat_late(g->inflight > g->answer_nr ?
				    g->inflight - g->answer_nr : 0, v->nbar,
				    nlat_recent(g->done_ns, now, p->window_ns,
						s->cfg->tick_ns));
	if (v->late == NLAT_LATE_SILENT)
		v->silent_ms = nlat_silent_ms(g->done_ns, now);
	/* one coarse clock; v1 read waiting and stalled on the fine one */
	wnow = r->v1 ? s->now : now;
	since = g->done_ns > g->busy_ns ? g->done_ns : g->busy_ns;
	if (r->hold) {
		/* nlat_read_quiet(), after no answer for a window (or ever) */
		if (!g->done_ns || (s64)(now - g->done_ns) >= (s64)p->window_ns) {
			u64 quiet = nlat_quiet_ns(nlat_ewma_ns(g->lat_ewma), p);

			v->lat_ns = nlat_waited_lat(v->lat_ns, g->inflight,
						    since, now, p);
			v->stalled = nlat_stalled_for(g->inflight, since, now,
						      quiet);
			v->unproven = nlat_unproven_for(g->inflight > 0,
							g->done_ns, now, quiet);
			if (g->inflight && (s64)(now - since) > 0 &&
			    now - since >= p->window_ns)
				return;	/* waiting: owes an answer, no probe */
		}
		if (!may_probe || v->stalled || v->unproven)
			return;
		goto probe;
	}
	v->lat_ns = nlat_waited_lat(v->lat_ns, v->inflight, since, wnow, p);
	v->stalled = nlat_stalled(v->inflight, since, wnow, p);
	if (!may_probe || v->stalled)
		return;
probe:
	if (r->v1)
		due = v1_probe_due(c, now, p);
	else
		due = nlat_probe_due(c->est.ewma, c->est.upd_ns, c->est.backoff,
				     c->probe_ns, now, p);
	if (due) {
		c->probe_ns = now;
		v->probe = true;
		q->probes++;
	}
}

/* nlat_fold_work(): every cell of the queue (nlat_fold_cell()), then nbar. */
static void tracker_fold(struct sim *s, struct nq *q, u64 t)
{
	const struct nlat_params *p = &s->cfg->p;
	u64 now = coarse(s, t), sum = 0, sum_u = 0, nr = 0;
	unsigned int n, k;
	u32 nbar;

	for (n = 0; n < MAXNODES; n++) {
		for (k = 0; k < NLAT_NR_CLASSES; k++) {
			struct cell *c = &q->cell[n][k];

			nlat_fold(&c->est, c->sum, c->nr, now, p);
			/*
			 * base: the lowest sample seen; a higher window
			 * minimum raises it by 1/64 of the gap per fold
			 * (a floor measured under load is no floor)
			 */
			if (c->wmin)
				c->base = !c->base || c->wmin < c->base ? c->wmin :
					  c->base + (c->wmin - c->base) / 64;
			c->wmin = 0;
			sum += c->sum;
			sum_u += c->sum_u;
			nr += c->nr;
			c->sum = c->nr = c->sum_u = 0;
		}
	}
	/* the group's latency, for its quiet time (hold) */
	if (nr) {
		q->grp->lat_ewma = nlat_ewma_update(q->grp->lat_ewma, sum / nr,
				p->hist_w, nlat_windows(now, q->grp->lat_upd_ns,
							p->window_ns));
		if ((s64)(now - q->grp->lat_upd_ns) > 0)
			q->grp->lat_upd_ns = now;
	}
	/* the first fold spans the window since the first completion */
	if ((s64)(now - q->fold_ns) > 0) {
		nbar = nlat_nbar_fold(q->nbar, sum,
				      q->fold_ns ? now - q->fold_ns : p->window_ns,
				      p->hist_w, p->window_ns);
		q->grp->nbar += (long)nbar - q->nbar;
		q->nbar = nbar;
		nbar = nlat_nbar_fold(q->nbar_u, sum_u,
				      q->fold_ns ? now - q->fold_ns : p->window_ns,
				      p->hist_w, p->window_ns);
		q->grp->nbar_u += (long)nbar - q->nbar_u;
		q->nbar_u = nbar;
	}
	q->fold_ns = now;
	q->grp->fold_ns = now;
	q->fold_at = 0;
}

/* ---- paths and submitters ---- */

static unsigned int qidx(unsigned int ns, unsigned int path)
{
	return ns * MAXP + path;
}

/* From the scenario's t = 0; before it (adaptive's pre-run) as at 0. */
static u64 rel_t(const struct sim *s, u64 t)
{
	return t > s->t0 ? t - s->t0 : 0;
}

static bool measuring(const struct sim *s, u64 t)
{
	return t >= s->t0 + s->cfg->warm_ns;
}

/* Mean in flight per path: the area under nr_active while measuring. */
static void inflight_note(struct sim *s, struct ctrl *c, u64 t)
{
	u64 from = s->t0 + s->cfg->warm_ns, a = c->inflight_t, b;
	unsigned int path = c - s->ctrl;

	if (t > from)
		c->inflight_area += (double)c->nr_active *
			(t - (c->inflight_t > from ? c->inflight_t : from));
	/* and per BIN_NS, from t0, for --timeline --inflight */
	for (a = a > s->t0 ? a : s->t0; c->nr_active && a < t; a = b) {
		u64 bin = (a - s->t0) / BIN_NS;

		if (bin >= MAXBINS)
			break;
		b = s->t0 + (bin + 1) * BIN_NS;
		if (b > t)
			b = t;
		s->res->ibins[bin][path] += (double)c->nr_active * (b - a);
	}
	c->inflight_t = t;
}

static void issue(struct sim *s, unsigned int slot, u64 t)
{
	struct io *io = &s->io[slot];
	const struct job_cfg *j = &s->sc->job[io->job];
	const struct path_cfg *pc;
	struct nq *q;
	struct ctrl *c;
	u64 svc, end, b;
	unsigned int k;

	/* a held bio is routed again as it was: same I/O, same submission */
	if (!io->held) {
		io->node = j->node;
		io->ns = j->ns;
		io->bytes = j->bs;
		io->write = j->write_pct && rnd_below(s, 100) < j->write_pct;
		/* nvme_lat_bio_class(); v1: nlat_size_class() */
		io->cls = s->cfg->rule.v1 || s->cfg->rule.rwcell ?
			  nlat_size_class(j->bs) :
			  nlat_io_class(!io->write, j->bs);
		io->submit = t;
		io->measured = measuring(s, t);
	}
	io->held = false;
	io->probe = io->bogus = false;
	io->extra_ns = 0;
	s->now = t;
	s->waits = false;
	s->res->picks++;
	io->path = policy_pick(s, io);
	if (io->path == PICK_HOLD) {
		/* nvme_lat_hold(): recheck 1 s on if a candidate is busy */
		bool busy = false;

		for (k = 0; k < s->sc->nr_paths; k++)
			busy |= s->nq[io->ns][k].grp->inflight > 0;
		/* beside a proven path: rechecked soon, as if idle */
		if (s->waits)
			busy = false;
		io->held = true;
		s->held[s->nr_held++] = slot;
		s->holds++;
		if (!s->recheck_at) {
			s->recheck_at = t + (busy ? SEC : SEC / 50);
			ev_push(s->recheck_at, EV_RECHECK, 0);
		}
		return;
	}

	q = &s->nq[io->ns][io->path];
	c = &s->ctrl[io->path];
	pc = &s->sc->path[io->path];
	if (!q->grp->inflight++)		/* nlat_rqos_issue() */
		q->grp->busy_ns = t;
	q->grp->inflight_u += IO_UNITS(io->bytes);
	inflight_note(s, c, t);
	c->nr_active++;
	b = (t - s->t0) / BIN_NS;
	if (t >= s->t0 && b < MAXBINS)
		s->res->bins[b][io->path]++;
	if (io->probe && io->measured)
		s->res->probes++;

	svc = svc_sample(s, pc);
	if (io->write && pc->write_x100)
		svc = svc * pc->write_x100 / 100;
	if (pc->outlier_every && !rnd_below(s, pc->outlier_every)) {
		if (pc->outlier_bogus)
			io->bogus = true;
		else
			io->extra_ns = pc->outlier_ns;
	}
	if (pc->servers) {
		unsigned int i, m = 0;

		for (i = 1; i < pc->servers; i++)
			if (c->srv_free[i] < c->srv_free[m])
				m = i;
		end = (c->srv_free[m] > t ? c->srv_free[m] : t) + svc;
		c->srv_free[m] = end;
	} else {
		end = t + svc;
	}
	if (pc->rate_Bps) {
		ev_push(end, EV_SVC, slot);
		return;
	}
	end += noisy(s, path_delay(pc, rel_t(s, end))) + io->extra_ns;
	/* a black hole: never answers; the slot is lost, as fio's */
	if (pc->hole_ns && end >= s->t0 + pc->hole_ns) {
		s->res->parked++;
		return;
	}
	ev_push(end, EV_DONE, slot);
}

/*
 * A shared link (netem rate under several TCP streams, each in order):
 * the head transfer of every busy stream gets rate / busy streams.
 * ps_v is the bytes each head has been served since the link was first
 * used; a head is done at its ps_end.
 */
static void ps_advance(struct sim *s, struct ctrl *c, const struct path_cfg *pc,
		       u64 t)
{
	u64 from = s->t0 + s->cfg->warm_ns;

	if (c->ps_nr && t > c->ps_t) {
		c->ps_v += (double)(t - c->ps_t) * pc->rate_Bps / SEC / c->ps_nr;
		if (t > from)
			c->ps_served += (double)(t - (c->ps_t > from ? c->ps_t : from)) *
					pc->rate_Bps / SEC;
	}
	c->ps_t = t;
}

/* The next completion on the link: pushed anew (an older push is stale). */
static void ps_next(struct sim *s, unsigned int path, u64 t)
{
	struct ctrl *c = &s->ctrl[path];
	const struct path_cfg *pc = &s->sc->path[path];
	double lo = -1;
	unsigned int k;

	c->ps_at = 0;
	if (!c->ps_nr)
		return;
	for (k = 0; k < pc->streams; k++)
		if (c->sq_nr[k] && (lo < 0 || c->ps_end[k] < lo))
			lo = c->ps_end[k];
	lo -= c->ps_v;
	c->ps_at = t + (u64)(lo > 0 ? lo * c->ps_nr * SEC / pc->rate_Bps : 0) + 1;
	ev_push(c->ps_at, EV_PS, path);
}

static unsigned int sq_at(const struct ctrl *c, unsigned int k, unsigned int i)
{
	return c->sq[k][(c->sq_head[k] + i) % MAXSLOTS];
}

/*
 * A transfer joins its stream: writes go one way, reads the other, and
 * each way has streams/2 of them, one per submitting queue (the job's
 * parity stands for its CPU).
 */
static void ps_start(struct sim *s, unsigned int slot, u64 t)
{
	struct io *io = &s->io[slot];
	const struct path_cfg *pc = &s->sc->path[io->path];
	struct ctrl *c = &s->ctrl[io->path];
	unsigned int half = pc->streams / 2 ? pc->streams / 2 : 1;
	unsigned int k = (io->write ? 0 : pc->streams - half) + io->job % half;

	ps_advance(s, c, pc, t);
	c->sq[k][(c->sq_head[k] + c->sq_nr[k]) % MAXSLOTS] = slot;
	if (!c->sq_nr[k]++) {
		c->ps_end[k] = c->ps_v + io->bytes;
		c->ps_nr++;
		ps_next(s, io->path, t);
	}
}

/* EV_PS: the heads served in full leave the link for their delay. */
static void ps_done(struct sim *s, unsigned int path, u64 t)
{
	struct ctrl *c = &s->ctrl[path];
	const struct path_cfg *pc = &s->sc->path[path];
	unsigned int k, slot;

	if (t != c->ps_at)
		return;		/* stale: rescheduled since */
	ps_advance(s, c, pc, t);
	for (k = 0; k < pc->streams; k++) {
		if (!c->sq_nr[k] || c->ps_end[k] > c->ps_v + 1)
			continue;
		slot = sq_at(c, k, 0);
		ev_push(t + noisy(s, path_delay(pc, rel_t(s, t))) +
			s->io[slot].extra_ns, EV_DONE, slot);
		c->sq_head[k] = (c->sq_head[k] + 1) % MAXSLOTS;
		if (--c->sq_nr[k])
			c->ps_end[k] = c->ps_v + s->io[sq_at(c, k, 0)].bytes;
		else
			c->ps_nr--;
	}
	ps_next(s, path, t);
}

/* Service done on a rate-limited path: the transfer, FIFO, then the delay. */
static void transfer(struct sim *s, unsigned int slot, u64 t)
{
	struct io *io = &s->io[slot];
	const struct path_cfg *pc = &s->sc->path[io->path];
	struct ctrl *c = &s->ctrl[io->path];
	u64 tx = (u64)io->bytes * SEC / pc->rate_Bps;

	if (pc->streams) {
		ps_start(s, slot, t);
		return;
	}

	c->link_free = (c->link_free > t ? c->link_free : t) + tx;
	ev_push(c->link_free + noisy(s, path_delay(pc, rel_t(s, c->link_free))) +
		io->extra_ns, EV_DONE, slot);
}

/* The held bios routed again (the requeue work of a kick or recheck). */
static void release(struct sim *s, u64 t)
{
	unsigned int slots[MAXSLOTS], n = s->nr_held, i;

	memcpy(slots, s->held, n * sizeof(*slots));
	s->nr_held = 0;
	s->recheck_at = 0;
	for (i = 0; i < n; i++)
		issue(s, slots[i], t);
}

static void done(struct sim *s, unsigned int slot, u64 t)
{
	struct io *io = &s->io[slot];
	struct nq *q = &s->nq[io->ns][io->path];
	struct cell *c = &q->cell[io->node][io->cls];
	u64 lat = t - io->submit, sample;

	inflight_note(s, &s->ctrl[io->path], t);
	s->ctrl[io->path].nr_active--;
	/* nlat_rqos_done() */
	q->grp->inflight--;
	q->grp->inflight_u -= IO_UNITS(io->bytes);
	q->grp->answer_nr = q->grp->inflight;
	/* nlat_answer(): done_ns moves by steps of a window fraction */
	if (s->cfg->rule.v1 ||
	    nlat_done_moves(q->grp->done_ns, t, s->cfg->p.window_ns)) {
		u64 prev = q->grp->done_ns;

		q->grp->done_ns = t;
		/* nlat_answer(): the end of a quiet spell kicks held bios */
		if (s->cfg->rule.hold && s->nr_held &&
		    nlat_unproven_for(true, prev, t,
				      nlat_quiet_ns(nlat_ewma_ns(q->grp->lat_ewma),
						    &s->cfg->p)))
			release(s, t);
	}
	sample = nlat_clamp_lat(io->bogus ? NLAT_LAT_MAX_NS : lat);
	if (!s->cfg->rule.v1)
		sample = nlat_bound_lat(sample, c->est.ewma);
	c->sum += sample;
	c->sum_u += sample * IO_UNITS(io->bytes);
	if (!c->wmin || sample < c->wmin)
		c->wmin = sample;
	c->nr++;
	if (s->pol == POL_ADAPT)
		adaptive_done(s, io, lat, t);
	if (!q->fold_at) {
		q->fold_at = fold_time(s, t);
		ev_push(q->fold_at, EV_FOLD, qidx(io->ns, io->path));
	}

	if (s->draining) {
		s->fio_bytes += io->bytes;
		s->drain_end = t;
		s->drain_left--;
		return;		/* the job has stopped: no new I/O */
	}
	if (measuring(s, t)) {
		s->res->ios++;
		s->res->bytes += io->bytes;
		s->res->per_path[io->path]++;
		s->res->hist[hist_idx(lat)]++;
		s->res->job_ios[io->job][io->path]++;
		s->res->job_lat_ns[io->job][io->path] += lat;
		s->res->job_hist[io->job][hist_idx(lat)]++;
	}
	issue(s, slot, t);	/* closed loop */
}

/* ---- share over time ---- */

static double bin_share(const struct result *r, unsigned int b, unsigned int path)
{
	u64 all = 0;
	unsigned int i;

	for (i = 0; i < MAXP; i++)
		all += r->bins[b][i];
	return all ? (double)r->bins[b][path] / all : 0;
}

/* Seconds from bin b0 until every bin before b1 gives @path >= @goal; -1: never. */
static double settle(const struct result *r, unsigned int path, unsigned int b0,
		     unsigned int b1, double goal)
{
	unsigned int b, at = b0;

	for (b = b0; b < b1; b++)
		if (bin_share(r, b, path) < goal)
			at = b + 1;
	return at >= b1 ? -1 : (double)(at - b0) * BIN_NS / SEC;
}

static void move_time(const struct scen *sc, struct result *r)
{
	unsigned int end = r->nr_bins, k, fast, i, n = 0;
	double sum = 0, m;
	u64 period, t;

	r->move_s = -1;
	if (sc->flags & F_STEP) {
		/* path 1 slow from sc->path[0].sched_ns: off it onto path 2 */
		r->move_s = settle(r, 1, sc->path[0].sched_ns / BIN_NS, end, 0.9);
	} else if (sc->flags & F_FLIP) {
		/* mean over flips; a flip never followed counts as its period */
		period = sc->path[0].sched_ns;
		for (k = 1; (k + 1) * period / BIN_NS <= end; k++) {
			t = k * period;
			fast = 0;
			for (i = 1; i < sc->nr_paths; i++)
				if (path_delay(&sc->path[i], t) <
				    path_delay(&sc->path[fast], t))
					fast = i;
			m = settle(r, fast, k * period / BIN_NS,
				   (k + 1) * period / BIN_NS, 0.9);
			sum += m < 0 ? (double)period / SEC : m;
			n++;
		}
		r->move_s = n ? sum / n : -1;
	} else if (sc->flags & F_RESTORE) {
		/* path 1 restored at sched_end_ns: its share of the last 3 s */
		u64 a = 0, all = 0, b;

		for (b = end - 3 * SEC / BIN_NS; b < end; b++) {
			a += r->bins[b][0];
			for (i = 0; i < MAXP; i++)
				all += r->bins[b][i];
		}
		r->move_s = all ? (double)a / all : -1;
	}
}

/* ---- one run ---- */

static u64 name_hash(const char *s)
{
	u64 h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

/*
 * The first state of @seed's streams in scenario @name.  It must be odd;
 * the seed's own low bit goes to the top, or seeds 2k and 2k + 1 would
 * run one stream (an even seed keeps the stream it had before).
 */
u64 sim_rng_state(u64 seed, const char *name)
{
	return ((seed ^ name_hash(name)) | 1) ^ ((seed & 1) << 63);
}

/* fio waits for its requests; a drain longer than this is not measured */
#define DRAIN_MAX_NS	(120 * SEC)

void sim_run(const struct scen *sc, enum policy pol, const struct simcfg *cfg,
	     struct result *res)
{
	static struct sim s;
	bool ad = pol == POL_ADAPT;
	u64 pre = ad ? cfg->ad_pre_ns : 0;
	/* adaptive moves every batch: measured over several, if steady */
	u64 run = ad && !(sc->flags & (F_STEP | F_FLIP | F_RESTORE)) ?
		  cfg->ad_run_ns : cfg->run_ns;
	u64 end = BOOT_NS + pre + cfg->warm_ns + run;
	unsigned int i, j, k, slot = 0, n, m;
	bool shared = true;
	u64 fio_bytes;

	memset(&s, 0, sizeof(s));
	memset(res, 0, sizeof(*res));
	/* nlat_attach(q, ns->ctrl); v1: every queue on its own */
	for (n = 0; n < MAXNS; n++)
		for (m = 0; m < MAXP; m++)
			s.nq[n][m].grp = cfg->rule.v1 ? &s.nq[n][m].own :
						       &s.ctrl[m].grp;
	s.sc = sc;
	s.cfg = cfg;
	s.pol = pol;
	s.res = res;
	s.t0 = BOOT_NS + pre;
	if (pol == POL_ADAPT)
		adaptive_init(&s);
	/* the same streams for every policy of a scenario */
	s.rng = sim_rng_state(cfg->seed, sc->name);
	for (n = 0; n < MAXNS; n++)
		for (m = 0; m < MAXNODES; m++)
			s.rr_cur[n][m] = sc->nr_paths - 1;
	heap_n = 0;
	heap_seq = 0;
	res->nr_bins = (cfg->warm_ns + run) / BIN_NS;
	if (res->nr_bins > MAXBINS)
		res->nr_bins = MAXBINS;

	for (j = 0; j < sc->nr_jobs; j++) {
		for (k = 0; k < sc->job[j].qd; k++, slot++) {
			if (slot >= MAXSLOTS) {
				fprintf(stderr, "nlat-sim: %s: too many slots\n", sc->name);
				exit(2);
			}
			s.io[slot].job = j;
			ev_push(BOOT_NS + slot * US, EV_ISSUE, slot);
		}
	}

again:
	while (heap_n) {
		struct ev e = ev_pop();

		if (e.t >= end && !s.draining) {
			/* fio's accounting is done below; then the drain */
			ev_push(e.t, e.type, e.id);
			break;
		}
		if (s.draining && (!s.drain_left || e.t >= end + DRAIN_MAX_NS))
			break;
		s.now = e.t;
		switch (e.type) {
		case EV_ISSUE:
			issue(&s, e.id, e.t);
			break;
		case EV_SVC:
			transfer(&s, e.id, e.t);
			break;
		case EV_DONE:
			done(&s, e.id, e.t);
			break;
		case EV_FOLD:
			tracker_fold(&s, &s.nq[e.id / MAXP][e.id % MAXP], e.t);
			break;
		case EV_PS:
			ps_done(&s, e.id, e.t);
			break;
		case EV_RECHECK:
			if (e.t == s.recheck_at)
				release(&s, e.t);
			break;
		}
	}

	if (s.draining) {
		u64 from = s.t0 + cfg->warm_ns;

		res->drain_s = s.drain_left ? -1 :
			       (double)(s.drain_end - end) / SEC;
		res->fio_mibs = s.drain_left || s.drain_end <= from ? -1 :
				s.fio_bytes / ((double)(s.drain_end - from) / SEC) /
				(1024.0 * 1024.0);
		return;
	}
	fio_bytes = res->bytes;
	/*
	 * Shared links: the bytes they served while measuring, not those of
	 * the transfers completed then (each link ends with many part-served)
	 */
	for (i = 0; i < sc->nr_paths; i++) {
		shared &= sc->path[i].streams > 0;
		if (sc->path[i].streams)
			ps_advance(&s, &s.ctrl[i], &sc->path[i], end);
	}
	res->secs = (double)run / SEC;
	res->iops = res->ios / res->secs;
	if (shared && res->bytes) {
		double b = 0;

		for (i = 0; i < sc->nr_paths; i++)
			b += s.ctrl[i].ps_served;
		/* IOPS: the same bytes in I/Os of the mean size completed */
		res->iops = b / ((double)res->bytes / res->ios) / res->secs;
		res->bytes = (u64)b;
	}
	res->mibs = res->bytes / res->secs / (1024.0 * 1024.0);
	res->p50_us = hist_pct(res->hist, res->ios, 50) / 1000;
	res->p99_us = hist_pct(res->hist, res->ios, 99) / 1000;
	res->p999_us = hist_pct(res->hist, res->ios, 99.9) / 1000;
	/* NLAT_SIM_TAIL_MS: the latency policy's share of I/O above it */
	if (getenv("NLAT_SIM_TAIL_MS") && pol == POL_LAT) {
		double t = atof(getenv("NLAT_SIM_TAIL_MS")) * 1e6, over = 0;

		for (i = 0; i < HBUCKETS; i++)
			if (hist_val(i) > t)
				over += res->hist[i];
		fprintf(stderr, "tail %s seed %llu: %.3f%% over %s ms, p98 %.1f p99 %.1f p99.5 %.1f ms\n",
			sc->name, (unsigned long long)cfg->seed,
			100.0 * over / res->ios, getenv("NLAT_SIM_TAIL_MS"),
			hist_pct(res->hist, res->ios, 98) / 1e6,
			hist_pct(res->hist, res->ios, 99) / 1e6,
			hist_pct(res->hist, res->ios, 99.5) / 1e6);
	}
	res->probe_pct = res->ios ? 100.0 * res->probes / res->ios : 0;
	for (i = 0; i < MAXP; i++) {
		res->share[i] = res->ios ? (double)res->per_path[i] / res->ios : 0;
		inflight_note(&s, &s.ctrl[i], end);
		res->inflight[i] = s.ctrl[i].inflight_area / run;
	}
	move_time(sc, res);
	/*
	 * A time-based fio run stops its jobs at the end and then waits for
	 * what they have in flight: its MiB/s is the bytes completed from
	 * the warm-up to the last completion over that time.
	 */
	s.fio_bytes = fio_bytes;
	s.drain_left = slot;
	s.drain_end = end;
	s.draining = true;
	goto again;
}
