// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: the latency rule, and the variants it is compared with.  The
 * default, kernel, is the headers' own: the model calls them (model.c,
 * policies.c).  What a variant does otherwise is here.  --rule takes
 * tokens joined by '+', a later cost replacing an earlier one:
 *
 *   kernel	ranked (below); hold and wait (below); nvme_lat_cmp() with the group's nbar; nlat_probe_due() with
 *		the cell's back-off; samples bounded by nlat_bound_lat();
 *		read/write classes (nlat_io_class()); in flight, waiting and
 *		stalled per controller (the tracker's group); in flight and
 *		nbar weighted by size (bytes, below)
 *   normN	kernel, but charged nbar * N / 100 whatever the latencies
 *		(norm50: the kernel's before 2026-12-06, near8 below; norm100:
 *		a path is never charged for the load it was measured at, so
 *		equal paths keep any split and one that recovers does not
 *		win its share back; norm100+near8 is the kernel's cost of
 *		2026-12-06, before ramp4)
 *   shareN	kernel, but cost lat * (N + inflight), no nbar (share8:
 *		kernel without nbar)
 *   v1		the old headers' rule and tracker, reproduced: cost lat *
 *		(8 + inflight); in flight, waiting and stalled per queue,
 *		on the fine clock; a probe whenever the cell is stale, one
 *		per window, no back-off; samples as they are; reads and
 *		writes of a size share a cell.  v1+norm50: the old tracker
 *		with the new cost (nbar per queue)
 *   qN		kernel, but S (NVME_LAT_QUEUE_SHARE) = N
 *   bytes	in flight and nbar counted in 4k units (nlat_size_units()
 *		of the size class) and divided by the I/O's own (a 128k
 *		request in flight is 32 4k ones); the same as count when
 *		every I/O has one size: the kernel's
 *   count	kernel, but in flight and nbar counted in requests whatever
 *		their size (the kernel's before)
 *   base	only the estimate above the cell's floor is scaled for load:
 *		cost = floor + (lat - floor) * (S + inflight) / (S + nbar / 2);
 *		the floor is the lowest sample seen, a higher window minimum
 *		raising it by 1/64 of the gap per fold
 *   ranked	(kernel's) per I/O two candidates are read: the path of
 *		lowest idle cost (inflight 0), ranked by a whole scan once
 *		a window per (namespace, node, class), which routes the I/O
 *		that makes it, and the next other path in turn
 *		(nvme_latency_two())
 *		with a probe budget per (namespace, node): a probe per 200
 *		I/Os the paths served (Little's law at the ranking), one a
 *		second at least (nvme_latency_ranked())
 *   one	ranked, but per I/O one path is read: in turn among the
 *		paths in use at the ranking (cost at most the scan's best
 *		one's then), taken while its in flight is at most the cap
 *		of the ranking's level (oneN: N requests over it) and it is
 *		not stalled, unproven or late; else the two decide
 *   nobudget	ranked without the budget
 *   scan	every path read per I/O (the kernel's before)
 *   two	as ranked, but the first candidate is the last winner
 *		(no scan): sticks to a path that won once
 *   rampN	nbar charged by half between paths of one latency, by more
 *		as their latencies part, in full from 1/N of the lower apart,
 *		linearly (nvme_lat_charge(); the kernel's since 2026-12-07 is
 *		ramp4); with flatM: by half within 1/M, ramping from there to
 *		1/N; with svcN: also by half where lat / nbar are within 1/N;
 *		with sq: quadratic, not linear
 *   tieN	costs within N % of the lower one compare by in flight
 *		(queue-depth among paths of about one cost); with norm100:
 *		the load a path was measured at is charged in full, and
 *		equal paths still spread
 *   nearN	latencies within 1/N of the lower one: nbar / 2 charged,
 *		else the variant's share (with norm100: all of it); a step
 *		where ramp (below) is linear
 *   nsN	near (the kernel's band, or nearN's): S = N between them
 *		(alone: norm100+near8+nsN).  On a link, where the latency
 *		is the queue, a path measured at nbar costs about
 *		nbar (S + inflight) / (S + nbar / 2) transfers, so one
 *		measured lighter looks cheaper by a factor that grows
 *		with S (issue 36's swing; docs/simulator.md)
 *   hold	(kernel's) the tracker's unproven state (nlat_unproven_for():
 *		a group quiet, or that never answered, given I/O) and
 *		stalled by its own quiet time, and the hold: a bio every
 *		candidate of which is unproven waits until a quiet spell
 *		ends (the waker), or its recheck (20 ms; 1 s if a candidate
 *		has requests started); the ranking skips an unproven best
 *		(nvme_latency_path(), nvme_lat_hold())
 *   nohold	neither (the model before 2026-12-07: no path unproven)
 *   wait	(kernel's) hold, and a bio also waits beside a proven best
 *		with NVME_LAT_QUEUE_SHARE in flight while another candidate
 *		never answered (nvme_lat_wait_beside()), rechecked in 20 ms
 *   nowait	hold without wait (the kernel's before 2026-12-07)
 *   late	(kernel's) a path given more requests since its last
 *		answer than nlat_late() allows loses to one that answers
 *   nolate	not (the kernel's before 2026-12-07)
 *   nsvc	near also when lat / (S + nbar) are within the band (on
 *		links of one rate the latency follows the queue, the
 *		latency per request does not; alone: norm100+near8+nsvc)
 *   rwcell	reads and writes of a size share a cell (one estimate)
 *   leadN	latencies within 2x and one path more than N in flight
 *		ahead: the other wins (alone: norm100+near8+leadN)
 *   lsvcN	with leadN: only where lat / nbar of the two are within
 *		1/N (links of one rate, whatever their queues)
 *   chase	with ranked: the first candidate is the last winner
 *		between rankings, not the ranked best
 *   rr		deliberately bad: round robin (to see the check fail)
 */
#include <math.h>
#include <stdlib.h>

#include "sim.h"

static bool num_tok(const char *tok, const char *pre, unsigned int *v,
		    unsigned int min, unsigned int max)
{
	size_t n = strlen(pre);
	unsigned long x;
	char *end;

	if (strncmp(tok, pre, n) || !tok[n])
		return false;
	x = strtoul(tok + n, &end, 10);
	if (*end || x < min || x > max)
		return false;
	*v = x;
	return true;
}

/* A near variant alone is the near rule's: norm100+near8 with it. */
static void near_alone(struct rule *r)
{
	if (r->cost != COST_KERNEL)
		return;
	r->cost = COST_NORM;
	r->pct = 100;
	r->near = 8;
}

int rule_parse(const char *spec, struct rule *r)
{
	char buf[64], *tok, *save;

	memset(r, 0, sizeof(*r));
	r->cost = COST_KERNEL;
	r->s = NVME_LAT_QUEUE_SHARE;
	r->pct = 50;
	r->bytes = true;
	r->two = true;
	r->ranked = true;
	r->budget = true;
	r->hold = true;
	r->wait = true;
	r->late = true;
	if (strlen(spec) >= sizeof(buf))
		return -1;
	strcpy(r->name, spec);
	strcpy(buf, spec);
	for (tok = strtok_r(buf, "+", &save); tok;
	     tok = strtok_r(NULL, "+", &save)) {
		if (!strcmp(tok, "kernel")) {
			r->cost = COST_KERNEL;
		} else if (!strcmp(tok, "v1")) {
			r->v1 = true;
			r->hold = false;
			r->wait = false;
			r->late = false;
			r->two = false;
			r->ranked = false;
			r->bytes = false;
			r->cost = COST_SHARE;
			r->share = NVME_LAT_QUEUE_SHARE;
		} else if (!strcmp(tok, "nsvc")) {
			r->near_svc = true;
			near_alone(r);
		} else if (!strcmp(tok, "rwcell")) {
			r->rwcell = true;
		} else if (!strcmp(tok, "base")) {
			r->base = true;
		} else if (!strcmp(tok, "bytes")) {
			r->bytes = true;
		} else if (!strcmp(tok, "count")) {
			r->bytes = false;
		} else if (!strcmp(tok, "nobudget")) {
			r->budget = false;
		} else if (!strcmp(tok, "hold")) {
			r->hold = true;
		} else if (!strcmp(tok, "nohold")) {
			r->hold = false;
			r->wait = false;
		} else if (!strcmp(tok, "wait")) {
			r->hold = true;
			r->wait = true;
		} else if (!strcmp(tok, "nowait")) {
			r->wait = false;
		} else if (!strcmp(tok, "late")) {
			r->late = true;
		} else if (!strcmp(tok, "nolate")) {
			r->late = false;
		} else if (!strcmp(tok, "rr")) {
			r->rr = true;
		} else if (!strcmp(tok, "two")) {
			r->two = true;
			r->ranked = false;
		} else if (!strcmp(tok, "scan")) {
			r->two = false;
			r->ranked = false;
		} else if (!strcmp(tok, "one")) {
			r->two = true;
			r->ranked = true;
			r->one = true;
		} else if (num_tok(tok, "one", &r->one_slack, 0, 64)) {
			r->two = true;
			r->ranked = true;
			r->one = true;
		} else if (!strcmp(tok, "chase")) {
			r->chase = true;
		} else if (!strcmp(tok, "ranked")) {
			r->two = true;
			r->ranked = true;
		} else if (num_tok(tok, "norm", &r->pct, 0, 100)) {
			r->cost = COST_NORM;
		} else if (num_tok(tok, "q", &r->s, 1, 1000)) {
			r->cost = COST_NORM;
		} else if (num_tok(tok, "lsvc", &r->lead_svc, 1, 1000)) {
			continue;
		} else if (num_tok(tok, "lead", &r->lead, 1, 1000)) {
			near_alone(r);
		} else if (num_tok(tok, "ns", &r->near_s, 1, 1000)) {
			near_alone(r);
		} else if (num_tok(tok, "near", &r->near, 1, 100)) {
			if (r->cost == COST_KERNEL)
				r->cost = COST_NORM;
		} else if (num_tok(tok, "ramp", &r->ramp, 1, 100)) {
			if (r->cost == COST_KERNEL)
				r->cost = COST_NORM;
			r->pct = 100;
		} else if (num_tok(tok, "flat", &r->flat, 1, 1000) ||
			   num_tok(tok, "svc", &r->svc, 1, 1000)) {
			continue;
		} else if (!strcmp(tok, "sq")) {
			r->sq = true;
		} else if (num_tok(tok, "tie", &r->tie, 1, 100)) {
			if (r->cost == COST_KERNEL)
				r->cost = COST_NORM;
		} else if (num_tok(tok, "share", &r->share, 1, 1000)) {
			r->cost = COST_SHARE;
		} else {
			return -1;
		}
	}
	return 0;
}

/* nvme_lat_cost() with the variant's charge for nbar (base: above @base only). */
static u64 cost(const struct rule *r, const struct nlat_view *c, u64 base)
{
	u64 lat = c->lat_ns < NVME_LAT_MAX_NS ? c->lat_ns : NVME_LAT_MAX_NS;
	u32 nr = c->inflight < NVME_LAT_MAX_INFLIGHT ?
		 c->inflight : NVME_LAT_MAX_INFLIGHT;
	u32 nbar = c->nbar < NLAT_NBAR_MAX ? c->nbar : NLAT_NBAR_MAX;

	if (base > lat)
		base = lat;
	lat -= base;
	if (r->cost == COST_SHARE)
		return lat * (r->share + nr) + base * r->share;
	/* floor(nbar * 50 / 100) == nbar / 2: the header's, near */
	return mul_u64_u64_div_u64(lat * (r->s + nr), NLAT_NBAR_ONE,
				   (u64)r->s * NLAT_NBAR_ONE +
				   (u64)nbar * r->pct / 100) + base;
}

static bool near_by(const struct rule *r, u64 a, u64 b)
{
	return (a > b ? a - b : b - a) * r->near <= (a < b ? a : b);
}

/* nsvc: the latency per request of the load it was measured at */
static u64 svc_ns(const struct rule *r, const struct nlat_view *c)
{
	return mul_u64_u64_div_u64(c->lat_ns, NLAT_NBAR_ONE,
				   (u64)r->s * NLAT_NBAR_ONE + c->nbar);
}

/*
 * svc, lsvc: both measured under load (nbar), at latencies per request in
 * flight (@la / nbar, @lb / nbar) within 1/@n of the lower
 */
static bool per_request_near(u64 la, const struct nlat_view *a, u64 lb,
			     const struct nlat_view *b, unsigned int n)
{
	double x, y;

	if (!a->nbar || !b->nbar)
		return false;
	x = (double)la / a->nbar;
	y = (double)lb / b->nbar;
	return fabs(x - y) * n <= (x < y ? x : y);
}

/* nvme_lat_cmp() with the variant's cost. */
int rule_cmp(const struct rule *r, const struct sim_cand *sa,
	     const struct sim_cand *sb)
{
	const struct nlat_view *a = &sa->c, *b = &sb->c;
	int st;
	u64 ca, cb;

	if (r->cost == COST_KERNEL && !r->base)
		return nvme_lat_cmp(a, b);
	st = nvme_lat_cmp_state(a, b);
	if (st)
		return st;
	if (!a->lat_ns != !b->lat_ns)
		return a->lat_ns ? -1 : 1;
	if (a->lat_ns) {
		struct nlat_view ra, rb;
		struct rule h = *r;

		/* near: latencies within near %: the load charged as the kernel */
		if (r->near && (near_by(r, a->lat_ns, b->lat_ns) ||
				(r->near_svc &&
				 near_by(r, svc_ns(r, a), svc_ns(r, b))))) {
			h.pct = 50;
			if (r->near_s)
				h.s = r->near_s;
			r = &h;
		}
		/* lead: latencies within 2x, one path far ahead in flight */
		if (r->lead && a->lat_ns <= 2 * b->lat_ns &&
		    b->lat_ns <= 2 * a->lat_ns &&
		    (a->inflight > b->inflight + r->lead ||
		     b->inflight > a->inflight + r->lead) &&
		    (!r->lead_svc || per_request_near(a->lat_ns, a, b->lat_ns,
						      b, r->lead_svc)))
			return a->inflight < b->inflight ? -1 : 1;
		/* ramp: nvme_lat_charge() over a band from 1/flat to 1/ramp */
		if (r->ramp) {
			u64 la = nvme_lat_capped(a->lat_ns);
			u64 lb = nvme_lat_capped(b->lat_ns);
			u64 lo = la < lb ? la : lb;
			u64 d = la > lb ? la - lb : lb - la;
			u64 f0 = r->flat ? lo / r->flat : 0, f1 = lo / r->ramp;
			u64 w = f1 > f0 ? f1 - f0 : 0;

			d = d > f0 ? d - f0 : 0;
			/* svc: latencies per request in flight within 1/svc */
			if (r->svc && per_request_near(la, a, lb, b, r->svc))
				d = 0;
			if (r->sq && d < w)
				d = mul_u64_u64_div_u64(d, d, w);
			ra = *a;
			rb = *b;
			ra.nbar = nvme_lat_charge(a->nbar, d, w);
			rb.nbar = nvme_lat_charge(b->nbar, d, w);
			a = &ra;
			b = &rb;
		}
		ca = cost(r, a, sa->base);
		cb = cost(r, b, sb->base);
		/* tie: within tie % of the lower, the one with fewer in flight */
		if (r->tie && a->inflight != b->inflight &&
		    (ca > cb ? ca - cb : cb - ca) * 100 <=
		    (ca < cb ? ca : cb) * r->tie)
			return a->inflight < b->inflight ? -1 : 1;
		if (ca != cb)
			return ca < cb ? -1 : 1;
	}
	if (a->inflight != b->inflight)
		return a->inflight < b->inflight ? -1 : 1;
	return 0;
}

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static void rand_cand(u64 *x, struct nlat_view *c)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	c->lat_ns = (*x & 3) ? (*x >> 8) % (50 * MS) : 0;
	c->inflight = (*x >> 40) % 40;
	c->stalled = !((*x >> 50) & 15);
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	c->nbar = (*x & 7) ? (*x >> 8) % (40 * NLAT_NBAR_ONE) : *x >> 32;
}

/*
 * ramp4 must order exactly as the header does, and share8 (v1's
 * cost) as the header with nbar 0: the old rule is the new one measured
 * idle.
 */
bool rule_selftest(void)
{
	struct rule rk, s8, k;
	struct sim_cand sa = { 0 }, sb = { 0 };
	u64 x = 88172645463325252ULL;
	unsigned int i;

	rule_parse("kernel", &k);
	rule_parse("ramp4", &rk);
	rule_parse("share8", &s8);
	for (i = 0; i < 100000; i++) {
		struct nlat_view a, b;

		rand_cand(&x, &a);
		rand_cand(&x, &b);
		sa.c = a;
		sb.c = b;
		if (sign(rule_cmp(&rk, &sa, &sb)) != sign(rule_cmp(&k, &sa, &sb)))
			return false;
		sa.c.nbar = sb.c.nbar = 0;
		if (sign(rule_cmp(&s8, &sa, &sb)) != sign(rule_cmp(&k, &sa, &sb)))
			return false;
	}
	return true;
}

/*
 * The old nlat_probe_due(): while the cell is stale (or empty), one probe
 * per window, however long the last one takes to be folded.
 */
bool v1_probe_due(const struct cell *c, u64 now, const struct nlat_params *p)
{
	if (!nlat_stale(c->est.ewma, c->est.upd_ns, now, p))
		return false;
	return !c->probe_ns || (s64)(now - c->probe_ns) >= (s64)p->window_ns;
}
