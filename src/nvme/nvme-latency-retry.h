/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bound on timed retries of a path that the "latency" iopolicy could
 * not track (or untrack), kept free of kernel structures so that
 * tests/unit compiles this very file in userspace.
 *
 * A retry on a live controller may freeze the path's queue for up to the
 * tracker's drain timeout, blocking its submitters: after
 * NVME_LAT_RETRY_FREEZES such tries a path is left to events (a switch,
 * the path added, its controller seen not live).  A try that cannot have
 * frozen it is not counted: it is retried on the timer until it succeeds.
 */
#ifndef _NVME_LATENCY_RETRY_H
#define _NVME_LATENCY_RETRY_H

#include <linux/errno.h>
#include <linux/types.h>

/* Timed retries that may freeze a live path, after each event. */
#define NVME_LAT_RETRY_FREEZES	3

/*
 * Whether a try that failed with @err may have frozen the path: not when
 * its controller was not live (-ENOLINK), the tracker module was missing
 * (-ENOENT), or memory was short (-ENOMEM: the tracker allocates
 * everything before it freezes).
 */
static inline bool nvme_lat_try_froze(int err)
{
	return err != -ENOLINK && err != -ENOENT && err != -ENOMEM;
}

/*
 * A timed retry of a path on a live controller failed with @err: count it
 * in *@freezes if it may have frozen the path.  True when that used up
 * the last one, and only then.
 */
static inline bool nvme_lat_retry_failed(unsigned int *freezes, int err)
{
	if (!nvme_lat_try_froze(err))
		return false;
	return ++*freezes == NVME_LAT_RETRY_FREEZES;
}

#endif /* _NVME_LATENCY_RETRY_H */
