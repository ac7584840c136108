// SPDX-License-Identifier: GPL-2.0
/*
 * nlat-sim: the rule of the upstream "adaptive" series (Nilay Shroff,
 * 2025-2026; renamed "latency" in its v6, "adaptive" here so as not to be
 * taken for ours), modelled from its published description, not from its
 * code.  Per CPU, per path, per read/write:
 *
 *   done	a sample (completion - submission; over 1 s: dropped;
 *		per 512 bytes, unless --adaptive-norm 0) into the batch
 *   fold	every batch interval (15 s) since the path's first sample,
 *		at its next completion: the batch mean into the EWMA (7/8
 *		old; the first mean as it is), then the weights of all the
 *		head's paths for this CPU: (1 s / EWMA) scaled to 0..64 over
 *		the paths, at least 1; equal until every path has an EWMA
 *   pick	weighted round-robin: from the path after the last one
 *		picked, the first with a credit left spends it; none left:
 *		every path is refilled with its weight
 *
 * A CPU is a NUMA node of the model (one CPU per node, like the bench's
 * guest); completions are counted on the submitting CPU, as v6 forces.
 * In-flight counts play no part.  What is assumed beyond the description
 * is listed in docs/simulator.md.
 */
#include "sim.h"

#define AD_WEIGHT_MAX	64
#define AD_LAT_MAX_NS	SEC

static struct ad_set *ad_set(struct sim *s, const struct io *io)
{
	return &s->ad[io->ns][io->node][io->write];
}

/* The weights from the EWMAs: equal while a path has none. */
static void ad_weigh(struct ad_set *a, unsigned int nr)
{
	u64 score[MAXP], total = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (!a->ewma[i]) {
			for (i = 0; i < nr; i++)
				a->weight[i] = AD_WEIGHT_MAX / nr;
			return;
		}
		score[i] = SEC / a->ewma[i];
		total += score[i];
	}
	for (i = 0; i < nr; i++) {
		u64 w = total ? score[i] * AD_WEIGHT_MAX / total : 0;

		a->weight[i] = w ? w : 1;
	}
}

void adaptive_init(struct sim *s)
{
	unsigned int n, c, k;

	for (n = 0; n < MAXNS; n++)
		for (c = 0; c < MAXNODES; c++)
			for (k = 0; k < 2; k++)
				ad_weigh(&s->ad[n][c][k], s->sc->nr_paths);
}

unsigned int adaptive_pick(struct sim *s, const struct io *io)
{
	struct ad_set *a = ad_set(s, io);
	unsigned int nr = s->sc->nr_paths, i, p;

	for (;;) {
		for (i = 1; i <= nr; i++) {
			p = (a->cur + i) % nr;
			if (a->credits[p]) {
				a->credits[p]--;
				a->cur = p;
				return p;
			}
		}
		for (i = 0; i < nr; i++)
			a->credits[i] = a->weight[i];
	}
}

void adaptive_done(struct sim *s, const struct io *io, u64 lat, u64 now)
{
	struct ad_set *a = ad_set(s, io);
	unsigned int p = io->path;
	u64 sectors = io->bytes >> 9, mean;

	if (io->bogus)
		lat = NLAT_LAT_MAX_NS;
	if (lat > AD_LAT_MAX_NS)
		return;
	if (s->cfg->ad_norm && sectors > 1)
		lat /= sectors;
	if (!a->batch_ns[p])
		a->batch_ns[p] = now;
	a->sum[p] += lat;
	a->nr[p]++;
	if (now - a->batch_ns[p] < s->cfg->ad_batch_ns)
		return;
	mean = a->sum[p] / a->nr[p];
	if (!mean)
		mean = 1;
	a->ewma[p] = a->ewma[p] ? (a->ewma[p] * 7 + mean) / 8 : mean;
	a->sum[p] = a->nr[p] = 0;
	a->batch_ns[p] = now;
	ad_weigh(a, s->sc->nr_paths);
}
