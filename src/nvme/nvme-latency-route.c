// SPDX-License-Identifier: GPL-2.0
/*
 * The latency iopolicy's route of each head: per (node, class) the path
 * ranked best by a whole scan at most once per NVME_LAT_RANK_JIFFIES, and
 * the challenger read last, so that an I/O in between reads two paths
 * whatever their number (nvme_latency_two()).
 *
 * A route is made when its head gains a path and freed, after an RCU grace
 * period, when the head loses its last one.  Its path pointers follow the
 * rules of head->current_path[]: a submitter stores only a path it read
 * enabled, inside head->srcu; nvme_ns_remove() disables the path and
 * waits for head->srcu before unlinking it, then nvme_lat_route_forget()
 * clears the pointers and waits again, so no submitter holds one when the
 * path is freed.
 */

#include <linux/error-injection.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include "nvme.h"
#include "nvme-latency.h"

#define NVME_LAT_ROUTE_BITS	8

struct nvme_lat_route {
	struct hlist_node	node;		/* nvme_lat_routes, by head */
	struct nvme_ns_head	*head;
	struct rcu_head		rcu;
	struct nvme_lat_slot	slot[];		/* [node][class] */
};

static DEFINE_HASHTABLE(nvme_lat_routes, NVME_LAT_ROUTE_BITS);
/* Adds and removals only; submitters look up under RCU. */
static DEFINE_SPINLOCK(nvme_lat_route_lock);

static struct nvme_lat_route *nvme_lat_route_find(struct nvme_ns_head *head)
{
	struct nvme_lat_route *r;

	hash_for_each_possible_rcu(nvme_lat_routes, r, node, (unsigned long)head)
		if (r->head == head)
			return r;
	return NULL;
}

/**
 * nvme_lat_slot() - @head's route for I/O of class @cls from @node
 *
 * Under rcu_read_lock() (the route's lifetime) and @head's SRCU (its
 * paths').  NULL if @head has none: the caller scans every path.
 */
struct nvme_lat_slot *nvme_lat_slot(struct nvme_ns_head *head, int node,
				    unsigned int cls)
{
	struct nvme_lat_route *r = nvme_lat_route_find(head);

	if (!r)
		return NULL;
	return &r->slot[node * NLAT_NR_CLASSES + cls];
}

/* @head's route, not hashed, ranked by its first I/O; NULL without memory */
static noinline struct nvme_lat_route *
nvme_lat_route_alloc(struct nvme_ns_head *head)
{
	struct nvme_lat_route *r;
	unsigned int i;

	r = kzalloc(struct_size(r, slot, nr_node_ids * NLAT_NR_CLASSES),
		    GFP_KERNEL);
	if (!r)
		return NULL;
	r->head = head;
	for (i = 0; i < nr_node_ids * NLAT_NR_CLASSES; i++) {
		r->slot[i].ranked = jiffies - NVME_LAT_RANK_JIFFIES;
		r->slot[i].probe_at = jiffies;
	}
	return r;
}
ALLOW_ERROR_INJECTION(nvme_lat_route_alloc, NULL);

/* @head gained a path: give it a route if it has none.  Sleeps. */
void nvme_lat_route_add(struct nvme_ns_head *head)
{
	struct nvme_lat_route *r;

	rcu_read_lock();
	r = nvme_lat_route_find(head);
	rcu_read_unlock();
	if (r)
		return;
	/* no route: I/O scans every path, as before */
	r = nvme_lat_route_alloc(head);
	if (!r)
		return;
	spin_lock(&nvme_lat_route_lock);
	if (nvme_lat_route_find(head)) {
		spin_unlock(&nvme_lat_route_lock);
		kfree(r);
		return;
	}
	hash_add_rcu(nvme_lat_routes, &r->node, (unsigned long)head);
	spin_unlock(&nvme_lat_route_lock);
}

/*
 * @ns has left its head's list and no submitter can find it there any
 * more (nvme_ns_remove()): clear the route's pointers to it and wait for
 * the submitters that may have read one.  Frees the route if @ns was the
 * head's last path (@last).  Sleeps.
 */
void nvme_lat_route_forget(struct nvme_ns *ns, bool last)
{
	struct nvme_ns_head *head = ns->head;
	struct nvme_lat_route *r;
	bool cleared = false;
	unsigned int i;

	spin_lock(&nvme_lat_route_lock);
	r = nvme_lat_route_find(head);
	if (!r) {
		spin_unlock(&nvme_lat_route_lock);
		return;
	}
	for (i = 0; i < nr_node_ids * NLAT_NR_CLASSES; i++) {
		struct nvme_lat_slot *s = &r->slot[i];

		if (rcu_access_pointer(s->best) == ns) {
			RCU_INIT_POINTER(s->best, NULL);
			cleared = true;
		}
		if (rcu_access_pointer(s->next) == ns) {
			RCU_INIT_POINTER(s->next, NULL);
			cleared = true;
		}
	}
	if (last)
		hash_del_rcu(&r->node);
	spin_unlock(&nvme_lat_route_lock);
	if (cleared)
		synchronize_srcu(&head->srcu);
	if (last)
		kfree_rcu(r, rcu);
}

/* Module exit: every head is gone, so is every route. */
void nvme_lat_route_exit(void)
{
	struct nvme_lat_route *r;
	struct hlist_node *tmp;
	unsigned int bkt;

	spin_lock(&nvme_lat_route_lock);
	hash_for_each_safe(nvme_lat_routes, bkt, tmp, r, node) {
		WARN_ON_ONCE(1);
		hash_del_rcu(&r->node);
		kfree_rcu(r, rcu);
	}
	spin_unlock(&nvme_lat_route_lock);
	rcu_barrier();
}
