/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/limits.h>: what nvme-latency-cost.h needs. */
#ifndef _SHIM_LINUX_LIMITS_H
#define _SHIM_LINUX_LIMITS_H

#include <stdint.h>

#define U64_MAX		UINT64_MAX

#endif
