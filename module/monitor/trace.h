/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - gpreempt tracepoints: gpreempt:preempt, gpreempt:resume.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM gpreempt

#if !defined(GP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define GP_TRACE_H

#include <linux/tracepoint.h>

#define GP_TP_PROTO TP_PROTO(pid_t tgid, u32 qid, int prio, int backend, int reason, \
			     int ret, u64 ns)
#define GP_TP_ARGS TP_ARGS(tgid, qid, prio, backend, reason, ret, ns)

DECLARE_EVENT_CLASS(gpreempt_action, GP_TP_PROTO, GP_TP_ARGS,
		    TP_STRUCT__entry(__field(pid_t, tgid)
				     __field(u32, qid)
				     __field(int, prio)
				     __field(int, backend)
				     __field(int, reason)
				     __field(int, ret)
				     __field(u64, ns)),
		    TP_fast_assign(__entry->tgid = tgid;
				   __entry->qid = qid;
				   __entry->prio = prio;
				   __entry->backend = backend;
				   __entry->reason = reason;
				   __entry->ret = ret;
				   __entry->ns = ns;),
		    TP_printk("tgid=%d qid=%u prio=%d backend=%s reason=%d ret=%d took_ns=%llu",
			      __entry->tgid, __entry->qid, __entry->prio,
			      __print_symbolic(__entry->backend, { 1, "evict" }, { 2, "suspend" }),
			      __entry->reason,
			      __entry->ret, __entry->ns));

DEFINE_EVENT(gpreempt_action, preempt, GP_TP_PROTO, GP_TP_ARGS);
DEFINE_EVENT(gpreempt_action, resume, GP_TP_PROTO, GP_TP_ARGS);

#endif /* GP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
