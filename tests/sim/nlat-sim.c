// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: a deterministic discrete-event simulator of NVMe multipath path
 * selection, to compare the "latency" iopolicy with numa, round-robin and
 * queue-depth in seconds instead of VM hours.  It compiles the headers the
 * modules compile (nlat-math.h, blk-nodelat.h, nvme-latency-cost.h) and
 * models what blk-nodelat and nvme_latency_pick() do per I/O and per
 * window (model.c, policies.c).  The rule is the kernel's unless --rule
 * picks the old one or a variant (rules.c).  "adaptive" is the upstream
 * series' rule as published (adaptive.c), the strongest competitor.
 *
 *   nlat-sim [--rule R] [--csv]		the grid table
 *   nlat-sim --check [--rule R]		assert the goals of the latency policy
 *   nlat-sim --timeline SCENARIO		per-path share in 0.5 s buckets
 *   nlat-sim --jobs [--scenario S]		per job and path
 *   nlat-sim --inflight [--scenario S]	mean requests in flight per path
 *   nlat-sim --rules R1,R2,...		latency under each rule vs the others
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "sim.h"

static struct simcfg cfg;
static bool opt_csv;
static const char *opt_scen;
static unsigned int nr_runs;
static double sim_secs;		/* simulated, all runs */
static bool opt_reads;		/* --rules: also paths read per I/O routed */
static unsigned int opt_seeds = 1;	/* --check, --rules: seed, seed + 1, .. */
static unsigned int opt_bucket = 5;
static bool opt_tl_inflight;	/* --timeline --inflight: in flight, not share */	/* --timeline bucket, in BIN_NS (100 ms) */

static struct result res[NR_POL];

static void run(const struct scen *sc, enum policy pol, const struct simcfg *c,
		struct result *r)
{
	sim_run(sc, pol, c, r);
	nr_runs++;
	sim_secs += r->secs + (double)(c->warm_ns +
				       (pol == POL_ADAPT ? c->ad_pre_ns : 0)) / SEC;
}

static bool selected(const struct scen *sc)
{
	const char *p = opt_scen;
	size_t n = strlen(sc->name);

	if (!p)
		return true;
	while (*p) {
		if (!strncmp(p, sc->name, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return false;
}

static void fmt_share(char *buf, size_t len, const struct scen *sc,
		      const struct result *r, char sep)
{
	unsigned int i;
	int n = 0;

	buf[0] = 0;
	for (i = 0; i < sc->nr_paths && n < (int)len; i++)
		n += snprintf(buf + n, len - n, "%s%.1f", i ? (char[]){ sep, 0 } : "",
			      100 * r->share[i]);
}

/*
 * Ours (@a) against another policy (@b): MiB/s (IOPS unless sizes mix)
 * and p99.  Behind: < 0.97x the throughput or > 1.1x the p99 (the
 * tolerance of --check); ahead: not behind, and >= 1.03x the throughput
 * or <= 0.9x the p99; even otherwise.
 */
enum lead { BEHIND, EVEN, AHEAD };
static const char *const lead_names[] = { "behind", "even", "ahead" };

static enum lead lead(const struct result *a, const struct result *b,
		      double *tx, double *px)
{
	*tx = b->mibs ? a->mibs / b->mibs : 0;
	*px = b->p99_us ? a->p99_us / b->p99_us : 0;
	if (*tx < 0.97 || *px > 1.1)
		return BEHIND;
	if (*tx >= 1.03 || *px <= 0.9)
		return AHEAD;
	return EVEN;
}

/* The built-in policy with the most MiB/s. */
static enum policy best_builtin(const struct result *r)
{
	static const enum policy others[] = { POL_RR, POL_QD };
	enum policy best = POL_NUMA;
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (r[others[i]].mibs > r[best].mibs)
			best = others[i];
	return best;
}

static void print_header(void)
{
	if (opt_csv) {
		printf("scenario,policy,iops,mibs,p50_us,p99_us,p999_us,probe_pct,share_pct,move_s\n");
		return;
	}
	printf("# nlat-sim: rule %s; window %llu us, history %u/1024, min_samples %u, stale_windows %u; tick %llu us; noise +-%u%%; %.0f s after %.0f s warm-up\n",
	       cfg.rule.name, (unsigned long long)(cfg.p.window_ns / US),
	       cfg.p.hist_w, cfg.p.min_samples, cfg.p.stale_windows,
	       (unsigned long long)(cfg.tick_ns / US), cfg.noise_pct,
	       (double)cfg.run_ns / SEC, (double)cfg.warm_ns / SEC);
	printf("%-10s %-12s %8s %8s %8s %8s %9s %7s %-23s %6s\n", "scenario",
	       "policy", "IOPS", "MiB/s", "p50_us", "p99_us", "p99.9_us",
	       "probe%", "share% p1/p2/..", "move_s");
}

static void print_row(const struct scen *sc, enum policy pol,
		      const struct result *r)
{
	char share[64], probe[16], move[16];

	fmt_share(share, sizeof(share), sc, r, opt_csv ? ';' : '/');
	if (pol == POL_LAT)
		snprintf(probe, sizeof(probe), "%.3f", r->probe_pct);
	else
		strcpy(probe, opt_csv ? "" : "-");
	if (sc->flags & F_RESTORE)
		snprintf(move, sizeof(move), "%.2f", r->move_s);
	else if (sc->flags & (F_STEP | F_FLIP) && r->move_s >= 0)
		snprintf(move, sizeof(move), "%.1f", r->move_s);
	else if (sc->flags & (F_STEP | F_FLIP))
		strcpy(move, "never");
	else
		strcpy(move, opt_csv ? "" : "-");
	if (opt_csv)
		printf("%s,%s,%.0f,%.2f,%.0f,%.0f,%.0f,%s,%s,%s\n", sc->name,
		       policy_names[pol], r->iops, r->mibs, r->p50_us, r->p99_us,
		       r->p999_us, probe, share, move);
	else
		printf("%-10s %-12s %8.0f %8.1f %8.0f %8.0f %9.0f %7s %-23s %6s\n",
		       sc->name, policy_names[pol], r->iops, r->mibs, r->p50_us,
		       r->p99_us, r->p999_us, probe, share, move);
}

/* Every policy; adaptive too unless @ad is false (then its result is 0). */
static void run_pols(const struct scen *sc, const struct simcfg *c, bool ad)
{
	enum policy p;

	for (p = 0; p < NR_POL; p++) {
		if (p == POL_ADAPT && !ad)
			memset(&res[p], 0, sizeof(res[p]));
		else
			run(sc, p, c, &res[p]);
	}
}

static void run_all(const struct scen *sc, const struct simcfg *c)
{
	run_pols(sc, c, true);
}

struct lead_row {
	const struct scen	*sc;
	enum policy		best;
	enum lead		lb, la;
	double			btx, bpx, atx, apx;
};

static void print_leads(const struct lead_row *l, unsigned int nr)
{
	unsigned int i, k, n[2][3] = { { 0 } };
	const char *what[] = { "the best built-in", "adaptive" };

	printf("#\n# Where latency (ours) leads: MiB/s and p99 as a ratio of the best built-in's (most MiB/s)\n");
	printf("# and of adaptive's; behind: < 0.97x MiB/s or > 1.1x p99; ahead: else >= 1.03x MiB/s or <= 0.9x p99\n");
	printf("%-11s %-12s %7s %7s %-7s | %7s %7s  (adaptive)\n", "scenario",
	       "best", "MiB/s_x", "p99_x", "", "MiB/s_x", "p99_x");
	for (i = 0; i < nr; i++) {
		const char *note = l[i].sc->flags & F_CLAIM ? "adaptive's claim" :
				   l[i].sc->flags & F_OPEN ? "open goal" : NULL;

		printf("%-11s %-12s %7.3f %7.3f %-7s | %7.3f %7.3f %s%*s%s%s\n",
		       l[i].sc->name, policy_names[l[i].best], l[i].btx,
		       l[i].bpx, lead_names[l[i].lb], l[i].atx, l[i].apx,
		       lead_names[l[i].la],
		       note ? 7 - (int)strlen(lead_names[l[i].la]) : 0, "",
		       note ? " " : "", note ? note : "");
		n[0][l[i].lb]++;
		n[1][l[i].la]++;
	}
	for (k = 0; k < 2; k++) {
		printf("# latency against %s: ahead on %u, even on %u, behind on %u",
		       what[k], n[k][AHEAD], n[k][EVEN], n[k][BEHIND]);
		const char *sep = ": ";

		for (i = 0; i < nr; i++) {
			if ((k ? l[i].la : l[i].lb) != BEHIND)
				continue;
			printf("%s%s", sep, l[i].sc->name);
			sep = " ";
		}
		printf("\n");
	}
}

static int do_grid(void)
{
	static struct lead_row leads[64];
	unsigned int i, nr = 0;
	enum policy p;

	print_header();
	for (i = 0; i < nr_scenarios; i++) {
		struct lead_row *l = &leads[nr];

		if (!selected(&scenarios[i]))
			continue;
		run_all(&scenarios[i], &cfg);
		for (p = 0; p < NR_POL; p++)
			print_row(&scenarios[i], p, &res[p]);
		if (nr < 64) {
			l->sc = &scenarios[i];
			l->best = best_builtin(res);
			l->lb = lead(&res[POL_LAT], &res[l->best], &l->btx, &l->bpx);
			l->la = lead(&res[POL_LAT], &res[POL_ADAPT], &l->atx, &l->apx);
			nr++;
		}
	}
	if (!opt_csv) {
		printf("# share: I/O completed per path; move_s: step: s from 5 s until path 2 has >= 90%% of every 100 ms;\n");
		printf("#   flip: mean s after a flip until the fast path has >= 90%% of every later 100 ms of the period (never: 2 s);\n");
		printf("#   restore*: path 1's share of the I/O issued in the last 3 s (restored at 6 s)\n");
		printf("# adaptive: the upstream series' rule as published, %.0f s batches, run %.0f s before t = 0 to settle,\n",
		       (double)cfg.ad_batch_ns / SEC, (double)cfg.ad_pre_ns / SEC);
		printf("#   then measured %.0f s (flip, step, restore*: as the others)%s\n",
		       (double)cfg.ad_run_ns / SEC,
		       cfg.ad_norm ? "" : "; samples not per 512 bytes");
		print_leads(leads, nr);
	}
	return 0;
}

/* The goals of the issue for @lat, given the other policies in @r. */
struct verdict {
	enum policy	best;
	double		iops_x, p99_x, fast_iops_x, fast_p99_x, ad_x, ad_p99_x;
	enum policy	fio_best;	/* F_FIO: of round-robin, queue-depth */
	double		fio_x;
	bool		ok;
	char		why[160];
};

static void judge(const struct scen *sc, const struct result *r,
		  const struct result *lat, struct verdict *v)
{
	static const enum policy others[] = { POL_NUMA, POL_RR, POL_QD };
	const struct result *b, *f = &r[POL_FAST];
	unsigned int i;
	int n = 0;

	memset(v, 0, sizeof(*v));
	v->best = POL_NUMA;
	for (i = 1; i < 3; i++)
		if (r[others[i]].iops > r[v->best].iops)
			v->best = others[i];
	b = &r[v->best];
	v->iops_x = b->iops ? lat->iops / b->iops : 0;
	v->p99_x = b->p99_us ? lat->p99_us / b->p99_us : 0;
	v->fast_iops_x = f->iops ? lat->iops / f->iops : 0;
	v->fast_p99_x = f->p99_us ? lat->p99_us / f->p99_us : 0;
#define WHY(...) (n += snprintf(v->why + n, sizeof(v->why) - n, __VA_ARGS__))
	/* a black hole: what is parked there is lost to any policy that used it */
	if (v->iops_x < 0.97 && !(sc->flags & F_HOLE))
		WHY(" IOPS<0.97x%s", policy_names[v->best]);
	if (v->p99_x > 1.1 && !(sc->flags & F_HOLE))
		WHY(" p99>1.1x%s", policy_names[v->best]);
	if (sc->flags & F_ASYM) {
		if (v->fast_iops_x < 0.97)
			WHY(" IOPS<0.97xfast-only");
		if (v->fast_p99_x > 1.2)
			WHY(" p99>1.2xfast-only");
		if (lat->probe_pct > 1)
			WHY(" probes>1%%");
	}
	if (sc->flags & F_FIO) {
		v->fio_best = r[POL_QD].fio_mibs > r[POL_RR].fio_mibs ?
			      POL_QD : POL_RR;
		b = &r[v->fio_best];
		v->fio_x = b->fio_mibs > 0 ? lat->fio_mibs / b->fio_mibs : 0;
		if (v->fio_x < 0.97)
			WHY(" fio MiB/s<0.97x%s", policy_names[v->fio_best]);
	}
	if (sc->flags & F_SLOWLINK &&
	    lat->inflight[sc->nr_paths - 1] >
	    r[POL_QD].inflight[sc->nr_paths - 1] * 1.1)
		WHY(" slow link %.1f in flight > queue-depth's %.1f",
		    lat->inflight[sc->nr_paths - 1],
		    r[POL_QD].inflight[sc->nr_paths - 1]);
	if (sc->flags & F_RESTORE && lat->move_s < 0.4)
		WHY(" path 1 share %.2f after restore", lat->move_s);
	if (sc->flags & F_HOLE && lat->parked > 1)
		WHY(" %llu I/Os parked in the black hole",
		    (unsigned long long)lat->parked);
	if (sc->flags & F_CLAIM &&
	    lead(lat, &r[POL_ADAPT], &v->ad_x, &v->ad_p99_x) != AHEAD)
		WHY(" not ahead of adaptive");
#undef WHY
	v->ok = !n;
}

static int do_check(void)
{
	unsigned int i, bad = 0, nr = 0, open = 0, k;
	struct simcfg c = cfg;

	printf("# nlat-sim --check, rule %s: latency >= 0.97x IOPS and p99 <= 1.1x of the best of numa/round-robin/queue-depth;\n",
	       cfg.rule.name);
	printf("#   delay-asymmetric (d*): also >= 0.97x IOPS, p99 <= 1.2x of fast-only, probes <= 1%% of I/O;\n");
	printf("#   restore*: path 1's share of the last 3 s >= 0.4\n");
	printf("#   hole*: at most one I/O parked in the black hole (IOPS and p99 not judged)\n");
	printf("#   bw4*: also >= 0.97x the MiB/s of round-robin or queue-depth as fio counts it (after the end, the drain)\n");
	printf("#   d*: also ahead of adaptive (the published rule, whose own claim they are): >= 1.03x its MiB/s\n");
	printf("#   or <= 0.9x its p99, neither < 0.97x nor > 1.1x; OPEN: a goal still open (issue 29), not counted\n");
	for (i = 0; i < nr_scenarios; i++) {
		const struct scen *sc = &scenarios[i];

		if (!selected(sc))
			continue;
		for (k = 0; k < opt_seeds; k++) {
			struct verdict v;

			c.seed = cfg.seed + k;
			/* adaptive only where judge() reads it */
			run_pols(sc, &c, sc->flags & F_CLAIM);
			judge(sc, res, &res[POL_LAT], &v);
			printf("%s %-10s", sc->flags & F_OPEN ? "OPEN" :
			       v.ok ? "PASS" : "FAIL", sc->name);
			if (opt_seeds > 1)
				printf(" seed %-4llu", (unsigned long long)c.seed);
			printf(" latency %7.0f IOPS p99 %7.0f us | %-11s %7.0f IOPS (%.3fx) p99 %7.0f us (%.3fx)",
			       res[POL_LAT].iops, res[POL_LAT].p99_us,
			       policy_names[v.best], res[v.best].iops, v.iops_x,
			       res[v.best].p99_us, v.p99_x);
			if (sc->flags & F_ASYM)
				printf(" | fast-only %7.0f (%.3fx) p99 %5.0f (%.3fx) | probes %.3f%%",
				       res[POL_FAST].iops, v.fast_iops_x,
				       res[POL_FAST].p99_us, v.fast_p99_x,
				       res[POL_LAT].probe_pct);
			if (sc->flags & F_RESTORE)
				printf(" | path 1 share %.2f", res[POL_LAT].move_s);
			if (sc->flags & F_HOLE)
				printf(" | parked %llu (queue-depth %llu)",
				       (unsigned long long)res[POL_LAT].parked,
				       (unsigned long long)res[POL_QD].parked);
			if (sc->flags & F_FIO)
				printf(" | fio %.1f MiB/s, %s %.1f (%.3fx)",
				       res[POL_LAT].fio_mibs,
				       policy_names[v.fio_best],
				       res[v.fio_best].fio_mibs, v.fio_x);
			if (sc->flags & F_CLAIM)
				printf(" | adaptive %7.0f IOPS (%.3fx MiB/s) p99 %7.0f (%.3fx)",
				       res[POL_ADAPT].iops, v.ad_x,
				       res[POL_ADAPT].p99_us, v.ad_p99_x);
			printf("%s%s\n", v.ok ? "" : " --", v.why);
			if (sc->flags & F_OPEN) {
				open++;
				continue;
			}
			bad += !v.ok;
			nr++;
		}
	}
	printf("check: rule %s: %u passed, %u failed, %u open\n",
	       cfg.rule.name, nr - bad, bad, open);
	return bad ? 1 : 0;
}

/*
 * Latency under each rule of @list against the other policies, one line
 * per scenario: the worst over --seeds seeds.
 */
static int do_rules(const char *list)
{
	static struct simcfg rc[16];
	static struct result lat;
	unsigned int nr = 0, i, k, n, fails[16] = { 0 };
	char buf[512], *tok, *save;
	struct simcfg base = cfg;

	if (strlen(list) >= sizeof(buf))
		return 2;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok && nr < 16;
	     tok = strtok_r(NULL, ",", &save), nr++) {
		rc[nr] = cfg;
		if (rule_parse(tok, &rc[nr].rule)) {
			fprintf(stderr, "nlat-sim: bad rule '%s'\n", tok);
			return 2;
		}
	}
	printf("# latency IOPS / best of numa,rr,qd  and  p99 / its p99; d*: min over that and fast-only (IOPS) / max (p99);\n");
	printf("#   worst of %u seed(s) from %llu; * = the check fails (n = for n seeds)\n",
	       opt_seeds, (unsigned long long)cfg.seed);
	for (k = 0; k < nr; k++)
		printf("#   R%u = %s\n", k + 1, rc[k].rule.name);
	printf("%-10s", "scenario");
	for (k = 0; k < nr; k++)
		printf(" %8s%-11u", "R", k + 1);
	printf("\n");
	for (i = 0; i < nr_scenarios; i++) {
		const struct scen *sc = &scenarios[i];
		double ix[16], px[16], rx[16];
		unsigned int nbad[16] = { 0 };

		if (!selected(sc))
			continue;
		for (k = 0; k < nr; k++)
			ix[k] = 1e9, px[k] = 0, rx[k] = 0;
		for (n = 0; n < opt_seeds; n++) {
			base.seed = cfg.seed + n;
			/* adaptive only where judge() reads it */
			for (k = 0; k < NR_POL; k++)
				if (k != POL_LAT &&
				    (k != POL_ADAPT || sc->flags & F_CLAIM))
					run(sc, k, &base, &res[k]);
			for (k = 0; k < nr; k++) {
				struct verdict v;
				double a, b;

				rc[k].seed = base.seed;
				run(sc, POL_LAT, &rc[k], &lat);
				judge(sc, res, &lat, &v);
				a = v.iops_x;
				b = v.p99_x;
				if (sc->flags & F_ASYM) {
					a = a < v.fast_iops_x ? a : v.fast_iops_x;
					b = b > v.fast_p99_x ? b : v.fast_p99_x;
				}
				ix[k] = a < ix[k] ? a : ix[k];
				px[k] = b > px[k] ? b : px[k];
				nbad[k] += !v.ok;
				if (lat.picks &&
				    (double)lat.reads / lat.picks > rx[k])
					rx[k] = (double)lat.reads / lat.picks;
			}
		}
		printf("%-10s", sc->name);
		for (k = 0; k < nr; k++) {
			char mark[16] = "";

			if (nbad[k] && opt_seeds > 1)
				snprintf(mark, sizeof(mark), "*%u", nbad[k]);
			else if (nbad[k])
				strcpy(mark, "*");
			if (opt_reads)
				printf("  %6.3f %6.3f %5.2f %-3s", ix[k], px[k],
				       rx[k], mark);
			else
				printf("  %6.3f %6.3f %-3s", ix[k], px[k],
				       mark);
			fails[k] += nbad[k];
		}
		printf("\n");
	}
	printf("%-10s", "failures");
	for (k = 0; k < nr; k++)
		printf(" %19u", fails[k]);
	printf("\n");
	return 0;
}

/* Per job: IOPS, p99, and per path its share and mean latency. */
static int do_jobs(void)
{
	unsigned int i, j, k;
	enum policy p;

	printf("# per job (rule %s): IOPS, MiB/s, p99_us; per path: share %% of the job's I/O @ mean latency us\n",
	       cfg.rule.name);
	for (i = 0; i < nr_scenarios; i++) {
		const struct scen *sc = &scenarios[i];

		if (!selected(sc))
			continue;
		run_all(sc, &cfg);
		for (p = 0; p < NR_POL; p++) {
			for (j = 0; j < sc->nr_jobs; j++) {
				const struct result *r = &res[p];
				u64 n = 0;

				for (k = 0; k < sc->nr_paths; k++)
					n += r->job_ios[j][k];
				printf("%-11s %-12s job %u (%3uk QD%-2u) %8.0f %7.1f %8.0f |",
				       sc->name, policy_names[p], j,
				       sc->job[j].bs / 1024, sc->job[j].qd,
				       n / r->secs,
				       n * sc->job[j].bs / r->secs / (1024.0 * 1024.0),
				       hist_pct(r->job_hist[j], n, 99) / 1000);
				for (k = 0; k < sc->nr_paths; k++)
					printf(" %5.1f @ %7.0f", n ? 100.0 * r->job_ios[j][k] / n : 0,
					       r->job_ios[j][k] ? (double)r->job_lat_ns[j][k] /
					       r->job_ios[j][k] / US : 0);
				printf("\n");
			}
		}
	}
	return 0;
}

/*
 * The swing: the RMS, over the measured BIN_NS bins and the paths, of a
 * bin's mean in flight on a path less that path's mean over the run (0
 * when every path holds its load, as queue-depth on equal links).  A bin
 * of 100 ms stands for the lab's sampler, which reads an instant each
 * second (tests/bench/field's inflight.csv, the same RMS over 2-11 s).
 */
static double swing(const struct result *r, const struct scen *sc)
{
	unsigned int b, i, n = 0;
	double sum = 0;

	for (b = cfg.warm_ns / BIN_NS; b < r->nr_bins; b++)
		for (i = 0; i < sc->nr_paths; i++) {
			double f = r->ibins[b][i] / BIN_NS - r->inflight[i];

			sum += f * f;
			n++;
		}
	return n ? sqrt(sum / n) : 0;
}

/*
 * Per policy: MiB/s, p99, the swing, MiB/s as fio's time-based run
 * counts it (the drain after the end included) and that drain, and the
 * mean requests in flight on each path.
 */
static int do_inflight(void)
{
	unsigned int i, k;
	enum policy p;

	printf("# mean requests in flight per path (rule %s)\n", cfg.rule.name);
	printf("%-11s %-12s %8s %8s %6s %8s %7s  %s\n", "scenario", "policy",
	       "MiB/s", "p99_us", "swing", "fioMiB/s", "drain_s",
	       "in flight p1/p2/..");
	for (i = 0; i < nr_scenarios; i++) {
		const struct scen *sc = &scenarios[i];

		if (!selected(sc))
			continue;
		run_all(sc, &cfg);
		for (p = 0; p < NR_POL; p++) {
			printf("%-11s %-12s %8.1f %8.0f %6.1f %8.1f %7.2f ",
			       sc->name, policy_names[p], res[p].mibs,
			       res[p].p99_us, swing(&res[p], sc),
			       res[p].fio_mibs, res[p].drain_s);
			for (k = 0; k < sc->nr_paths; k++)
				printf("%s%.1f", k ? "/" : " ", res[p].inflight[k]);
			printf("\n");
		}
	}
	return 0;
}

static int do_timeline(const char *name)
{
	const struct scen *sc = scen_find(name);
	unsigned int b, i, per = opt_bucket;
	enum policy p;

	if (!sc) {
		fprintf(stderr, "nlat-sim: no scenario '%s' (--list)\n", name);
		return 2;
	}
	run_all(sc, &cfg);
	printf("# %s: %s; rule %s\n# %s per path (p1/p2/..) in %.1f s buckets\n",
	       sc->name, sc->desc, cfg.rule.name,
	       opt_tl_inflight ? "mean requests in flight" :
				 "share % of I/O issued",
	       (double)per * BIN_NS / SEC);
	printf("%6s", "t_s");
	for (p = 0; p < NR_POL; p++)
		printf(" %15s", policy_names[p]);
	printf("\n");
	for (b = 0; b + per <= res[0].nr_bins; b += per) {
		printf("%6.1f", (double)b * BIN_NS / SEC);
		for (p = 0; p < NR_POL; p++) {
			u64 n[MAXP] = { 0 }, all = 0;
			char buf[64];
			int len = 0;

			for (i = 0; i < sc->nr_paths; i++) {
				unsigned int k;

				for (k = b; k < b + per; k++)
					n[i] += res[p].bins[k][i];
				all += n[i];
			}
			buf[0] = 0;
			for (i = 0; i < sc->nr_paths; i++) {
				double f = 0;
				unsigned int k;

				for (k = b; k < b + per; k++)
					f += res[p].ibins[k][i];
				f /= (double)per * BIN_NS;
				if (opt_tl_inflight)
					len += snprintf(buf + len,
							sizeof(buf) - len,
							"%s%.0f", i ? "/" : "", f);
				else
					len += snprintf(buf + len,
							sizeof(buf) - len,
							"%s%.0f", i ? "/" : "",
							all ? 100.0 * n[i] / all : 0);
			}
			printf(" %15s", buf);
		}
		printf("\n");
	}
	return 0;
}

/* --seeds N runs N streams: adjacent seeds must not start as one. */
static bool seed_selftest(void)
{
	unsigned int i, k;

	for (i = 0; i < nr_scenarios; i++)
		for (k = 0; k < 100; k++)
			if (sim_rng_state(cfg.seed + k, scenarios[i].name) ==
			    sim_rng_state(cfg.seed + k + 1, scenarios[i].name))
				return false;
	return true;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: nlat-sim [options]\n"
"  (none)              the grid table: every scenario x policy\n"
"  --check             assert the goals of the latency policy; exit 1 on failure\n"
"  --timeline SCEN     per-path share over time (--bucket N: N x 100 ms, 5)\n"
"                      (with --inflight: mean requests in flight per path)\n"
"  --jobs              per job: IOPS, p99, share and mean latency per path\n"
"  --inflight          per policy: MiB/s, p99, mean requests in flight per path\n"
"  --rules R1,R2,..    latency under each rule against the other policies\n"
"  --reads             with --rules: also the paths read per I/O routed (worst seed)\n"
"  --rule R            rule of the latency policy (default kernel; see rules.c)\n"
"  --scenario S1,S2    only these scenarios     --list   list the scenarios\n"
"  --csv               the grid as CSV\n"
"  --secs N --warm N   measured seconds (10) after warm-up seconds (1)\n"
"  --hz N              tick of the coarse clock and timers (250; 0: exact)\n"
"  --window-us N --history-pct N --min-samples N --stale-windows N   tracker knobs\n"
"  --noise PCT         every delay and service time +- PCT %% (10)\n"
"  --adaptive-batch-s N --adaptive-pre-s N --adaptive-secs N --adaptive-norm 0|1\n"
"                      adaptive: batch interval (15), run before t = 0 (60),\n"
"                      measured seconds where no delay is scheduled (60),\n"
"                      samples per 512 bytes (1)\n"
"  --seed N            first seed (--seeds N: --check and --rules over N seeds)\n");
}

static unsigned long num(const char *s, unsigned long min, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "nlat-sim: bad number '%s' (%lu .. %lu)\n", s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "jobs", no_argument, NULL, 'j' },
		{ "inflight", no_argument, NULL, 'i' },
		{ "csv", no_argument, NULL, 'C' },
		{ "rule", required_argument, NULL, 'r' },
		{ "rules", required_argument, NULL, 'R' },
		{ "timeline", required_argument, NULL, 't' },
		{ "scenario", required_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "secs", required_argument, NULL, 'S' },
		{ "warm", required_argument, NULL, 'W' },
		{ "hz", required_argument, NULL, 'z' },
		{ "seed", required_argument, NULL, 'e' },
		{ "noise", required_argument, NULL, 'n' },
		{ "seeds", required_argument, NULL, 'N' },
		{ "reads", no_argument, NULL, 20 },
		{ "bucket", required_argument, NULL, 'b' },
		{ "window-us", required_argument, NULL, 1 },
		{ "history-pct", required_argument, NULL, 2 },
		{ "min-samples", required_argument, NULL, 3 },
		{ "stale-windows", required_argument, NULL, 4 },
		{ "adaptive-batch-s", required_argument, NULL, 5 },
		{ "adaptive-pre-s", required_argument, NULL, 6 },
		{ "adaptive-norm", required_argument, NULL, 7 },
		{ "adaptive-secs", required_argument, NULL, 8 },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *rule = "kernel", *timeline = NULL, *rules = NULL;
	struct timespec t0, t1;
	bool check = false, jobs = false, inflight = false;
	unsigned long hz = 250;
	unsigned int i;
	int c, ret;

	cfg.warm_ns = 1 * SEC;
	cfg.run_ns = 10 * SEC;
	cfg.seed = 0x6e6c6174;
	cfg.noise_pct = 10;
	cfg.ad_batch_ns = 15 * SEC;
	cfg.ad_pre_ns = 60 * SEC;
	cfg.ad_run_ns = 60 * SEC;
	cfg.ad_norm = true;
	cfg.p.window_ns = (u64)NLAT_WINDOW_USEC_DEF * US;
	cfg.p.hist_w = nlat_pct_to_w(NLAT_HISTORY_PCT_DEF);
	cfg.p.min_samples = NLAT_MIN_SAMPLES_DEF;
	cfg.p.stale_windows = NLAT_STALE_WINDOWS_DEF;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': check = true; break;
		case 'j': jobs = true; break;
		case 'i': inflight = true; break;
		case 'C': opt_csv = true; break;
		case 'r': rule = optarg; break;
		case 'R': rules = optarg; break;
		case 't': timeline = optarg; break;
		case 's': opt_scen = optarg; break;
		case 20: opt_reads = true; break;
		case 'S': cfg.run_ns = num(optarg, 1, 90) * SEC; break;
		case 'W': cfg.warm_ns = num(optarg, 0, 9) * SEC; break;
		case 'z': hz = num(optarg, 0, 10000); break;
		case 'e': cfg.seed = num(optarg, 0, ~0UL); break;
		case 'n': cfg.noise_pct = num(optarg, 0, 90); break;
		case 'N': opt_seeds = num(optarg, 1, 100); break;
		case 'b': opt_bucket = num(optarg, 1, 100); break;
		case 1:
			cfg.p.window_ns = num(optarg, NLAT_WINDOW_USEC_MIN,
					      NLAT_WINDOW_USEC_MAX) * US;
			break;
		case 2:
			cfg.p.hist_w = nlat_pct_to_w(num(optarg, NLAT_HISTORY_PCT_MIN,
							 NLAT_HISTORY_PCT_MAX));
			break;
		case 3:
			cfg.p.min_samples = num(optarg, NLAT_MIN_SAMPLES_MIN,
						NLAT_MIN_SAMPLES_MAX);
			break;
		case 4:
			cfg.p.stale_windows = num(optarg, NLAT_STALE_WINDOWS_MIN,
						  NLAT_STALE_WINDOWS_MAX);
			break;
		case 5: cfg.ad_batch_ns = num(optarg, 0, 600) * SEC; break;
		case 6: cfg.ad_pre_ns = num(optarg, 0, 600) * SEC; break;
		case 7: cfg.ad_norm = num(optarg, 0, 1); break;
		case 8: cfg.ad_run_ns = num(optarg, 1, 90) * SEC; break;
		case 'l':
			for (i = 0; i < nr_scenarios; i++)
				printf("%-10s %s\n", scenarios[i].name,
				       scenarios[i].desc);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	if ((cfg.warm_ns + cfg.run_ns) / BIN_NS > MAXBINS) {
		fprintf(stderr, "nlat-sim: at most %llu s in all\n",
			(unsigned long long)(MAXBINS * BIN_NS / SEC));
		return 2;
	}
	cfg.tick_ns = hz ? SEC / hz : 0;
	if (rule_parse(rule, &cfg.rule)) {
		fprintf(stderr, "nlat-sim: bad rule '%s' (see rules.c)\n", rule);
		return 2;
	}
	if (!seed_selftest()) {
		fprintf(stderr, "nlat-sim: seeds %llu.. and the next run the same streams\n",
			(unsigned long long)cfg.seed);
		return 2;
	}
	if (!rule_selftest()) {
		fprintf(stderr, "nlat-sim: ramp4 or share8 does not order as nvme_lat_cmp()\n");
		return 2;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	opt_tl_inflight = timeline && inflight;
	if (timeline)
		ret = do_timeline(timeline);
	else if (rules)
		ret = do_rules(rules);
	else if (check)
		ret = do_check();
	else if (jobs)
		ret = do_jobs();
	else if (inflight)
		ret = do_inflight();
	else
		ret = do_grid();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fflush(stdout);
	fprintf(stderr, "nlat-sim: %u runs, %.0f s simulated in %.1f s\n", nr_runs,
		sim_secs,
		(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return ret;
}
