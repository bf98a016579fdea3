/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of the test module mpa_echo.ko (selftests only): on
 * /dev/mpa_echo, each open file binds one established TCP socket to an
 * in-kernel MPA consumer that echoes every ULPDU it receives.
 */
#ifndef _MPA_ECHO_H
#define _MPA_ECHO_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MPA_ECHO_PD_MAX		64
/* private data of the Reply mpa_echo sends */
#define MPA_ECHO_ACCEPT_PD	"echo-accept"
#define MPA_ECHO_REJECT_PD	"echo-reject"
/* an Initiator sends this ULPDU first, when the Reply accepted */
#define MPA_ECHO_HELLO		"echo-hello"

/* struct mpa_echo_bind.mode */
#define MPA_ECHO_REJECT		0x1		/* Responder: reject the Request */
#define MPA_ECHO_SENDV		0x2		/* echo with mpa_sendv(), else mpa_send() */
/*
 * Echo with mpa_send_msg_locked(): the ULPDU is a message that MPA cuts
 * into ULPDUs, each with an MPA_ECHO_MSG_HDR_LEN-octet header, struct
 * mpa_echo_msg_hdr. A message that starts with MPA_ECHO_MSG_FAIL stops
 * with -ENOBUFS after its first ULPDU; one that starts with
 * MPA_ECHO_MSG_BIGHDR asks for a header over MPA_MSG_HDR_MAX (-EINVAL).
 */
#define MPA_ECHO_MSG		0x4
#define MPA_ECHO_MSG_FAIL	"fail"
#define MPA_ECHO_MSG_BIGHDR	"bighdr"
#define MPA_ECHO_MSG_LAST	0x80000000u

/**
 * struct mpa_echo_msg_hdr - header of each ULPDU in MPA_ECHO_MSG mode
 * @off: offset of the ULPDU's data in the message, big endian
 * @len: octets of data that follow, big endian, with MPA_ECHO_MSG_LAST
 *	in the message's last ULPDU
 */
struct mpa_echo_msg_hdr {
	__be32	off;
	__be32	len;
};

/**
 * struct mpa_echo_bind - argument of MPA_ECHO_IOC_BIND
 * @fd: an established TCP socket of the caller
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER, for mpa_start()
 * @flags: MPA_F_* for mpa_start()
 * @mode: MPA_ECHO_*
 * @rev: MPA revision for mpa_start()
 * @pd_len: length of @pd
 * @pd: Initiator: private data of the Request
 */
struct mpa_echo_bind {
	__s32	fd;
	__u32	role;
	__u32	flags;
	__u32	mode;
	__u16	rev;
	__u16	pd_len;
	__u8	pd[MPA_ECHO_PD_MAX];
};

/**
 * struct mpa_echo_status - argument of MPA_ECHO_IOC_STATUS
 * @requests: request() callbacks
 * @replies: reply() callbacks
 * @rejected: reply() callbacks with the R bit
 * @ulpdus: ulpdu() callbacks
 * @echoed: ULPDUs sent back whole
 * @dropped: ULPDUs not echoed for lack of memory
 * @errors: error() callbacks
 * @last_error: RFC 5044 code of the last error() callback
 * @peer_closed: peer_closed() callbacks
 * @state: MPA state from mpa_conn_info()
 * @rev: MPA revision from mpa_conn_info()
 * @mulpdu: mpa_conn_mulpdu()
 * @peer_pd_len: private data length of the last request() or reply()
 * @send_err: last error of mpa_send()/mpa_sendv()/mpa_send_msg_locked(),
 *	0 if none
 * @answer_err: result of mpa_accept()/mpa_reject()
 * @peer_pd: its first octets
 */
struct mpa_echo_status {
	__u32	requests;
	__u32	replies;
	__u32	rejected;
	__u32	ulpdus;
	__u32	echoed;
	__u32	dropped;
	__u32	errors;
	__u32	last_error;
	__u32	peer_closed;
	__u32	state;
	__u32	rev;
	__u32	mulpdu;
	__u32	peer_pd_len;
	__s32	send_err;
	__s32	answer_err;
	__u8	peer_pd[MPA_ECHO_PD_MAX];
};

/* MPA_CONSUMER_INFO_MAX of <net/mpa.h>, which the module checks */
#define MPA_ECHO_INFO_MAX	512

/**
 * struct mpa_echo_register - argument of MPA_ECHO_IOC_REGISTER
 * @name: the consumer's name, NUL-terminated within the array
 * @info_size: its info_size
 * @get_info: non-zero: give it a get_info callback
 * @pad: zero
 *
 * The module registers a consumer with mpa_echo's callbacks and these
 * and, if that worked, unregisters it at once: the ioctl returns what
 * mpa_register_consumer() returned.
 */
struct mpa_echo_register {
	char	name[32];
	__u32	info_size;
	__u32	get_info;
	__u32	pad[2];
};

#define MPA_ECHO_IOC_BIND	_IOW('M', 0xe0, struct mpa_echo_bind)
#define MPA_ECHO_IOC_STATUS	_IOR('M', 0xe1, struct mpa_echo_status)
/* mpa_abort() with the positive errno given */
#define MPA_ECHO_IOC_ABORT	_IOW('M', 0xe2, __s32)
#define MPA_ECHO_IOC_REGISTER	_IOW('M', 0xe3, struct mpa_echo_register)

#endif /* _MPA_ECHO_H */
