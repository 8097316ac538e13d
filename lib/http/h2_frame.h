/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * HTTP/2's wire format (RFC 9113 4, 6, 7): frame types, flags, settings
 * and error codes, and the frame header, read and written.
 */
#ifndef EWYK_H2_FRAME_H
#define EWYK_H2_FRAME_H

#include <stdint.h>

#define H2_FRAME_HEADER 9
#define H2_DEFAULT_FRAME 16384		/* SETTINGS_MAX_FRAME_SIZE's floor */
#define H2_MAX_FRAME_LIMIT 16777215	/* ... and its ceiling */
#define H2_DEFAULT_WINDOW 65535
#define H2_WINDOW_MAX 0x7fffffff

enum h2_frame_type {
	H2_DATA = 0x0,
	H2_HEADERS = 0x1,
	H2_PRIORITY = 0x2,
	H2_RST_STREAM = 0x3,
	H2_SETTINGS = 0x4,
	H2_PUSH_PROMISE = 0x5,
	H2_PING = 0x6,
	H2_GOAWAY = 0x7,
	H2_WINDOW_UPDATE = 0x8,
	H2_CONTINUATION = 0x9,
};

#define H2_FLAG_END_STREAM 0x1
#define H2_FLAG_ACK 0x1
#define H2_FLAG_END_HEADERS 0x4
#define H2_FLAG_PADDED 0x8
#define H2_FLAG_PRIORITY 0x20

enum h2_setting {
	H2_SET_HEADER_TABLE_SIZE = 0x1,
	H2_SET_ENABLE_PUSH = 0x2,
	H2_SET_MAX_CONCURRENT_STREAMS = 0x3,
	H2_SET_INITIAL_WINDOW_SIZE = 0x4,
	H2_SET_MAX_FRAME_SIZE = 0x5,
	H2_SET_MAX_HEADER_LIST_SIZE = 0x6,
	H2_SET_ENABLE_CONNECT_PROTOCOL = 0x8,
	H2_SET_NO_RFC7540_PRIORITIES = 0x9,
};

enum h2_error {
	H2_NO_ERROR = 0x0,
	H2_PROTOCOL_ERROR = 0x1,
	H2_INTERNAL_ERROR = 0x2,
	H2_FLOW_CONTROL_ERROR = 0x3,
	H2_SETTINGS_TIMEOUT = 0x4,
	H2_STREAM_CLOSED = 0x5,
	H2_FRAME_SIZE_ERROR = 0x6,
	H2_REFUSED_STREAM = 0x7,
	H2_CANCEL = 0x8,
	H2_COMPRESSION_ERROR = 0x9,
	H2_CONNECT_ERROR = 0xa,
	H2_ENHANCE_YOUR_CALM = 0xb,
};

static inline uint32_t
h2_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t
h2_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

static inline void
h2_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Writes a frame header at p. */
static inline void
h2_put_header(uint8_t *p, uint32_t len, uint8_t type, uint8_t flags,
		uint32_t id)
{
	p[0] = (uint8_t)(len >> 16);
	p[1] = (uint8_t)(len >> 8);
	p[2] = (uint8_t)len;
	p[3] = type;
	p[4] = flags;
	h2_put32(p + 5, id);
}

#endif /* EWYK_H2_FRAME_H */
