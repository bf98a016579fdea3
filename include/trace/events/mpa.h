/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of mpa.ko: startup state changes, Request/Reply frames,
 * errors with their RFC 5044 code, startup timeouts, FPDUs. Enable them
 * with echo 1 > /sys/kernel/tracing/events/mpa/enable.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mpa

#if !defined(_TRACE_MPA_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_MPA_H

#include <linux/tracepoint.h>
#include <net/inet_sock.h>

#define mpa_show_state(s)						\
	__print_symbolic(s, { 0, "IDLE" }, { 1, "REQ_SENT" },		\
			 { 2, "REQ_WAIT" }, { 3, "REQ_RCVD" },		\
			 { 4, "FULL" }, { 5, "REJECTED" }, { 6, "ERROR" })

TRACE_EVENT(mpa_state,
	    TP_PROTO(const struct sock *sk, u32 old, u32 new),
	    TP_ARGS(sk, old, new),
	    TP_STRUCT__entry(__field(u16, sport)
			     __field(u16, dport)
			     __field(u32, old)
			     __field(u32, new)),
	    TP_fast_assign(__entry->sport = ntohs(inet_sk(sk)->inet_sport);
			   __entry->dport = ntohs(inet_sk(sk)->inet_dport);
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("sport=%u dport=%u %s -> %s", __entry->sport,
		      __entry->dport, mpa_show_state(__entry->old),
		      mpa_show_state(__entry->new))
);

/* @hdr: the 20-octet Request or Reply header (RFC 5044 section 7.1) */
TRACE_EVENT(mpa_frame,
	    TP_PROTO(const struct sock *sk, bool tx, const u8 *hdr),
	    TP_ARGS(sk, tx, hdr),
	    TP_STRUCT__entry(__field(u16, sport)
			     __field(u16, dport)
			     __field(bool, tx)
			     __field(bool, request)
			     __field(u8, flags)
			     __field(u8, rev)
			     __field(u16, pd_len)),
	    TP_fast_assign(__entry->sport = ntohs(inet_sk(sk)->inet_sport);
			   __entry->dport = ntohs(inet_sk(sk)->inet_dport);
			   __entry->tx = tx;
			   /* "MPA ID Req Frame" or "MPA ID Rep Frame" */
			   __entry->request = hdr[9] == 'q';
			   __entry->flags = hdr[16];
			   __entry->rev = hdr[17];
			   __entry->pd_len = (hdr[18] << 8) | hdr[19];),
	    TP_printk("sport=%u dport=%u %s %s flags=0x%02x rev=%u pd_len=%u",
		      __entry->sport, __entry->dport,
		      __entry->tx ? "sent" : "received",
		      __entry->request ? "Request" : "Reply", __entry->flags,
		      __entry->rev, __entry->pd_len)
);

TRACE_EVENT(mpa_error,
	    TP_PROTO(const struct sock *sk, u32 code, int err),
	    TP_ARGS(sk, code, err),
	    TP_STRUCT__entry(__field(u16, sport)
			     __field(u16, dport)
			     __field(u32, code)
			     __field(int, err)),
	    TP_fast_assign(__entry->sport = ntohs(inet_sk(sk)->inet_sport);
			   __entry->dport = ntohs(inet_sk(sk)->inet_dport);
			   __entry->code = code;
			   __entry->err = err;),
	    TP_printk("sport=%u dport=%u code=%u errno=%d", __entry->sport,
		      __entry->dport, __entry->code, __entry->err)
);

TRACE_EVENT(mpa_timeout,
	    TP_PROTO(const struct sock *sk),
	    TP_ARGS(sk),
	    TP_STRUCT__entry(__field(u16, sport)
			     __field(u16, dport)),
	    TP_fast_assign(__entry->sport = ntohs(inet_sk(sk)->inet_sport);
			   __entry->dport = ntohs(inet_sk(sk)->inet_dport);),
	    TP_printk("sport=%u dport=%u", __entry->sport, __entry->dport)
);

DECLARE_EVENT_CLASS(mpa_fpdu_class,
		    TP_PROTO(const struct sock *sk, u32 ulpdu_len),
		    TP_ARGS(sk, ulpdu_len),
		    TP_STRUCT__entry(__field(u16, sport)
				     __field(u16, dport)
				     __field(u32, ulpdu_len)),
		    TP_fast_assign(__entry->sport = ntohs(inet_sk(sk)->inet_sport);
				   __entry->dport = ntohs(inet_sk(sk)->inet_dport);
				   __entry->ulpdu_len = ulpdu_len;),
		    TP_printk("sport=%u dport=%u ulpdu_len=%u", __entry->sport,
			      __entry->dport, __entry->ulpdu_len)
);

DEFINE_EVENT(mpa_fpdu_class, mpa_fpdu_tx,
	     TP_PROTO(const struct sock *sk, u32 ulpdu_len),
	     TP_ARGS(sk, ulpdu_len)
);

DEFINE_EVENT(mpa_fpdu_class, mpa_fpdu_rx,
	     TP_PROTO(const struct sock *sk, u32 ulpdu_len),
	     TP_ARGS(sk, ulpdu_len)
);

#endif /* _TRACE_MPA_H */

#include <trace/define_trace.h>
