// SPDX-License-Identifier: GPL-2.0
/*
 * The "latency" iopolicy of NVMe native multipath.
 *
 * Each I/O goes, among the usable ANA-optimized paths (non-optimized ones
 * only when there is none), to the path with the lowest expected latency
 * for the submitting CPU's NUMA node and the I/O's size class:
 *
 *	cost = lat_ns * (1 + inflight / 8)	(nvme-latency-cost.h)
 *
 * lat_ns is the EWMA that blk-nodelat keeps for the path's request queue,
 * inflight the requests started and not completed on it.  A path whose
 * estimate is missing or stale is granted probe I/Os by the tracker, one
 * per window and node, so a path that was slow is measured again.  The
 * choice is never cached: it is made per I/O from per-path numbers that
 * the completion side updates once per window.
 *
 * The tracker lives in blk-nodelat.ko and its state hangs off each path's
 * request queue, so no nvme structure changes and the CRCs of nvme-core's
 * exported symbols stay those of the distro kernel.  nvme-core does not
 * link against blk-nodelat: it takes the tracker's ops with
 * symbol_request() while it tracks at least one queue and puts them when
 * it tracks none, so "rmmod blk-nodelat" works once no subsystem uses the
 * policy.
 *
 * Locking: nvme_lat_mutex serialises attach and detach and the count of
 * tracked queues; it nests outside subsys->lock.  The I/O path takes no
 * lock: it reads the ops pointer under RCU.
 */

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include "nvme.h"
#include "nvme-latency.h"

static DEFINE_MUTEX(nvme_lat_mutex);
static const struct blk_nodelat_ops __rcu *nvme_lat_ops;
/* Queues we track plus transient users; the ops are held while > 0. */
static unsigned int nvme_lat_users;

static const struct blk_nodelat_ops *nvme_lat_ops_locked(void)
{
	return rcu_dereference_protected(nvme_lat_ops,
					 lockdep_is_held(&nvme_lat_mutex));
}

static int nvme_lat_get(void)
{
	const struct blk_nodelat_ops *ops;

	lockdep_assert_held(&nvme_lat_mutex);
	if (!nvme_lat_users) {
		ops = symbol_request(blk_nodelat_ops);
		if (!ops) {
			pr_warn("nvme: latency iopolicy needs blk-nodelat.ko, which cannot be loaded\n");
			return -ENOENT;
		}
		rcu_assign_pointer(nvme_lat_ops, ops);
	}
	nvme_lat_users++;
	return 0;
}

static void nvme_lat_put(void)
{
	lockdep_assert_held(&nvme_lat_mutex);
	if (WARN_ON_ONCE(!nvme_lat_users) || --nvme_lat_users)
		return;
	RCU_INIT_POINTER(nvme_lat_ops, NULL);
	/* nvme_lat_read() may still be calling into the module. */
	synchronize_rcu();
	symbol_put(blk_nodelat_ops);
}

/* Whether we track @ns; we are the tracker's only user of nvme queues. */
static bool nvme_lat_tracked(struct nvme_ns *ns)
{
	const struct blk_nodelat_ops *ops = nvme_lat_ops_locked();

	return ops && ops->tracked(ns->queue);
}

static int nvme_lat_attach(struct nvme_ns *ns)
{
	int ret;

	if (nvme_lat_tracked(ns))
		return 0;
	ret = nvme_lat_get();
	if (ret)
		return ret;
	ret = nvme_lat_ops_locked()->attach(ns->queue);
	if (ret) {
		dev_warn(disk_to_dev(ns->disk),
			 "cannot track latency: %d\n", ret);
		nvme_lat_put();
	}
	return ret;
}

static void nvme_lat_detach(struct nvme_ns *ns)
{
	if (!nvme_lat_tracked(ns))
		return;
	nvme_lat_ops_locked()->detach(ns->queue);
	nvme_lat_put();
}

/*
 * Attach or detach every path of @subsys.  subsys->lock keeps the lists of
 * heads and paths stable and each listed path alive: nvme_ns_remove()
 * unlinks a path under it before calling nvme_lat_remove_path().
 */
static int nvme_lat_update_paths(struct nvme_subsystem *subsys, bool attach)
{
	struct nvme_ns_head *head;
	struct nvme_ns *ns;
	int ret = 0;

	mutex_lock(&subsys->lock);
	list_for_each_entry(head, &subsys->nsheads, entry) {
		if (!head->disk)	/* not multipath: no path selection */
			continue;
		list_for_each_entry(ns, &head->list, siblings) {
			if (!attach) {
				nvme_lat_detach(ns);
				continue;
			}
			ret = nvme_lat_attach(ns);
			if (ret)
				goto out_unlock;
		}
	}
out_unlock:
	mutex_unlock(&subsys->lock);
	return ret;
}

/* Make sure no submitter of @subsys still reads a path's tracker. */
static void nvme_lat_sync(struct nvme_subsystem *subsys)
{
	struct nvme_ns_head *head;

	mutex_lock(&subsys->lock);
	list_for_each_entry(head, &subsys->nsheads, entry)
		synchronize_srcu(&head->srcu);
	mutex_unlock(&subsys->lock);
}

/**
 * nvme_lat_set_iopolicy() - set the iopolicy of @subsys
 * @subsys: the subsystem
 * @policy: the new NVME_IOPOLICY_*
 *
 * Entering the latency policy attaches the tracker to every path before
 * the policy is set; on failure nothing stays attached and the policy is
 * unchanged.  Leaving it sets the policy, waits until no submitter still
 * reads a tracker, then detaches.  Serialised against itself and against
 * paths coming and going by nvme_lat_mutex.
 *
 * Returns the previous policy or a negative errno.
 */
int nvme_lat_set_iopolicy(struct nvme_subsystem *subsys, int policy)
{
	int old, ret = 0;

	mutex_lock(&nvme_lat_mutex);
	old = READ_ONCE(subsys->iopolicy);
	if (policy == NVME_IOPOLICY_LAT && old != NVME_IOPOLICY_LAT) {
		/* Holds the ops even while the subsystem has no path yet. */
		ret = nvme_lat_get();
		if (ret)
			goto out_unlock;
		ret = nvme_lat_update_paths(subsys, true);
		if (ret)
			goto out_detach;
		nvme_lat_put();
	}
	WRITE_ONCE(subsys->iopolicy, policy);
	if (old == NVME_IOPOLICY_LAT && policy != NVME_IOPOLICY_LAT) {
		nvme_lat_sync(subsys);
		nvme_lat_update_paths(subsys, false);
	}
	mutex_unlock(&nvme_lat_mutex);
	return old;

out_detach:
	nvme_lat_update_paths(subsys, false);
	nvme_lat_put();
out_unlock:
	mutex_unlock(&nvme_lat_mutex);
	return ret;
}

/* A path was added to @ns's subsystem: track it if the policy wants it. */
void nvme_lat_add_path(struct nvme_ns *ns)
{
	mutex_lock(&nvme_lat_mutex);
	if (ns->head->disk &&
	    READ_ONCE(ns->ctrl->subsys->iopolicy) == NVME_IOPOLICY_LAT)
		nvme_lat_attach(ns);
	mutex_unlock(&nvme_lat_mutex);
}

/* @ns is unlinked from its head and no submitter sees it any more. */
void nvme_lat_remove_path(struct nvme_ns *ns)
{
	mutex_lock(&nvme_lat_mutex);
	nvme_lat_detach(ns);
	mutex_unlock(&nvme_lat_mutex);
}

/**
 * nvme_lat_read() - describe path @ns to the latency iopolicy
 * @ns: a path, under its head's SRCU
 * @node: the submitting CPU's node
 * @cls: the I/O's size class (nlat_size_class())
 * @c: filled with the path's estimate and in-flight count
 *
 * Returns true if the tracker granted this I/O as a probe of @ns.
 */
bool nvme_lat_read(struct nvme_ns *ns, int node, unsigned int cls,
		   struct nvme_lat_cand *c)
{
	const struct blk_nodelat_ops *ops;
	struct nlat_view v = { };

	/* nvme_lat_put() clears the pointer and waits for us to finish. */
	rcu_read_lock();
	ops = rcu_dereference(nvme_lat_ops);
	if (ops)
		ops->read(ns->queue, node, cls, &v);
	rcu_read_unlock();

	c->lat_ns = v.lat_ns;
	c->inflight = v.inflight;
	return v.probe;
}
