// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: a tracker's state for people.  debugfs: "nodelat/stats" in
 * the queue's directory, our own (we set no debugfs_attrs).  sysfs: what
 * stats shows, plus the stalled state and the probes granted, printed
 * into the user's attribute (blk_nodelat_info_ops.emit()).
 */

#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "nlat-internal.h"

/* One cell as debugfs and sysfs print it: age -1 while it has no estimate. */
struct nlat_row {
	u64	lat_ns;
	u64	samples;
	s64	age_msec;
};

static void nlat_row(const struct nlat_queue *nq, int node, unsigned int cls,
		     u64 now, struct nlat_row *r)
{
	const struct nlat_cell *c = &nq->cells[nlat_cell_idx(node, cls)];
	u64 ewma = READ_ONCE(c->est.ewma);
	u64 upd = READ_ONCE(c->est.upd_ns);

	r->lat_ns = nlat_ewma_ns(ewma);
	r->samples = READ_ONCE(c->est.samples);
	r->age_msec = -1;
	if (ewma)
		r->age_msec = div_u64(now > upd ? now - upd : 0, NSEC_PER_MSEC);
}

static int nlat_stats_show(struct seq_file *m, void *unused)
{
	struct nlat_queue *nq = m->private;
	u64 now = nlat_now(), done, fine;
	unsigned int cls;
	int node;

	done = READ_ONCE(nq->grp->done_ns);
	fine = ktime_get_ns();
	seq_printf(m, "inflight %d done_age_msec %lld\n",
		   nlat_infl_nr(atomic64_read(&nq->grp->inflight)),
		   done ? (s64)div_u64(fine > done ? fine - done : 0,
				       NSEC_PER_MSEC) : -1LL);
	seq_puts(m, "node class lat_nsec samples age_msec\n");
	for_each_node(node) {
		for (cls = 0; cls < NLAT_NR_CLASSES; cls++) {
			struct nlat_row r;

			nlat_row(nq, node, cls, now, &r);
			seq_printf(m, "%d %u %llu %llu %lld\n", node, cls,
				   r.lat_ns, r.samples, r.age_msec);
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nlat_stats);

/* Caller holds q->debugfs_mutex. */
static bool nlat_debugfs_present(struct request_queue *q)
{
	struct dentry *d = debugfs_lookup("nodelat", q->debugfs_dir);

	dput(d);
	return d;
}

/*
 * q->debugfs_mutex orders us against blk_register_queue() and
 * blk_unregister_queue(), which create and remove q->debugfs_dir with
 * everything in it, and against our own detach.  The tracker found here
 * cannot be freed while we hold the mutex with debugfs_dir set: detach
 * removes our files under it before the free, and teardown's exit hook
 * runs after blk_unregister_queue() has cleared debugfs_dir under it.
 */
void nlat_debugfs_register(struct request_queue *q)
{
	struct nlat_queue *nq;
	unsigned int noio;
	struct dentry *dir;

	mutex_lock(&q->debugfs_mutex);
	/* teardown may have frozen the queue: no reclaim into it */
	noio = memalloc_noio_save();
	if (!q->debugfs_dir || nlat_debugfs_present(q))
		goto out;
	rcu_read_lock();
	nq = nlat_lookup(q);
	rcu_read_unlock();
	if (nq) {
		dir = debugfs_create_dir("nodelat", q->debugfs_dir);
		debugfs_create_file("stats", 0400, dir, nq, &nlat_stats_fops);
	}
out:
	memalloc_noio_restore(noio);
	mutex_unlock(&q->debugfs_mutex);
}

void nlat_debugfs_unregister(struct request_queue *q)
{
	mutex_lock(&q->debugfs_mutex);
	if (q->debugfs_dir)
		debugfs_lookup_and_remove("nodelat", q->debugfs_dir);
	mutex_unlock(&q->debugfs_mutex);
}

/*
 * sysfs: the numbers of debugfs' stats plus stalled and probes, for online
 * nodes only.  A line is at most ~70 bytes, typically 25: the page holds 7
 * nodes at worst, 20 typically; sysfs_emit_at() cuts the rest off.
 */
int nlat_emit(struct request_queue *q, char *buf, int at)
{
	struct nlat_params p;
	struct nlat_queue *nq;
	u64 now, since;
	unsigned int cls;
	int node, inflight;

	rcu_read_lock();
	nq = nlat_lookup(q);
	if (!nq) {
		rcu_read_unlock();
		return -ENODEV;
	}
	nlat_params_get(&p);
	now = nlat_now();
	inflight = max(nlat_infl_nr(atomic64_read(&nq->grp->inflight)), 0);
	since = max(READ_ONCE(nq->grp->done_ns), READ_ONCE(nq->grp->busy_ns));
	at += sysfs_emit_at(buf, at, "inflight %d stalled %d probes %ld\n",
			    inflight,
			    nlat_stalled_for(inflight, since, now,
					     nlat_group_quiet(nq->grp, &p)),
			    atomic_long_read(&nq->probes));
	at += sysfs_emit_at(buf, at, "node class lat_nsec samples age_msec\n");
	for_each_online_node(node) {
		for (cls = 0; cls < NLAT_NR_CLASSES; cls++) {
			struct nlat_row r;

			nlat_row(nq, node, cls, now, &r);
			at += sysfs_emit_at(buf, at, "%d %u %llu %llu %lld\n",
					    node, cls, r.lat_ns, r.samples,
					    r.age_msec);
		}
	}
	rcu_read_unlock();
	return at;
}
