/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "latency" iopolicy of nvme-core: hooks called from multipath.c and
 * core.c (see src/patches/<series>/), implemented in nvme-latency.c.
 */
#ifndef _NVME_LATENCY_H
#define _NVME_LATENCY_H

#include <linux/bio.h>
#include "blk-nodelat.h"
#include "nvme-latency-cost.h"

struct nvme_ns;
struct nvme_subsystem;
struct request;

enum nvme_lat_read_ret {
	NVME_LAT_UNTRACKED,
	NVME_LAT_TRACKED,
	NVME_LAT_PROBE,
};

/* A read or write with data: the I/O that yields a latency sample. */
static inline bool nvme_lat_bio_rw(struct bio *bio)
{
	return (bio_op(bio) == REQ_OP_READ || bio_op(bio) == REQ_OP_WRITE) &&
	       bio->bi_iter.bi_size;
}

#if IS_ENABLED(CONFIG_NVME_MULTIPATH)
bool nvme_lat_default(void);
int nvme_lat_set_iopolicy(struct nvme_subsystem *subsys, int policy);
void nvme_lat_add_path(struct nvme_ns *ns);
void nvme_lat_remove_path(struct nvme_ns *ns);
void nvme_lat_unwind_path(struct nvme_ns *ns);
enum nvme_lat_read_ret nvme_lat_read(struct nvme_ns *ns, int node,
				     unsigned int cls, bool may_probe,
				     struct nvme_lat_cand *c);
void nvme_lat_end_error(struct request *req);
void nvme_lat_exit(void);
#else
static inline void nvme_lat_remove_path(struct nvme_ns *ns)
{
}

static inline void nvme_lat_unwind_path(struct nvme_ns *ns)
{
}

static inline void nvme_lat_end_error(struct request *req)
{
}

static inline void nvme_lat_exit(void)
{
}
#endif

#endif /* _NVME_LATENCY_H */
