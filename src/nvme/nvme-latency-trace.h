/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace events of the "latency" iopolicy, trace system nvme_latency:
 *
 *	nvme_latency_path	the path chosen for a (head, node) changed
 *	nvme_latency_probe	the tracker granted a path a probe I/O
 *	nvme_latency_hold	a bio waits: every candidate path is unproven
 *	nvme_latency_release	the head's requeue work resubmits what it held
 *
 * The first two do not fire per I/O otherwise.  Arguments: head (hn), old (on) and
 * new (nn) path names; "head" would shadow a local of perf's handler.  Each names the head, the submitting
 * node, the I/O size class, the old and new path ("-": none) with their
 * estimate and in-flight count.  Disabled, each costs a static branch.
 *
 *	trace-cmd record -e nvme_latency -- sleep 10 && trace-cmd report
 *	perf record -a -e 'nvme_latency:*' -- sleep 10 && perf script
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM nvme_latency

#if !defined(_TRACE_NVME_LATENCY_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_NVME_LATENCY_H

#include <linux/blkdev.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include "nvme-latency-cost.h"

DECLARE_EVENT_CLASS(nvme_latency_change,
	TP_PROTO(const char *hn, int node, unsigned int cls,
		 const char *on, const struct nlat_view *oc,
		 const char *nn, const struct nlat_view *nc),
	TP_ARGS(hn, node, cls, on, oc, nn, nc),
	TP_STRUCT__entry(
		__array(char,		head,	DISK_NAME_LEN)
		__array(char,		old,	DISK_NAME_LEN)
		__array(char,		new,	DISK_NAME_LEN)
		__field(u64,		old_lat)
		__field(u64,		new_lat)
		__field(u32,		old_inflight)
		__field(u32,		new_inflight)
		__field(int,		node)
		__field(unsigned int,	cls)
	),
	TP_fast_assign(
		strscpy(__entry->head, hn, DISK_NAME_LEN);
		strscpy(__entry->old, on, DISK_NAME_LEN);
		strscpy(__entry->new, nn, DISK_NAME_LEN);
		__entry->old_lat = oc->lat_ns;
		__entry->new_lat = nc->lat_ns;
		__entry->old_inflight = oc->inflight;
		__entry->new_inflight = nc->inflight;
		__entry->node = node;
		__entry->cls = cls;
	),
	TP_printk("%s node=%d class=%u old=%s lat_ns=%llu inflight=%u new=%s lat_ns=%llu inflight=%u",
		  __entry->head, __entry->node, __entry->cls,
		  __entry->old, __entry->old_lat, __entry->old_inflight,
		  __entry->new, __entry->new_lat, __entry->new_inflight)
);

DEFINE_EVENT(nvme_latency_change, nvme_latency_path,
	TP_PROTO(const char *hn, int node, unsigned int cls,
		 const char *on, const struct nlat_view *oc,
		 const char *nn, const struct nlat_view *nc),
	TP_ARGS(hn, node, cls, on, oc, nn, nc)
);

DEFINE_EVENT(nvme_latency_change, nvme_latency_probe,
	TP_PROTO(const char *hn, int node, unsigned int cls,
		 const char *on, const struct nlat_view *oc,
		 const char *nn, const struct nlat_view *nc),
	TP_ARGS(hn, node, cls, on, oc, nn, nc)
);

/* @held: the head's bios held, after the hold or before the release */
DECLARE_EVENT_CLASS(nvme_latency_held,
	TP_PROTO(const char *hn, unsigned int held),
	TP_ARGS(hn, held),
	TP_STRUCT__entry(
		__array(char,		head,	DISK_NAME_LEN)
		__field(unsigned int,	held)
	),
	TP_fast_assign(
		strscpy(__entry->head, hn, DISK_NAME_LEN);
		__entry->held = held;
	),
	TP_printk("%s held=%u", __entry->head, __entry->held)
);

DEFINE_EVENT(nvme_latency_held, nvme_latency_hold,
	TP_PROTO(const char *hn, unsigned int held),
	TP_ARGS(hn, held)
);

DEFINE_EVENT(nvme_latency_held, nvme_latency_release,
	TP_PROTO(const char *hn, unsigned int held),
	TP_ARGS(hn, held)
);

#endif /* _TRACE_NVME_LATENCY_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE nvme-latency-trace
#include <trace/define_trace.h>
