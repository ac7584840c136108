// SPDX-License-Identifier: GPL-2.0
/*
 * blk-nodelat: trackers by q->id.  read() finds its tracker under RCU
 * with a bound check and a load (nlat_lookup()); attach and detach store
 * it under the queue's nlat_qos_mutex().  Growing allocates, so attach
 * makes room before it takes any lock of the queue.
 */

#include <linux/error-injection.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "nlat-internal.h"

#define NLAT_TABLE_MIN		64

struct nlat_table __rcu *nlat_table;
static DEFINE_SPINLOCK(nlat_table_lock);

/* Make room for @id in the table: allocates, so before any queue lock. */
int nlat_reserve(unsigned int id)
{
	struct nlat_table *t, *old;
	unsigned int nr, i;

	rcu_read_lock();
	t = rcu_dereference(nlat_table);
	nr = t ? t->nr : 0;
	rcu_read_unlock();
	if (id < nr)
		return 0;
	nr = max_t(unsigned int, roundup_pow_of_two(id + 1), NLAT_TABLE_MIN);
	t = kvzalloc(struct_size(t, slot, nr), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	t->nr = nr;
	spin_lock(&nlat_table_lock);
	old = rcu_dereference_protected(nlat_table,
					lockdep_is_held(&nlat_table_lock));
	if (old && old->nr >= nr) {
		spin_unlock(&nlat_table_lock);
		kvfree(t);
		return 0;
	}
	for (i = 0; old && i < old->nr; i++)
		RCU_INIT_POINTER(t->slot[i], rcu_dereference_protected(old->slot[i],
				 lockdep_is_held(&nlat_table_lock)));
	rcu_assign_pointer(nlat_table, t);
	spin_unlock(&nlat_table_lock);
	if (old)
		kvfree_rcu(old, rcu);
	return 0;
}
ALLOW_ERROR_INJECTION(nlat_reserve, ERRNO);

/* Store @nq (NULL: erase) at @id, which nlat_reserve() made room for. */
void nlat_table_set(unsigned int id, struct nlat_queue *nq)
{
	struct nlat_table *t;

	spin_lock(&nlat_table_lock);
	t = rcu_dereference_protected(nlat_table,
				      lockdep_is_held(&nlat_table_lock));
	rcu_assign_pointer(t->slot[id], nq);
	spin_unlock(&nlat_table_lock);
}
