/* gnuplot.c: figures.  gnuplot is started directly with an argument
 * vector (never through a shell); it writes the figure to a pipe and its
 * messages to another, so it opens no file of ours: karat checks that the
 * figure is whole and writes it with the safe output writer (outfile.c).
 * File names reach gnuplot as single-quoted strings, in which it expands
 * no backquote and no macro, and with "./" before a relative name, so that
 * a leading '<' or '|' is never read as a command. */
#define _GNU_SOURCE /* memmem */
#include "cli/cli.h"
#include "karat.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define FIG_MAX (256L << 20) /* the largest figure read back */
#define MSG_MAX 4096         /* of gnuplot's messages, what is kept */

int gp_quote(const char *path, char *dst, size_t n, char *why, size_t nwhy)
{
	size_t k = 0;
	int rel = path[0] != '/';
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f) {
			snprintf(why, nwhy, "%s: gnuplot cannot take a file name with a control "
				 "character (byte 0x%02x); rename it", path, *p);
			return -1;
		}
	if (n < 4)
		goto long_name;
	dst[k++] = '\'';
	if (rel)
		dst[k++] = '.', dst[k++] = '/';
	for (const char *p = path; *p; p++) {
		if (k + 3 >= n)
			goto long_name;
		if (*p == '\'')
			dst[k++] = '\''; /* gnuplot reads '' inside '...' as one ' */
		dst[k++] = *p;
	}
	dst[k++] = '\'';
	dst[k] = '\0';
	return 0;
long_name:
	snprintf(why, nwhy, "%.80s: file name too long for a figure", path);
	return -1;
}

int gnuplot_found(void)
{
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	char dir[4096];
	for (const char *p = path;; p = strchr(p, ':') + 1) {
		size_t len = strcspn(p, ":");
		snprintf(dir, sizeof dir, "%.*s/gnuplot", (int)len, len ? p : ".");
		if (access(dir, X_OK) == 0)
			return 1;
		if (!p[len])
			return 0;
	}
}

/* Whether the bytes are a whole figure of the format out's name ends in;
 * else what is wrong. */
static const char *whole(const char *out, const unsigned char *b, size_t n)
{
	const char *dot = strrchr(out, '.');
	const char *ext = dot ? dot + 1 : "";
	if (!b || n == 0)
		return "gnuplot wrote nothing";
	if (strcmp(ext, "png") == 0) {
		static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
		static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D',
						       0xae, 0x42, 0x60, 0x82};
		if (n < 20 || memcmp(b, sig, 8) != 0)
			return "not a PNG file (no PNG signature)";
		if (memcmp(b + n - 12, iend, 12) != 0)
			return "a PNG file cut short (no IEND chunk at its end)";
		return NULL;
	}
	size_t e = n;
	while (e > 0 && (b[e - 1] == '\n' || b[e - 1] == '\r' || b[e - 1] == ' '))
		e--;
	if (strcmp(ext, "pdf") == 0) {
		if (n < 5 || memcmp(b, "%PDF-", 5) != 0)
			return "not a PDF file (no %PDF- header)";
		if (e < 5 || memcmp(b + e - 5, "%%EOF", 5) != 0)
			return "a PDF file cut short (no %%EOF at its end)";
		return NULL;
	}
	if (strcmp(ext, "svg") == 0) {
		if (!memmem(b, n < 512 ? n : 512, "<svg", 4) && !memmem(b, n < 512 ? n : 512, "<?xml", 5))
			return "not an SVG file";
		if (e < 6 || memcmp(b + e - 6, "</svg>", 6) != 0)
			return "an SVG file cut short (no </svg> at its end)";
		return NULL;
	}
	return NULL; /* no format karat knows: taken as it is */
}

/* Reads gnuplot's figure (fd_out) and messages (fd_err) to their ends. */
static int drain(int fd_out, int fd_err, unsigned char **fig, size_t *nfig, char *msg,
		 size_t *nmsg)
{
	size_t cap = 0;
	*fig = NULL, *nfig = 0, *nmsg = 0;
	struct pollfd pf[2] = {{fd_out, POLLIN, 0}, {fd_err, POLLIN, 0}};
	int open_fds = 2, rc = 0;
	while (open_fds > 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[65536];
			ssize_t r = read(pf[i].fd, buf, sizeof buf);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				pf[i].fd = -1, open_fds--;
				continue;
			}
			if (i == 1) {
				size_t take = (size_t)r < MSG_MAX - 1 - *nmsg ? (size_t)r : MSG_MAX - 1 - *nmsg;
				memcpy(msg + *nmsg, buf, take);
				*nmsg += take;
				continue;
			}
			if (*nfig + (size_t)r > (size_t)FIG_MAX) {
				rc = -2; /* keep reading, so gnuplot is not stuck on a full pipe */
				continue;
			}
			if (*nfig + (size_t)r > cap) {
				size_t nc = cap ? 2 * cap : 1 << 20;
				while (nc < *nfig + (size_t)r)
					nc *= 2;
				unsigned char *p = realloc(*fig, nc);
				if (!p) {
					rc = -1;
					continue;
				}
				*fig = p, cap = nc;
			}
			memcpy(*fig + *nfig, buf, (size_t)r);
			*nfig += (size_t)r;
		}
	}
	msg[*nmsg] = '\0';
	return rc;
}

int gnuplot_render(const char *vars, const char *script, const char *out)
{
	if (out_check(out) != 0)
		return -1;
	char sp[OUT_PATH_MAX + 64], *ex = NULL;
	snprintf(sp, sizeof sp, "%s/plots/%s", zoo_home(), script);
	size_t nex = strlen(vars) + 64;
	if (!(ex = malloc(nex))) {
		die_msg("out of memory drawing %s", out);
		return -1;
	}
	/* the figure comes back on standard output: gnuplot opens no file of ours */
	snprintf(ex, nex, "outfile='/dev/stdout'; %s", vars);
	char *argv[] = {"gnuplot", "-e", ex, sp, NULL};
	int po[2] = {-1, -1}, pe[2] = {-1, -1}, rc = -1;
	unsigned char *fig = NULL;
	size_t nfig = 0, nmsg = 0;
	static char msg[MSG_MAX];
	msg[0] = '\0';
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	pid_t pid = -1;
	if (pipe(po) != 0 || pipe(pe) != 0) {
		die_msg("drawing %s: cannot make a pipe: %s", out, strerror(errno));
		goto done;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawn_file_actions_addclose(&fa, po[0]);
	posix_spawn_file_actions_addclose(&fa, pe[0]);
	int e = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	close(po[1]), close(pe[1]);
	po[1] = pe[1] = -1;
	if (e != 0) {
		die_msg("drawing %s: cannot start gnuplot: %s%s", out, strerror(e),
			e == ENOENT ? " (apt-get install gnuplot-nox)" : "");
		pid = -1;
		goto done;
	}
	out_set_child(pid);
	int d = drain(po[0], pe[0], &fig, &nfig, msg, &nmsg);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	out_set_child(0);
	const char *bad = NULL;
	char why[160];
	if (WIFSIGNALED(st)) {
		snprintf(why, sizeof why, "gnuplot died of signal %d", WTERMSIG(st));
		bad = why;
	} else if (WEXITSTATUS(st) != 0) {
		snprintf(why, sizeof why, "gnuplot failed (exit status %d)", WEXITSTATUS(st));
		bad = why;
	} else if (nmsg > 0) {
		bad = "gnuplot warned";
	} else if (d == -2) {
		bad = "the figure is larger than 256 MiB";
	} else if (d != 0) {
		bad = "out of memory reading the figure";
	} else {
		bad = whole(out, fig, nfig);
	}
	if (bad) {
		die_msg("%s drawing %s%s%.400s; the previous figure, if any, is unchanged", bad, out,
			nmsg ? ": " : "", msg);
		goto done;
	}
	if (write_bytes_atomic(out, fig, nfig) != 0)
		goto done;
	printf("wrote %s\n", out);
	fflush(stdout);
	rc = 0;
done:
	posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	free(fig);
	free(ex);
	return rc;
}

int gnuplot_figure(const char *script, const char *csv, const char *csv2, const char *out)
{
	if (!gnuplot_found()) {
		printf("gnuplot not found: skipped %s (apt-get install gnuplot-nox)\n", out);
		return 0;
	}
	char vars[5200], q[2500], q2[2500] = "", why[300];
	if (gp_quote(csv, q, sizeof q, why, sizeof why) != 0 ||
	    (csv2 && gp_quote(csv2, q2, sizeof q2, why, sizeof why) != 0)) {
		die_msg("%s", why);
		return 1;
	}
	snprintf(vars, sizeof vars, "datafile=%s;%s%s%s", q, csv2 ? " datafile2=" : "", q2,
		 csv2 ? ";" : "");
	return gnuplot_render(vars, script, out) != 0; /* prints what it did */
}
