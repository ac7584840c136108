/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nvme-latency-compat.h - kernel API drift met by nvme-latency.c.
 * Each fallback is keyed on the macro itself, so no probe is needed.
 */
#ifndef _NVME_LATENCY_COMPAT_H
#define _NVME_LATENCY_COMPAT_H

#include <linux/slab.h>

/* Typed allocation helpers (7.2 has them; checkpatch asks for them). */
#ifndef kzalloc_obj
#define kzalloc_obj(P, GFP)	kzalloc(sizeof(P), GFP)
#endif

#endif /* _NVME_LATENCY_COMPAT_H */
