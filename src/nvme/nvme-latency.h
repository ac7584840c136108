/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "latency" iopolicy of nvme-core: hooks called from multipath.c and
 * core.c (see src/patches/<series>/), implemented in nvme-latency.c.
 */
#ifndef _NVME_LATENCY_H
#define _NVME_LATENCY_H

#include "blk-nodelat.h"
#include "nvme-latency-cost.h"

struct nvme_ns;
struct nvme_subsystem;

#if IS_ENABLED(CONFIG_NVME_MULTIPATH)
int nvme_lat_set_iopolicy(struct nvme_subsystem *subsys, int policy);
void nvme_lat_add_path(struct nvme_ns *ns);
void nvme_lat_remove_path(struct nvme_ns *ns);
bool nvme_lat_read(struct nvme_ns *ns, int node, unsigned int cls,
		   struct nvme_lat_cand *c);
#else
static inline void nvme_lat_remove_path(struct nvme_ns *ns)
{
}
#endif

#endif /* _NVME_LATENCY_H */
