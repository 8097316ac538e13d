/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The EAL's start, said in one line when it fails, and quiet when it does
 * not. rte_eal_init() prints its whole usage for one bad option without
 * naming it, and a healthy start prints lines that read like errors: so
 * what it prints while it runs is captured, then either replayed without
 * the lines known to be harmless, or read for the cause of the failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "port_eal.h"

#define CAPTURE_MAX (256 * 1024)

int
port_eal_split(int argc, char **argv, const char *const *own)
{
	const char *const *o;
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	for (i = 1; i < argc; i++)
		for (o = own; *o != NULL; o++) {
			size_t n = strlen(*o);

			if ((*o)[n - 1] == '=' ? strncmp(argv[i], *o, n) == 0 :
					strcmp(argv[i], *o) == 0)
				return 0;
		}
	return argc;
}

/* Lines a healthy start prints that are not errors, and why. */
static const char *const harmless[] = {
	/* Only 2 MiB pages are reserved: the 1 GiB size has none. */
	"No free 1048576 kB hugepages",
	/* net_tap on a kernel without the multiq qdisc or flower: rte_flow
	 * is off, which ewyk does not use. */
	"Specified qdisc kind is unknown",
	"Could not add multiq qdisc",
	"failed to create multiq qdisc",
	"Disabling rte flow support",
	/* Only the legacy telemetry socket (for pre-20.05 clients). */
	"No legacy callbacks, legacy socket not created",
	/* net_tap tells secondary processes of queue changes: none run. */
	"Failed to send start req to secondary",
};

/* The EAL's informative lines, which name no cause of a failure. */
static const char *const informative[] = {
	"Detected ", "Multi-process socket", "Selected IOVA", "No free ",
	"unavailable", "FATAL:", "Invalid 'command line' arguments",
	"Cannot init ", "Error - exiting",
};

static bool
has_any(const char *line, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(line, list[i]) != NULL)
			return true;
	return false;
}

/* DPDK's log lines, from here on, without the harmless ones. */
static ssize_t
filtered_write(void *cookie, const char *buf, size_t size)
{
	static char line[1024];
	static size_t len;
	size_t i;

	(void)cookie;
	for (i = 0; i < size; i++) {
		if (len < sizeof(line) - 1)
			line[len++] = buf[i];
		if (buf[i] != '\n')
			continue;
		line[len] = '\0';
		if (!has_any(line, harmless, RTE_DIM(harmless)))
			fputs(line, stderr);
		len = 0;
	}
	return (ssize_t)size;
}

void
port_eal_log_filter(void)
{
	static const cookie_io_functions_t io = { .write = filtered_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (f == NULL)
		return;
	setvbuf(f, NULL, _IOLBF, 0);
	rte_openlog_stream(f);
}

/* The value of --file-prefix among the EAL's arguments ("rte" without). */
static const char *
file_prefix(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--file-prefix") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--file-prefix=", 14) == 0)
			return argv[i] + 14;
	}
	return "rte";
}

/* Whether a process answers on the telemetry socket of that prefix: two
 * processes of one prefix would share its files, and the second one's
 * telemetry would move to another socket unseen. */
static bool
prefix_in_use(const char *prefix, char *path, size_t cap)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *dir = getuid() == 0 ? "/var/run" :
		getenv("XDG_RUNTIME_DIR") != NULL ? getenv("XDG_RUNTIME_DIR") :
		"/tmp";
	int fd, rc;

	snprintf(path, cap, "%s/dpdk/%s/dpdk_telemetry.v2", dir, prefix);
	if (strlen(path) >= sizeof(sun.sun_path))
		return false;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return false;
	rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return rc == 0;
}

/* Whether the usage names the option (name, n bytes) as a word of its
 * own: "-l CORELIST", "--vdev <device arguments>". */
static bool
usage_names(const char *usage, const char *name, size_t n)
{
	const char *p;

	for (p = usage; (p = memmem(p, strlen(p), name, n)) != NULL; p += n)
		if ((p == usage || strchr(" \t[\n", p[-1]) != NULL) &&
				strchr(" \t\n=,", p[n]) != NULL)
			return true;
	return false;
}

/* An option of the command line that the EAL's usage does not name. */
static const char *
unknown_option(int argc, char **argv, const char *usage)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0)
			continue;
		/* -l0-1 is -l; --vdev=x is --vdev */
		if (!usage_names(usage, a, a[1] != '-' ? 2 : strcspn(a, "=")))
			return a;
	}
	return NULL;
}

/* The first line of the EAL's own that names a cause. */
static bool
eal_cause(const char *out, char *line, size_t cap)
{
	const char *p = out;

	while ((p = strstr(p, "EAL: ")) != NULL) {
		size_t n = strcspn(p + 5, "\n");

		snprintf(line, cap, "%.*s", (int)n, p + 5);
		p += 5 + n;
		if (!has_any(line, informative, RTE_DIM(informative)))
			return true;
	}
	return false;
}

/* Runs rte_eal_init() with stdout and stderr caught in out (NUL ended). */
static int
eal_init_captured(int argc, char **argv, char *out, size_t cap)
{
	int fd = memfd_create("port-eal", 0), saved1, saved2, rc;
	ssize_t n;

	if (fd < 0)
		return rte_eal_init(argc, argv);
	fflush(stdout);
	fflush(stderr);
	saved1 = dup(STDOUT_FILENO);
	saved2 = dup(STDERR_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	rc = rte_eal_init(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved1, STDOUT_FILENO);
	dup2(saved2, STDERR_FILENO);
	close(saved1);
	close(saved2);
	n = pread(fd, out, cap - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
}

/* What a refused start (out: what the EAL printed) says of the cause:
 * the line in err, its kind returned. */
static enum port_eal_status
explain_failure(const char *out, int argc, char **argv, const char *failed,
		char *err, size_t errlen)
{
	const char *prefix = file_prefix(argc, argv), *bad;
	char line[512];

	if (strstr(out, "Usage:") != NULL &&
			(bad = unknown_option(argc, argv, out)) != NULL) {
		snprintf(err, errlen, "EAL option '%s': unknown to the EAL "
				"(%s's own options go after --)", bad,
				program_invocation_short_name);
		return PORT_EAL_REFUSED;
	}
	if (strstr(out, "Is another primary process running") != NULL) {
		snprintf(err, errlen, "another process uses file prefix '%s': "
				"stop it, or give this one another --file-prefix",
				prefix);
		return PORT_EAL_BUSY;
	}
	if (strstr(out, "Not enough memory available") != NULL ||
			strstr(out, "Cannot get hugepage information") != NULL ||
			strstr(out, "Cannot init memory") != NULL) {
		eal_cause(out, line, sizeof(line));
		snprintf(err, errlen, "not enough hugepage memory for the EAL "
				"(%s): reserve more (deploy/setup.sh, "
				"EWYK_HUGEPAGES), ask less with -m, or run "
				"with --no-huge", line);
		return PORT_EAL_NOMEM;
	}
	if (!eal_cause(out, line, sizeof(line)))
		snprintf(line, sizeof(line), "%s", rte_strerror(rte_errno));
	snprintf(err, errlen, "%s: %s (check the EAL options before --)",
			failed, line);
	return PORT_EAL_REFUSED;
}

enum port_eal_status
port_eal_init(int argc, char **argv, char *err, size_t errlen)
{
	char *out = calloc(1, CAPTURE_MAX), path[256];
	const char *prefix = file_prefix(argc, argv);
	enum port_eal_status rc;
	char *l, *save = NULL;

	/* Under systemd's RuntimeDirectory= the EAL would put its files (the
	 * telemetry socket) where dpdk-telemetry.py, run from a shell, does
	 * not look: they stay in the usual place instead. */
	unsetenv("RUNTIME_DIRECTORY");
	if (prefix_in_use(prefix, path, sizeof(path))) {
		snprintf(err, errlen, "another process uses file prefix '%s' "
				"(its telemetry socket %s answers): stop it, or give "
				"this one another --file-prefix", prefix, path);
		free(out);
		return PORT_EAL_BUSY;
	}
	if (out == NULL)
		return rte_eal_init(argc, argv) < 0 ? PORT_EAL_REFUSED : PORT_EAL_OK;
	port_eal_log_filter();
	if (eal_init_captured(argc, argv, out, CAPTURE_MAX) >= 0) {
		for (l = strtok_r(out, "\n", &save); l != NULL;
				l = strtok_r(NULL, "\n", &save))
			if (!has_any(l, harmless, RTE_DIM(harmless)))
				fprintf(stderr, "%s\n", l);
		free(out);
		return PORT_EAL_OK;
	}
	rc = explain_failure(out, argc, argv, "EAL initialisation failed", err,
			errlen);
	free(out);
	return rc;
}

/* --check-config ------------------------------------------------------- */

#define LCORES_MARK "port-eal-check lcores "

/* In the checking child, as it exits: the lcores its options gave. */
static void
report_lcores(void)
{
	printf("\n" LCORES_MARK "%u\n", rte_lcore_count());
	fflush(stdout);
}

/* The child: the EAL parses the options, then --help ends it (exit 0)
 * before anything is set up; a refused option returns here instead. */
static void __rte_noreturn
check_child(int fd, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 2, sizeof(*args));

	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	/* Unbuffered: the usage and the log lines in the order written,
	 * none left in a buffer by _exit(). */
	setvbuf(stdout, NULL, _IONBF, 0);
	if (args == NULL)
		_exit(3);
	memcpy(args, argv, sizeof(*args) * (size_t)argc);
	args[argc] = (char *)(uintptr_t)"--help";
	atexit(report_lcores);
	rte_eal_init(argc + 1, args);
	_exit(3);	/* refused: no atexit, its output read as a failure */
}

enum port_eal_status
port_eal_check(int argc, char **argv, unsigned int *lcores, char *err,
		size_t errlen)
{
	int fd = memfd_create("port-eal-check", 0), status = 0;
	char *out = calloc(1, CAPTURE_MAX), *mark;
	enum port_eal_status rc = PORT_EAL_OK;
	ssize_t n;
	pid_t pid;

	if (fd < 0 || out == NULL) {
		snprintf(err, errlen, "cannot check the EAL options: %s",
				strerror(errno));
		rc = PORT_EAL_NOMEM;
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		check_child(fd, argc, argv);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		snprintf(err, errlen, "cannot check the EAL options: %s",
				strerror(errno));
		rc = PORT_EAL_NO_CHECK;
		goto out;
	}
	n = pread(fd, out, CAPTURE_MAX - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		rc = explain_failure(out, argc, argv, "EAL option refused", err,
				errlen);
		goto out;
	}
	mark = strstr(out, LCORES_MARK);
	*lcores = mark != NULL ? (unsigned int)atoi(mark + strlen(LCORES_MARK)) : 0;
	if (*lcores == 0) {
		/* No -l, -c or --lcores: the EAL takes every CPU it may
		 * run on. */
		cpu_set_t set;

		*lcores = sched_getaffinity(0, sizeof(set), &set) == 0 ?
			(unsigned int)CPU_COUNT(&set) : 1;
	}
out:
	if (fd >= 0)
		close(fd);
	free(out);
	return rc;
}
