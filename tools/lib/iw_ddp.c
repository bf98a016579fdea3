// SPDX-License-Identifier: GPL-2.0
/*
 * libiwarp: /dev/ddp (RFC 5041): protection domain, streams, memory
 * regions, receive buffers, sends, events, error names.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/iwarp_wire.h>

#include "libiwarp.h"

/**
 * iw_ddp_open() - open /dev/ddp: a new protection domain
 *
 * Return: the PD fd, or -1 with errno set.
 */
int iw_ddp_open(void)
{
	return open("/dev/ddp", O_RDWR | O_CLOEXEC);
}

/**
 * iw_ddp_bind() - DDP_IOC_BIND: make an MPA socket a DDP stream of @pd
 * @pd: PD fd
 * @sock: MPA socket (full operation, or the Responder before its accept)
 * @nqueues: untagged queues of the stream
 *
 * Return: the stream fd, or -1 with errno set.
 */
int iw_ddp_bind(int pd, int sock, __u32 nqueues)
{
	struct ddp_bind b = { .sock_fd = sock, .nqueues = nqueues, .stream_fd = -1 };

	if (ioctl(pd, DDP_IOC_BIND, &b))
		return -1;
	return b.stream_fd;
}

/**
 * iw_ddp_reg_mr() - DDP_IOC_REG_MR: register a tagged buffer
 * @pd: PD fd
 * @addr: first octet
 * @len: octets
 * @base_to: the Tagged Offset of @addr
 * @access: DDP_ACCESS_*
 * @stream_fd: the only stream that may use it, or -1 for any of @pd
 * @stag: the STag
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_reg_mr(int pd, void *addr, __u64 len, __u64 base_to, __u32 access,
		  int stream_fd, __u32 *stag)
{
	struct ddp_reg_mr r = {
		.addr = (uintptr_t)addr,
		.len = len,
		.base_to = base_to,
		.access = access,
		.stream_fd = stream_fd,
	};

	if (ioctl(pd, DDP_IOC_REG_MR, &r))
		return -1;
	*stag = r.stag;
	return 0;
}

/**
 * iw_ddp_invalidate() - DDP_IOC_INVALIDATE: deregister an STag
 * @pd: PD fd
 * @stag: the STag
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_invalidate(int pd, __u32 stag)
{
	return ioctl(pd, DDP_IOC_INVALIDATE, &stag);
}

/**
 * iw_ddp_post_recv() - DDP_IOC_POST_RECV: post an untagged buffer
 * @sfd: stream fd
 * @addr: first octet
 * @len: octets
 * @qn: queue number
 * @cookie: returned in the DDP_EV_RECV event
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_post_recv(int sfd, void *addr, __u64 len, __u32 qn, __u64 cookie)
{
	struct ddp_post_recv pr = {
		.addr = (uintptr_t)addr,
		.len = len,
		.qn = qn,
		.cookie = cookie,
	};

	return ioctl(sfd, DDP_IOC_POST_RECV, &pr);
}

/**
 * iw_ddp_send_tagged() - DDP_IOC_SEND of a tagged message
 * @sfd: stream fd
 * @buf: the message
 * @len: its length
 * @stag: the peer's STag
 * @to: the Tagged Offset of the first octet
 * @rsvdulp: the RsvdULP octet of the tagged header
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_send_tagged(int sfd, const void *buf, __u64 len, __u32 stag, __u64 to,
		       __u8 rsvdulp)
{
	struct ddp_send sd = {
		.addr = (uintptr_t)buf,
		.len = len,
		.flags = DDP_SEND_TAGGED,
		.stag = stag,
		.to = to,
		.rsvdulp = { rsvdulp },
	};

	return ioctl(sfd, DDP_IOC_SEND, &sd);
}

/**
 * iw_ddp_send_untagged() - DDP_IOC_SEND of an untagged message
 * @sfd: stream fd
 * @buf: the message
 * @len: its length
 * @qn: the peer's queue number
 * @rsvdulp: the five RsvdULP octets of the untagged header, NULL for zeros
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_send_untagged(int sfd, const void *buf, __u64 len, __u32 qn,
			 const __u8 *rsvdulp)
{
	struct ddp_send sd = {
		.addr = (uintptr_t)buf,
		.len = len,
		.qn = qn,
	};

	if (rsvdulp)
		memcpy(sd.rsvdulp, rsvdulp, sizeof(sd.rsvdulp));
	return ioctl(sfd, DDP_IOC_SEND, &sd);
}

/**
 * iw_ddp_event() - the next event of a stream
 * @sfd: stream fd
 * @ev: the event
 * @ms: the longest wait, -1 for none
 *
 * Return: 1 with @ev, 0 after @ms without one, -1 with errno set
 * (EMSGSIZE for a short record).
 */
int iw_ddp_event(int sfd, struct ddp_event *ev, int ms)
{
	struct pollfd p = { .fd = sfd, .events = POLLIN };
	ssize_t n;
	int ret;

	do {
		ret = poll(&p, 1, ms);
	} while (ret < 0 && errno == EINTR);
	if (ret <= 0)
		return ret;
	n = read(sfd, ev, sizeof(*ev));
	if (n < 0)
		return -1;
	if (n != sizeof(*ev)) {
		errno = EMSGSIZE;
		return -1;
	}
	return 1;
}

/**
 * iw_ddp_shutdown() - DDP_IOC_SHUTDOWN: send what is queued, then FIN
 * @sfd: stream fd
 *
 * Return: 0, or -1 with errno set.
 */
int iw_ddp_shutdown(int sfd)
{
	return ioctl(sfd, DDP_IOC_SHUTDOWN);
}

/**
 * iw_ddp_err_name() - the name of a DDP error (RFC 5041 section 7.2)
 * @type: DDP_WIRE_ETYPE_*
 * @code: DDP_WIRE_ECODE_* of @type
 *
 * Return: a static string, "unknown" for undefined pairs.
 */
const char *iw_ddp_err_name(unsigned int type, unsigned int code)
{
	if (type == DDP_WIRE_ETYPE_CATASTROPHIC)
		return "local catastrophic error";
	if (type == DDP_WIRE_ETYPE_TAGGED) {
		switch (code) {
		case DDP_WIRE_ECODE_T_INVALID_STAG:
			return "tagged: invalid STag";
		case DDP_WIRE_ECODE_T_BASE_BOUNDS:
			return "tagged: base or bounds violation";
		case DDP_WIRE_ECODE_T_STAG_NOT_ASSOC:
			return "tagged: STag not associated with the stream";
		case DDP_WIRE_ECODE_T_TO_WRAP:
			return "tagged: TO wrap";
		case DDP_WIRE_ECODE_T_INVALID_DV:
			return "tagged: invalid DDP version";
		}
	}
	if (type == DDP_WIRE_ETYPE_UNTAGGED) {
		switch (code) {
		case DDP_WIRE_ECODE_U_INVALID_QN:
			return "untagged: invalid QN";
		case DDP_WIRE_ECODE_U_INVALID_MSN_NOBUF:
			return "untagged: invalid MSN, no buffer available";
		case DDP_WIRE_ECODE_U_INVALID_MSN_RANGE:
			return "untagged: invalid MSN, MSN range is not valid";
		case DDP_WIRE_ECODE_U_INVALID_MO:
			return "untagged: invalid MO";
		case DDP_WIRE_ECODE_U_MSG_TOO_LONG:
			return "untagged: message too long for the buffer";
		case DDP_WIRE_ECODE_U_INVALID_DV:
			return "untagged: invalid DDP version";
		}
	}
	return "unknown";
}
