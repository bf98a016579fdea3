/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ddp.ko: segments placed or refused (with the RFC 5041
 * section 7.2 error type and code), STags registered and invalidated.
 * Streams and PDs are named by their IDs, as in /proc/PID/fdinfo.
 * Enable them with echo 1 > /sys/kernel/tracing/events/ddp/enable.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ddp

#if !defined(_TRACE_DDP_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_DDP_H

#include <linux/tracepoint.h>

/*
 * A segment was placed and its CRC was good. Tagged: @id is the STag,
 * @off the TO, @msn 0. Untagged: @id is the QN, @off the MO.
 */
TRACE_EVENT(ddp_place,
	    TP_PROTO(u32 stream, bool tagged, u32 id, u32 msn, u64 off, u32 len,
		     bool last),
	    TP_ARGS(stream, tagged, id, msn, off, len, last),
	    TP_STRUCT__entry(__field(u32, stream)
			     __field(bool, tagged)
			     __field(bool, last)
			     __field(u32, id)
			     __field(u32, msn)
			     __field(u64, off)
			     __field(u32, len)),
	    TP_fast_assign(__entry->stream = stream;
			   __entry->tagged = tagged;
			   __entry->last = last;
			   __entry->id = id;
			   __entry->msn = msn;
			   __entry->off = off;
			   __entry->len = len;),
	    TP_printk("stream=%u %s %s=0x%x msn=%u %s=0x%llx len=%u%s",
		      __entry->stream,
		      __entry->tagged ? "tagged" : "untagged",
		      __entry->tagged ? "stag" : "qn", __entry->id,
		      __entry->msn, __entry->tagged ? "to" : "mo",
		      __entry->off, __entry->len,
		      __entry->last ? " last" : "")
);

/* The stream stopped on an error (RFC 5041 section 7.2; type 0x3: MPA's). */
TRACE_EVENT(ddp_refuse,
	    TP_PROTO(u32 stream, u8 type, u8 code, u32 len),
	    TP_ARGS(stream, type, code, len),
	    TP_STRUCT__entry(__field(u32, stream)
			     __field(u8, type)
			     __field(u8, code)
			     __field(u32, len)),
	    TP_fast_assign(__entry->stream = stream;
			   __entry->type = type;
			   __entry->code = code;
			   __entry->len = len;),
	    TP_printk("stream=%u type=0x%x code=0x%02x len=%u", __entry->stream,
		      __entry->type, __entry->code, __entry->len)
);

DECLARE_EVENT_CLASS(ddp_stag_class,
		    TP_PROTO(u32 pd, u32 stag, u64 base_to, u64 len),
		    TP_ARGS(pd, stag, base_to, len),
		    TP_STRUCT__entry(__field(u32, pd)
				     __field(u32, stag)
				     __field(u64, base_to)
				     __field(u64, len)),
		    TP_fast_assign(__entry->pd = pd;
				   __entry->stag = stag;
				   __entry->base_to = base_to;
				   __entry->len = len;),
		    TP_printk("pd=%u stag=0x%08x to=0x%llx len=%llu", __entry->pd,
			      __entry->stag, __entry->base_to, __entry->len)
);

DEFINE_EVENT(ddp_stag_class, ddp_stag_reg,
	     TP_PROTO(u32 pd, u32 stag, u64 base_to, u64 len),
	     TP_ARGS(pd, stag, base_to, len)
);

/* Invalidated, or freed with its stream or PD. */
DEFINE_EVENT(ddp_stag_class, ddp_stag_inval,
	     TP_PROTO(u32 pd, u32 stag, u64 base_to, u64 len),
	     TP_ARGS(pd, stag, base_to, len)
);

#endif /* _TRACE_DDP_H */

#include <trace/define_trace.h>
