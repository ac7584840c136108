/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/math64.h>. */
#ifndef _SHIM_LINUX_MATH64_H
#define _SHIM_LINUX_MATH64_H

#include <linux/types.h>

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 mul_u64_u64_div_u64(u64 a, u64 mul, u64 div)
{
	return (unsigned __int128)a * mul / div;
}

#endif
