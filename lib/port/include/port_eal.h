/* SPDX-License-Identifier: BSD-3-Clause */
/* The EAL's start for every program of ewyk: one line naming the cause
 * when it fails, no alarming lines when it does not. */
#ifndef EWYK_PORT_EAL_H
#define EWYK_PORT_EAL_H

#include <stddef.h>

enum port_eal_status {
	PORT_EAL_OK = 0,
	PORT_EAL_REFUSED,	/* the EAL refused its options */
	PORT_EAL_BUSY,		/* another process uses the file prefix */
	PORT_EAL_NOMEM,		/* its memory cannot be had */
	PORT_EAL_NO_CHECK,	/* the options could not be checked (no fork) */
};

/* The exit status of a program that could not start: 2 for options
 * refused, 1 for resources (memory, the prefix in use). */
static inline int
port_eal_exit_status(enum port_eal_status s)
{
	return s == PORT_EAL_REFUSED ? 2 : 1;
}

/* Where the EAL's arguments end on a command line: at "--" (the program's
 * own follow it); without one, 0 (all are the program's own) when an
 * argument is one of own (NULL-ended; an entry ending in '=' matches as
 * a prefix: "--config="), else argc (all are the EAL's). */
int port_eal_split(int argc, char **argv, const char *const *own);
/* rte_eal_init() on the EAL's arguments: PORT_EAL_OK, else the line
 * (without the program's name) in err. */
enum port_eal_status port_eal_init(int argc, char **argv, char *err,
		size_t errlen);
/* A configuration check: the EAL's own parser reads the options, in a
 * child process that ends before anything is set up (no memory, device,
 * file or thread); a refused option gives the line rte_eal_init() would.
 * *lcores: the lcores they give. */
enum port_eal_status port_eal_check(int argc, char **argv,
		unsigned int *lcores, char *err, size_t errlen);
/* DPDK's log from now on, without the lines known to be harmless. */
void port_eal_log_filter(void);

#endif /* EWYK_PORT_EAL_H */
