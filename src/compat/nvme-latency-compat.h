/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-latency-compat.h - kernel API drift met by nvme-latency.c.
 * Fallbacks are keyed on the macro itself where there is one, else on a
 * probe in src/nvme/Kbuild.
 */
#ifndef _NVME_LATENCY_COMPAT_H
#define _NVME_LATENCY_COMPAT_H

#include <linux/slab.h>
#include <linux/workqueue.h>

/* Typed allocation helpers (7.2 has them; checkpatch asks for them). */
#ifndef kzalloc_obj
#define kzalloc_obj(P, GFP)	kzalloc(sizeof(P), GFP)
#endif

/* 6.17 named the per-CPU system workqueue; 7.2 warns on system_wq. */
#ifndef NVME_LAT_HAVE_PERCPU_WQ
#define system_percpu_wq	system_wq
#endif

#endif /* _NVME_LATENCY_COMPAT_H */
