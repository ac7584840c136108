/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-ins for READ_ONCE(), WRITE_ONCE() and SMP barriers. */
#ifndef _SHIM_ATOMIC_H
#define _SHIM_ATOMIC_H

#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)

#endif
