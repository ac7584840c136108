/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-ins for READ_ONCE(), WRITE_ONCE(), SMP barriers and
 * try_cmpxchg64().
 */
#ifndef _SHIM_ATOMIC_H
#define _SHIM_ATOMIC_H

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define try_cmpxchg64(p, oldp, new)					\
	__atomic_compare_exchange_n(p, oldp, new, false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_SEQ_CST)

#endif
