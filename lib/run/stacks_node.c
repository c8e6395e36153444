/* Node's stack when a run hangs (issue 33), through its inspector: SIGUSR1
 * opens it (on the free port --inspect-port=0 asked for, stacks_env.c),
 * we find the port among the process's listening sockets, ask for the
 * target's WebSocket over HTTP, then Debugger.enable and Debugger.pause:
 * V8 stops the main thread at its next interrupt check, which a busy loop
 * reaches too, and Debugger.paused carries the JavaScript frames. Node's
 * --report-on-signal cannot do this: its handler is JavaScript, which a
 * busy loop never lets run. An idle loop (a promise that never settles)
 * never pauses: that is said so. Every read is bounded in time and
 * bytes; the process is resumed before we hang up. */
#include "buildconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json/json.h"
#include "stacks_int.h"

#define NODE_READ_MAX	(32 << 20)	/* protocol bytes read, in all */
#define NODE_MSG_MAX	(8 << 20)	/* one message */
#define NODE_SCRIPTS	65536		/* script ids remembered */
#define NODE_FRAMES	64

struct conn {
	int		 fd;
	int64_t		 deadline_us;
	atomic_int	*cancel;
	char		 buf[16384];
	size_t		 off, len;
	size_t		 total;
};

/* Up to n bytes into p, waiting for the first until the deadline. Bytes
 * read, 0 at EOF, -1 on error, timeout or cancel. */
static ssize_t
conn_read(struct conn *c, void *p, size_t n)
{
	ssize_t	 k;

	if (c->off < c->len) {
		k = (ssize_t)(c->len - c->off < n ? c->len - c->off : n);
		memcpy(p, c->buf + c->off, (size_t)k);
		c->off += (size_t)k;
		return k;
	}
	for (;;) {
		struct pollfd pfd = { c->fd, POLLIN, 0 };
		int64_t	 left = (c->deadline_us - flaky_mono_us()) / 1000;

		if (left <= 0 || atomic_load(c->cancel) ||
		    c->total > NODE_READ_MAX)
			return -1;
		if (poll(&pfd, 1, left > 50 ? 50 : (int)left) <= 0)
			continue;
		k = read(c->fd, c->buf, sizeof c->buf);
		if (k == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return k;
		c->total += (size_t)k;
		c->off = 0;
		c->len = (size_t)k;
		return conn_read(c, p, n);
	}
}

/* Exactly n bytes (p may be NULL: skipped). 0 or -1. */
static int
conn_full(struct conn *c, void *p, size_t n)
{
	char	 skip[4096];

	while (n > 0) {
		size_t	 want = p != NULL ? n : n < sizeof skip ? n : sizeof skip;
		ssize_t	 k = conn_read(c, p != NULL ? p : skip, want);

		if (k <= 0)
			return -1;
		if (p != NULL)
			p = (char *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* Write all of s, within the deadline. 0 or -1. */
static int
conn_write(struct conn *c, const void *s, size_t n)
{
	while (n > 0) {
		struct pollfd pfd = { c->fd, POLLOUT, 0 };
		int64_t	 left = (c->deadline_us - flaky_mono_us()) / 1000;
		ssize_t	 k;

		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, left > 50 ? 50 : (int)left) <= 0)
			continue;
		k = send(c->fd, s, n, MSG_NOSIGNAL);
		if (k == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (k <= 0)
			return -1;
		s = (const char *)s + k;
		n -= (size_t)k;
	}
	return 0;
}

/* Connect to 127.0.0.1:port, non-blocking, within the deadline. */
static int
conn_open(struct conn *c, int port)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->off = c->len = 0;
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return -1;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) == -1 &&
	    errno != EINPROGRESS)
		return -1;
	for (;;) {
		struct pollfd pfd = { c->fd, POLLOUT, 0 };
		int64_t	 left = (c->deadline_us - flaky_mono_us()) / 1000;
		int	 e = 0;
		socklen_t el = sizeof e;

		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, left > 50 ? 50 : (int)left) <= 0)
			continue;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) == -1 ||
		    e != 0)
			return -1;
		return 0;
	}
}

static void
conn_close(struct conn *c)
{
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

/* The socket inodes pid holds, into v (at most max); how many. */
static size_t
socket_inodes(pid_t pid, unsigned long *v, size_t max)
{
	struct dirent	*de;
	DIR		*dir;
	char		 path[64], link[64];
	size_t		 n = 0;

	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return 0;
	while (n < max && (de = readdir(dir)) != NULL) {
		char	 fp[384];
		ssize_t	 k;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(fp, sizeof fp, "%s/%s", path, de->d_name);
		if ((k = readlink(fp, link, sizeof link - 1)) <= 0)
			continue;
		link[k] = '\0';
		if (strncmp(link, "socket:[", 8) == 0)
			v[n++] = strtoul(link + 8, NULL, 10);
	}
	closedir(dir);
	return n;
}

/* The port of a socket of pid listening on 127.0.0.1 that is not among
 * old (the listeners it had before the signal), or 0. */
static int
inspector_port(pid_t pid, const unsigned long *old, size_t nold)
{
	unsigned long	 mine[1024];
	size_t		 n = socket_inodes(pid, mine, 1024);
	char		 path[64], line[512];
	FILE		*f;
	int		 port = 0;

	snprintf(path, sizeof path, "/proc/%d/net/tcp", (int)pid);
	if (n == 0 || (f = fopen(path, "re")) == NULL)
		return 0;
	while (port == 0 && fgets(line, sizeof line, f) != NULL) {
		unsigned int	 addr, lport, st;
		unsigned long	 ino;
		int		 is_new = 1, is_mine = 0;

		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x "
		    "%*u %*u %lu", &addr, &lport, &st, &ino) != 4 ||
		    st != 0x0A)
			continue;
		for (size_t i = 0; i < n; i++)
			is_mine |= mine[i] == ino;
		for (size_t i = 0; i < nold; i++)
			is_new &= old[i] != ino;
		if (is_mine && is_new)
			port = (int)lport;
	}
	fclose(f);
	return port;
}

/* GET /json/list: the path of the first target's WebSocket, or NULL. */
static char *
ws_path(struct conn *c, int port)
{
	struct flaky_json_limits lim = { 1 << 20, 16, 65536 };
	struct flaky_json *j = NULL;
	struct flaky_buf b;
	char	 req[256], err[128], *body, *res = NULL, *cl;
	const char *url;
	size_t	 need;

	flaky_buf_init(&b);
	snprintf(req, sizeof req, "GET /json/list HTTP/1.1\r\nHost: "
	    "127.0.0.1:%d\r\n\r\n", port);
	if (conn_open(c, port) < 0 || conn_write(c, req, strlen(req)) < 0)
		goto out;
	for (;;) {
		char	 chunk[4096];
		ssize_t	 k = conn_read(c, chunk, sizeof chunk);

		if (k <= 0 || b.len > (1 << 20))
			goto out;
		flaky_buf_add(&b, chunk, (size_t)k);
		flaky_buf_cstr(&b);
		if ((body = strstr(b.data, "\r\n\r\n")) == NULL)
			continue;
		body += 4;
		if ((cl = strcasestr(b.data, "Content-Length:")) == NULL ||
		    cl > body)
			goto out;
		need = strtoul(cl + 15, NULL, 10);
		if ((size_t)(b.data + b.len - body) >= need)
			break;
	}
	if (flaky_json_parse(body, need, &lim, &j, err, sizeof err) < 0 ||
	    j->type != FLAKY_JSON_ARRAY || j->len == 0 ||
	    (url = flaky_json_get_str(&j->items[0],
	    "webSocketDebuggerUrl")) == NULL ||
	    strncmp(url, "ws://", 5) != 0 || strchr(url + 5, '/') == NULL)
		goto out;
	res = strdup(strchr(url + 5, '/'));
out:
	flaky_json_free(j);
	flaky_buf_free(&b);
	conn_close(c);
	return res;
}

/* One masked text frame (a client's must be masked; a zero key is one). */
static int
ws_send(struct conn *c, const char *s)
{
	unsigned char	 h[8];
	size_t		 n = strlen(s), hl = 0;

	h[hl++] = 0x81;
	if (n < 126)
		h[hl++] = (unsigned char)(0x80 | n);
	else {
		h[hl++] = 0x80 | 126;
		h[hl++] = (unsigned char)(n >> 8);
		h[hl++] = (unsigned char)n;
	}
	h[hl++] = 0, h[hl++] = 0, h[hl++] = 0, h[hl++] = 0;
	return conn_write(c, h, hl) < 0 || conn_write(c, s, n) < 0 ? -1 : 0;
}

/* The next whole message into b (a frame too big is skipped and read as
 * empty). 0, or -1 at the end of the connection or the bounds. */
static int
ws_recv(struct conn *c, struct flaky_buf *b)
{
	unsigned char	 h[2], ext[8];
	uint64_t	 n;
	int		 fin = 0, skip = 0;

	flaky_buf_reset(b);
	while (!fin) {
		if (conn_full(c, h, 2) < 0)
			return -1;
		fin = h[0] & 0x80;
		n = h[1] & 0x7f;
		if (n == 126) {
			if (conn_full(c, ext, 2) < 0)
				return -1;
			n = (uint64_t)ext[0] << 8 | ext[1];
		} else if (n == 127) {
			if (conn_full(c, ext, 8) < 0)
				return -1;
			n = 0;
			for (int i = 0; i < 8; i++)
				n = n << 8 | ext[i];
		}
		if ((h[0] & 0x0f) == 0x8 || n > NODE_READ_MAX)
			return -1;	/* close */
		if (h[1] & 0x80 && conn_full(c, NULL, 4) < 0)
			return -1;
		if (skip || b->len + n > NODE_MSG_MAX) {
			skip = 1;
			if (conn_full(c, NULL, (size_t)n) < 0)
				return -1;
			continue;
		}
		while (n > 0) {
			char	 chunk[4096];
			size_t	 want = n < sizeof chunk ? (size_t)n :
			    sizeof chunk;

			if (conn_full(c, chunk, want) < 0)
				return -1;
			flaky_buf_add(b, chunk, want);
			n -= want;
		}
	}
	if (skip)
		flaky_buf_reset(b);
	flaky_buf_cstr(b);
	return b->oom ? -1 : 0;
}

struct script {
	char		*id;
	char		*url;
};

/* Remember a script's id and URL from Debugger.scriptParsed. */
static void
script_add(struct script *s, size_t *n, const struct flaky_json *msg)
{
	const struct flaky_json *p = flaky_json_get(msg, "params");
	const char	*id = flaky_json_get_str(p, "scriptId");
	const char	*url = flaky_json_get_str(p, "url");

	if (*n >= NODE_SCRIPTS || id == NULL || url == NULL || *url == '\0')
		return;
	if ((s[*n].id = strdup(id)) == NULL ||
	    (s[*n].url = strdup(url)) == NULL) {
		free(s[*n].id);
		return;
	}
	(*n)++;
}

/* A frame's place: file:///x/y.js becomes /x/y.js. */
static const char *
script_url(const struct script *s, size_t n, const struct flaky_json *loc,
    const char *url)
{
	const char	*id = flaky_json_get_str(loc, "scriptId");

	if ((url == NULL || *url == '\0') && id != NULL)
		for (size_t i = n; i-- > 0;)
			if (strcmp(s[i].id, id) == 0) {
				url = s[i].url;
				break;
			}
	if (url == NULL || *url == '\0')
		return "<unknown>";
	return strncmp(url, "file://", 7) == 0 ? url + 7 : url;
}

/* The frames of Debugger.paused as Node prints a stack. */
static void
format_paused(const struct flaky_json *msg, const struct script *s,
    size_t ns, struct flaky_buf *out)
{
	const struct flaky_json *fr = flaky_json_get(flaky_json_get(msg,
	    "params"), "callFrames");

	flaky_buf_adds(out, "Thread main (JavaScript, paused by the "
	    "inspector):\n");
	for (size_t i = 0; fr != NULL && fr->type == FLAKY_JSON_ARRAY &&
	    i < fr->len && i < NODE_FRAMES; i++) {
		const struct flaky_json *f = &fr->items[i];
		const struct flaky_json *loc = flaky_json_get(f, "location");
		const char	*fn = flaky_json_get_str(f, "functionName");
		double		 line = flaky_json_get_num(loc, "lineNumber");
		double		 col = flaky_json_get_num(loc, "columnNumber");

		flaky_buf_printf(out, "    at %s (%s:%d:%d)\n",
		    fn != NULL && *fn != '\0' ? fn : "<anonymous>",
		    script_url(s, ns, loc, flaky_json_get_str(f, "url")),
		    line == line ? (int)line + 1 : 0,
		    col == col ? (int)col + 1 : 0);
	}
}

/* Which Jest test runs, asked of jest-circus in the paused frame: the
 * test file and the titles from its describe blocks down ("a › b").
 * Jest prints a file's results once the file ends, so a run killed in
 * it names none; this does (the pipeline makes it the TIMEOUT test).
 * jest-circus keeps its state under a symbol of its own (not Symbol.for),
 * found among the global's symbols by its description. */
static const char jest_expr[] =
"(function(){try{var g=globalThis,k=Object.getOwnPropertySymbols(g)"
".filter(function(x){return String(x)==='Symbol(JEST_STATE_SYMBOL)';})[0];"
"var t=k&&g[k]&&g[k].currentlyRunningTest,p=[];while(t&&t.parent){"
"p.unshift(t.name);t=t.parent;}var f=typeof expect!=='undefined'&&"
"expect.getState?expect.getState().testPath:'';return p.length&&f?"
"f+'\\n'+p.join(' \\u203a '):'';}catch(e){return '';}})()";

/* Ask it in the top frame of paused; "flaky: test file:" and "flaky: test
 * name:" lines into out when it answers. msg is scratch. */
static void
jest_test(struct conn *c, const struct flaky_json *paused,
    struct flaky_buf *msg, struct flaky_buf *out)
{
	struct flaky_json_limits lim = { 1 << 20, 32, 65536 };
	const struct flaky_json *fr = flaky_json_get(flaky_json_get(paused,
	    "params"), "callFrames");
	const char	*id, *v, *nl;
	struct flaky_buf req;
	struct flaky_json *j;
	char		 err[64];

	if (fr == NULL || fr->type != FLAKY_JSON_ARRAY || fr->len == 0 ||
	    (id = flaky_json_get_str(&fr->items[0], "callFrameId")) == NULL)
		return;
	flaky_buf_init(&req);
	flaky_buf_adds(&req, "{\"id\":4,\"method\":\"Debugger."
	    "evaluateOnCallFrame\",\"params\":{\"callFrameId\":");
	flaky_json_escape_str(&req, id);
	flaky_buf_adds(&req, ",\"expression\":");
	flaky_json_escape_str(&req, jest_expr);
	flaky_buf_adds(&req, ",\"returnByValue\":true,\"silent\":true}}");
	if (req.oom || ws_send(c, flaky_buf_cstr(&req)) < 0) {
		flaky_buf_free(&req);
		return;
	}
	flaky_buf_free(&req);
	while (ws_recv(c, msg) == 0) {
		if (strncmp(msg->data, "{\"id\":4,", 8) != 0)
			continue;
		if (flaky_json_parse(msg->data, msg->len, &lim, &j, err,
		    sizeof err) < 0)
			return;
		v = flaky_json_get_str(flaky_json_get(flaky_json_get(j,
		    "result"), "result"), "value");
		if (v != NULL && (nl = strchr(v, '\n')) != NULL &&
		    strchr(nl + 1, '\n') == NULL && strlen(v) < 4096)
			flaky_buf_printf(out, "flaky: test file: %.*s\n"
			    "flaky: test name: %s\n", (int)(nl - v), v, nl + 1);
		flaky_json_free(j);
		return;
	}
}

/* Talk to the inspector on port until the main thread pauses. */
static int
inspect(struct conn *c, int port, struct flaky_buf *out, char *note,
    size_t notelen)
{
	struct flaky_json_limits lim = { NODE_MSG_MAX, 256, 1 << 20 };
	struct script	*scripts;
	struct flaky_buf msg;
	char		*path, req[512], err[128];
	size_t		 ns = 0;
	int		 r = -ETIMEDOUT, sent_pause = 0;

	if ((path = ws_path(c, port)) == NULL) {
		snprintf(note, notelen, "the inspector on port %d gave no "
		    "target", port);
		return -EPROTO;
	}
	if ((scripts = calloc(NODE_SCRIPTS, sizeof *scripts)) == NULL) {
		free(path);
		return -ENOMEM;
	}
	flaky_buf_init(&msg);
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
	    "Zmxha3ktc3RhY2tzLTMzIQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
	    path, port);
	if (conn_open(c, port) < 0 || conn_write(c, req, strlen(req)) < 0)
		goto out;
	/* the answer's head, byte by byte: the frames follow it at once */
	for (size_t got = 0; got < 4096;) {
		char	 ch;

		if (conn_read(c, &ch, 1) <= 0)
			goto out;
		flaky_buf_addc(&msg, ch);
		got++;
		if (msg.len >= 4 && memcmp(msg.data + msg.len - 4,
		    "\r\n\r\n", 4) == 0)
			break;
	}
	if (msg.len < 12 || memcmp(msg.data + 9, "101", 3) != 0)
		goto out;
	if (ws_send(c, "{\"id\":1,\"method\":\"Debugger.enable\"}") < 0)
		goto out;
	while (ws_recv(c, &msg) == 0) {
		struct flaky_json *j = NULL;
		int	 paused = strstr(msg.data, "\"Debugger.paused\"") != NULL;

		/* after enable's answer: every script is known by then */
		if (!sent_pause && strstr(msg.data, "\"id\":1") != NULL &&
		    strstr(msg.data, "\"method\"") == NULL) {
			if (ws_send(c, "{\"id\":2,\"method\":"
			    "\"Debugger.pause\"}") < 0)
				break;
			sent_pause = 1;
			continue;
		}
		if (!paused && strstr(msg.data, "\"Debugger.scriptParsed\"") ==
		    NULL)
			continue;
		if (flaky_json_parse(msg.data, msg.len, &lim, &j, err,
		    sizeof err) < 0)
			continue;
		if (!paused)
			script_add(scripts, &ns, j);
		else {
			format_paused(j, scripts, ns, out);
			jest_test(c, j, &msg, out);
		}
		flaky_json_free(j);
		if (paused) {
			r = 0;
			ws_send(c, "{\"id\":3,\"method\":\"Debugger.resume\"}");
			break;
		}
	}
	if (r < 0 && sent_pause) {
		/* Nothing ran to be paused: the loop waits on something. */
		flaky_buf_adds(out, "Thread main (JavaScript): idle, no "
		    "JavaScript ran (the event loop waits on a promise, a "
		    "timer or I/O that never comes)\n");
		snprintf(note, notelen, "the main thread did not pause within "
		    "the bound: idle");
		r = 0;
	} else if (r < 0)
		snprintf(note, notelen, "the inspector did not answer within "
		    "the bound");
out:
	conn_close(c);
	flaky_buf_free(&msg);
	for (size_t i = 0; i < ns; i++) {
		free(scripts[i].id);
		free(scripts[i].url);
	}
	free(scripts);
	free(path);
	return r;
}

/* Node: SIGUSR1, the inspector's new port, the paused main thread. 0
 * with out filled, or -errno with note saying why not. */
int
stacks_node(pid_t pid, int64_t deadline_us, atomic_int *cancel,
    struct flaky_buf *out, char *note, size_t notelen)
{
	struct conn	 c = { .fd = -1, .deadline_us = deadline_us,
			    .cancel = cancel };
	unsigned long	 old[1024];
	size_t		 nold;
	int		 port = 0, r;

	if (!stacks_caught(pid, SIGUSR1)) {
		snprintf(note, notelen, "SIGUSR1 is not Node's here: no "
		    "inspector to ask");
		return -ENOTSUP;
	}
	nold = socket_inodes(pid, old, 1024);
	if (kill(pid, SIGUSR1) == -1) {
		snprintf(note, notelen, "signal: %s", strerror(errno));
		return -errno;
	}
	while (port == 0 && flaky_mono_us() < deadline_us &&
	    !atomic_load(cancel)) {
		stacks_nap();
		port = inspector_port(pid, old, nold);
	}
	if (port == 0) {
		snprintf(note, notelen, "the inspector did not listen within "
		    "the bound");
		return -ETIMEDOUT;
	}
	r = inspect(&c, port, out, note, notelen);
	return r;
}
