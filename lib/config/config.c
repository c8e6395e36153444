/* The YAML schedule file. libyaml's document API gives a tree whose nodes
 * carry their position, so every check can name FILE:LINE:COL; the walk
 * below follows the fixed shape of the file (it never recurses on user
 * data) and counts the nodes it visits, so aliases cannot blow it up. */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "config/config.h"
#include "config_limits.h"
#include "sched/sched.h"
#include "util/util.h"

/* The walk's own bound on nodes looked at, aliases counted: the limits
 * pass (config_limits.c) already refuses more, this keeps the walk safe
 * should the two ever disagree. */
#define MAX_VISITS	CONFIG_MAX_NODES
#define MAX_SCALAR	CONFIG_MAX_SCALAR
#define MAX_REGEX	4096
/* Compiled patterns cost memory and time far beyond their text (about
 * 3 KB and 15 us each for a short one, with glibc): bound them in the
 * whole file, aliases counted, or a list shared by alias is a bomb. */
#define MAX_PATTERNS	1000
#define MAX_PATTERN_BYTES (64 * 1024)
#define MAX_ITEMS	10000		/* argv words, env entries, patterns */
#define DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"

struct ctx {
	const char	*file;		/* for messages */
	char		*basedir;	/* for relative paths */
	yaml_document_t	*doc;
	unsigned	 flags;
	size_t		 visits;
	size_t		 npatterns;	/* compiled so far, and their bytes */
	size_t		 pattern_bytes;
	char		*err;
	size_t		 errlen;
	struct flaky_config *cfg;
};

/* One line "FILE:LINE:COL: message" about node n; returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
cfg_err(struct ctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	va_list	 ap;
	size_t	 off;
	int	 w;

	if (c->err == NULL || c->errlen == 0)
		return -EINVAL;
	w = snprintf(c->err, c->errlen, "%s:%zu:%zu: ", c->file,
	    n != NULL ? n->start_mark.line + 1 : 1,
	    n != NULL ? n->start_mark.column + 1 : 1);
	off = w < 0 ? 0 : (size_t)w;
	if (off < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + off, c->errlen - off, fmt, ap);
		va_end(ap);
	}
	/* One line, whatever the user's text held. */
	for (char *p = c->err; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return -EINVAL;
}

/* Report an allocation failure. */
static int
nomem(struct ctx *c)
{
	flaky_error(c->err, c->errlen, ENOMEM, "%s: out of memory", c->file);
	return -ENOMEM;
}

/* Is a node YAML's null (an empty or ~ or null plain scalar)? */
static int
is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE ||
	    n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return 0;
	v = (const char *)n->data.scalar.value;
	return *v == '\0' || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
	    strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

/* How a value looks in a message: a quoted, bounded, printable copy of a
 * scalar, or what kind of node it is. */
static const char *
describe(const yaml_node_t *n, char *buf, size_t len)
{
	const unsigned char *v;
	size_t	 i, o = 0, vlen;

	if (n->type == YAML_SEQUENCE_NODE)
		return n->data.sequence.items.top ==
		    n->data.sequence.items.start ? "an empty sequence" :
		    "a sequence";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (is_null(n))
		return "null";
	v = n->data.scalar.value;
	vlen = n->data.scalar.length;
	buf[o++] = '"';
	for (i = 0; i < vlen && o + 5 < len; i++)
		buf[o++] = v[i] >= 0x20 && v[i] != 0x7f ? (char)v[i] : '?';
	if (i < vlen) {
		/* Cut on a character boundary, then mark the cut. */
		size_t	 lead = o, need;

		while (lead > 1 &&
		    ((unsigned char)buf[lead - 1] & 0xc0) == 0x80)
			lead--;
		if (lead > 1) {
			unsigned char c = (unsigned char)buf[lead - 1];

			need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 :
			    c >= 0xc0 ? 2 : 1;
			if (o - (lead - 1) < need)
				o = lead - 1;
		}
		buf[o++] = '.';
		buf[o++] = '.';
		buf[o++] = '.';
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

#define GOT(n)	describe((n), gotbuf, sizeof gotbuf)

/* A node by index, counted against the visit bound. */
static yaml_node_t *
node_at(struct ctx *c, int index)
{
	c->visits++;
	return yaml_document_get_node(c->doc, index);
}

/* A scalar's text; checks it is a string without NUL bytes. */
static int
get_text(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, const char **ret)
{
	char	 gotbuf[80];

	if (n->type != YAML_SCALAR_NODE || is_null(n))
		return cfg_err(c, n, "%s: expected %s, got %s", key, expect,
		    GOT(n));
	if (n->data.scalar.length > MAX_SCALAR ||
	    memchr(n->data.scalar.value, '\0', n->data.scalar.length) != NULL)
		return cfg_err(c, n, "%s: expected %s, got a value with a NUL "
		    "byte or longer than %d bytes", key, expect, MAX_SCALAR);
	*ret = (const char *)n->data.scalar.value;
	return 0;
}

/* A scalar as an allocated string. */
static int
get_str(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, char **ret)
{
	const char *v = NULL;	/* set unless an error (gcc -O3 cannot tell) */
	int	 r;

	if ((r = get_text(c, n, key, expect, &v)) < 0)
		return r;
	free(*ret);
	if ((*ret = strdup(v)) == NULL)
		return nomem(c);
	return 0;
}

/* A bounded integer. */
static int
get_int(struct ctx *c, const yaml_node_t *n, const char *key, int min,
    int max, int *ret)
{
	char		 gotbuf[80];
	long long	 v;

	if (n->type != YAML_SCALAR_NODE || flaky_parse_int(
	    (const char *)n->data.scalar.value, min, max, &v) < 0)
		return cfg_err(c, n, "%s: expected an integer from %d to %d, "
		    "got %s", key, min, max, GOT(n));
	*ret = (int)v;
	return 0;
}

/* A YAML 1.1 boolean, unquoted. */
static int
get_bool(struct ctx *c, const yaml_node_t *n, const char *key, int *ret)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	char	 gotbuf[80];
	const char *v = (const char *)n->data.scalar.value;

	if (n->type == YAML_SCALAR_NODE &&
	    n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
		for (size_t i = 0; i < FLAKY_ARRAY_SIZE(yes); i++) {
			if (strcasecmp(v, yes[i]) == 0) {
				*ret = 1;
				return 0;
			}
			if (strcasecmp(v, no[i]) == 0) {
				*ret = 0;
				return 0;
			}
		}
	}
	return cfg_err(c, n, "%s: expected true or false, got %s", key, GOT(n));
}

/* A duration of at least min_ms. */
static int
get_duration(struct ctx *c, const yaml_node_t *n, const char *key,
    int64_t min_ms, int64_t *ret)
{
	char	 gotbuf[80];
	int64_t	 ms;

	if (n->type != YAML_SCALAR_NODE || is_null(n) ||
	    flaky_parse_duration((const char *)n->data.scalar.value, &ms) < 0)
		return cfg_err(c, n, "%s: expected a duration such as 30s, 10m "
		    "or 1h30m, got %s", key, GOT(n));
	if (ms < min_ms)
		return cfg_err(c, n, "%s: expected a duration above 0 such as "
		    "30s, 10m or 1h30m, got %s", key, GOT(n));
	*ret = ms;
	return 0;
}

/* A relative path becomes one under the file's directory. */
static int
get_path(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, char **ret)
{
	const char *v = NULL;
	int	 r;

	if ((r = get_text(c, n, key, expect, &v)) < 0)
		return r;
	free(*ret);
	*ret = NULL;
	if (v[0] == '/')
		*ret = strdup(v);
	else if (strcmp(v, ".") == 0)
		*ret = strdup(c->basedir);
	else if (asprintf(ret, "%s/%s", c->basedir,
	    strncmp(v, "./", 2) == 0 ? v + 2 : v) < 0)
		*ret = NULL;
	return *ret == NULL ? nomem(c) : 0;
}

/* Does the pattern repeat a repetition ("a++", "a*{9}", "(a+)+" is fine)?
 * glibc's regcomp copies the repeated tree for each level, so stacked
 * counts make it exhaust memory on a short pattern. */
static int
stacked_repetition(const char *v)
{
	int	 prev_rep = 0, in_class = 0;

	for (const char *p = v; *p != '\0'; p++) {
		int	 rep = 0;

		if (*p == '\\' && p[1] != '\0') {
			p++;
			prev_rep = 0;
			continue;
		}
		if (in_class) {
			if (*p == ']')
				in_class = 0;
			continue;
		}
		if (*p == '[') {
			in_class = 1;
			if (p[1] == '^')
				p++;
			if (p[1] == ']')
				p++;
			prev_rep = 0;
			continue;
		}
		if (*p == '*' || *p == '+' || *p == '?')
			rep = 1;
		else if (*p == '{') {
			const char *e = strchr(p, '}');

			if (e != NULL) {
				rep = 1;
				p = e;
			}
		}
		if (rep && prev_rep)
			return 1;
		prev_rep = rep;
	}
	return 0;
}

/* Compile a regular expression; a bad one is an error with the reason. */
static int
get_regex(struct ctx *c, const yaml_node_t *n, const char *key,
    struct flaky_regex *ret)
{
	char	 gotbuf[80], msg[128];
	const char *v;
	int	 r;

	if ((r = get_text(c, n, key, "a regular expression", &v)) < 0)
		return r;
	if (strlen(v) > MAX_REGEX)
		return cfg_err(c, n, "%s: expected a regular expression of at "
		    "most %d bytes, got %zu", key, MAX_REGEX, strlen(v));
	if (++c->npatterns > MAX_PATTERNS)
		return cfg_err(c, n, "%s: expected at most %d regular "
		    "expressions in the file (the pattern limit), got more",
		    key, MAX_PATTERNS);
	if ((c->pattern_bytes += strlen(v)) > MAX_PATTERN_BYTES)
		return cfg_err(c, n, "%s: expected at most %d bytes of regular "
		    "expressions in the file (the pattern size limit), got "
		    "more", key, MAX_PATTERN_BYTES);
	if (stacked_repetition(v))
		return cfg_err(c, n, "%s: expected a regular expression without "
		    "a repetition of a repetition (such as a++ or a*{9}), got %s",
		    key, GOT(n));
	if ((r = regcomp(&ret->re, v, REG_EXTENDED | REG_NEWLINE)) != 0) {
		regerror(r, &ret->re, msg, sizeof msg);
		return cfg_err(c, n, "%s: expected a POSIX extended regular "
		    "expression, got %s (%s)", key, GOT(n), msg);
	}
	if ((ret->src = strdup(v)) == NULL) {
		regfree(&ret->re);
		return nomem(c);
	}
	return 0;
}

/* Items of a sequence node, with a bound on their number. */
static int
get_seq(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, yaml_node_item_t **ret_items, size_t *ret_n)
{
	char	 gotbuf[80];
	size_t	 cnt;

	if (n->type != YAML_SEQUENCE_NODE)
		return cfg_err(c, n, "%s: expected %s, got %s", key, expect,
		    GOT(n));
	cnt = (size_t)(n->data.sequence.items.top -
	    n->data.sequence.items.start);
	if (cnt > MAX_ITEMS)
		return cfg_err(c, n, "%s: expected at most %d items, got %zu",
		    key, MAX_ITEMS, cnt);
	c->visits += cnt;
	if (c->visits > MAX_VISITS)
		return cfg_err(c, n, "expected a file of at most %d values "
		    "with aliases expanded", MAX_VISITS);
	*ret_items = n->data.sequence.items.start;
	*ret_n = cnt;
	return 0;
}

/* Walk a mapping's keys against a list of known keys: unknown and
 * duplicate keys are errors; values[i] gets the value of keys[i]. */
static int
get_keys(struct ctx *c, const yaml_node_t *map, const char *what,
    const char *const *keys, size_t nkeys, yaml_node_t **values)
{
	yaml_node_t	*key_nodes[32];
	yaml_node_pair_t *p;
	char		 gotbuf[80], list[512];
	size_t		 i, o = 0;

	if (map->type != YAML_MAPPING_NODE)
		return cfg_err(c, map, "%s: expected a mapping, got %s",
		    what != NULL ? what : "settings", GOT(map));
	memset(key_nodes, 0, sizeof key_nodes);
	for (i = 0; i < nkeys; i++)
		values[i] = NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
		const char *name;

		if (c->visits > MAX_VISITS)
			return cfg_err(c, k, "expected a file of at most %d "
			    "values with aliases expanded", MAX_VISITS);
		if (k == NULL || v == NULL)
			return cfg_err(c, map, "broken mapping");
		if (k->type != YAML_SCALAR_NODE || is_null(k))
			return cfg_err(c, k, "%s%sexpected a key name, got %s",
			    what != NULL ? what : "", what != NULL ? ": " : "",
			    GOT(k));
		name = (const char *)k->data.scalar.value;
		for (i = 0; i < nkeys; i++)
			if (strcmp(name, keys[i]) == 0)
				break;
		if (i == nkeys) {
			for (size_t j = 0; j < nkeys && o < sizeof list; j++)
				o += (size_t)snprintf(list + o, sizeof list - o,
				    "%s%s", j == 0 ? "" : j + 1 == nkeys ?
				    " or " : ", ", keys[j]);
			return cfg_err(c, k, "%s%sunknown key %s, expected %s",
			    what != NULL ? what : "", what != NULL ? ": " : "",
			    GOT(k), list);
		}
		if (key_nodes[i] != NULL)
			return cfg_err(c, k, "%s%sduplicate key %s, first at "
			    "line %zu", what != NULL ? what : "",
			    what != NULL ? ": " : "", GOT(k),
			    key_nodes[i]->start_mark.line + 1);
		key_nodes[i] = k;
		values[i] = v;
	}
	return 0;
}

/* Is s 1 to 64 letters, digits or characters from extra? */
static int
name_ok(const char *s, const char *extra)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > FLAKY_CONFIG_MAX_NAME)
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return 0;
	return 1;
}

/* Is path an executable regular file? 0, or why not (-ENOENT, -EISDIR,
 * -EACCES). */
static int
exec_ok(const char *path)
{
	struct stat	 st;

	if (stat(path, &st) < 0)
		return -ENOENT;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

/* Check that the target's argv[0] resolves as execvp would find it in
 * the target's dir: a name with a slash directly (relative to dir), else
 * through PATH (the target's env PATH when it sets one). */
static int
check_command(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	const char	*word = t->argv[0], *path = NULL, *p, *e;
	char		 buf[PATH_MAX];
	int		 r;

	if (strchr(word, '/') != NULL) {
		if (word[0] == '/')
			r = exec_ok(word);
		else if ((size_t)snprintf(buf, sizeof buf, "%s/%s", t->dir,
		    word) >= sizeof buf)
			r = -ENOENT;
		else
			r = exec_ok(buf);
		if (r == 0)
			return 0;
		return cfg_err(c, n, "command: expected an executable file, "
		    "\"%s\" %s", word, r == -ENOENT ? "does not exist" :
		    r == -EISDIR ? "is a directory" : "is not executable");
	}
	for (size_t i = 0; i < t->nenv; i++)
		if (strcmp(t->env[i].name, "PATH") == 0)
			path = t->env[i].value;
	if (path == NULL && (path = getenv("PATH")) == NULL)
		path = DEFAULT_PATH;
	for (p = path;; p = e + 1) {
		size_t	 len;
		int	 w;

		e = strchr(p, ':');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == 0)
			w = snprintf(buf, sizeof buf, "%s/%s", t->dir, word);
		else if (p[0] != '/')
			w = snprintf(buf, sizeof buf, "%s/%.*s/%s", t->dir,
			    (int)len, p, word);
		else
			w = snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p,
			    word);
		if (w > 0 && (size_t)w < sizeof buf && exec_ok(buf) == 0)
			return 0;
		if (e == NULL)
			break;
	}
	return cfg_err(c, n, "command: expected a program in PATH, \"%s\" was "
	    "not found", word);
}

static const char *const target_keys[] = {
	"name", "command", "dir", "schedule", "runs", "timeout", "env",
	"jitter", "overlap", "catch_up", "isolate", "revision", "confirm",
	"scan", "junit", "confirm_budget",
};
enum {
	T_NAME, T_COMMAND, T_DIR, T_SCHEDULE, T_RUNS, T_TIMEOUT, T_ENV,
	T_JITTER, T_OVERLAP, T_CATCH_UP, T_ISOLATE, T_REVISION, T_CONFIRM,
	T_SCAN, T_JUNIT, T_CONFIRM_BUDGET, T_NKEYS
};

/* command: a list is argv, a string is /bin/sh -c STRING. */
static int
parse_command(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	yaml_node_item_t *items;
	const char	*v;
	size_t		 cnt;
	int		 r;

	if (n->type == YAML_SCALAR_NODE) {
		if ((r = get_text(c, n, "command", "a program and its "
		    "arguments or a shell command", &v)) < 0)
			return r;
		if (*v == '\0')
			return cfg_err(c, n, "command: expected a shell "
			    "command, got \"\"");
		if ((t->argv = calloc(4, sizeof *t->argv)) == NULL)
			return nomem(c);
		t->argc = 3;
		t->shell = 1;
		if ((t->argv[0] = strdup("/bin/sh")) == NULL ||
		    (t->argv[1] = strdup("-c")) == NULL ||
		    (t->argv[2] = strdup(v)) == NULL)
			return nomem(c);
		return 0;
	}
	if ((r = get_seq(c, n, "command", "a program and its arguments or a "
	    "shell command", &items, &cnt)) < 0)
		return r;
	if (cnt == 0)
		return cfg_err(c, n, "command: expected a program and its "
		    "arguments, got an empty sequence");
	if ((t->argv = calloc(cnt + 1, sizeof *t->argv)) == NULL)
		return nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		yaml_node_t *w = yaml_document_get_node(c->doc, items[i]);

		if ((r = get_str(c, w, "command", "a word", &t->argv[i])) < 0)
			return r;
		t->argc++;
	}
	if (t->argv[0][0] == '\0')
		return cfg_err(c, yaml_document_get_node(c->doc, items[0]),
		    "command: expected a program name, got \"\"");
	return 0;
}

/* A name's hash, for the duplicate check of env: names. */
static size_t
name_hash(const char *s)
{
	uint32_t	 h = 2166136261u;	/* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* env: a mapping of variable names to string values. Duplicates are found
 * through a hash of the names seen: a linear search per name made one
 * env of 10,000 names, shared by alias among 49 targets, cost 12 s. */
static int
parse_env(struct ctx *c, struct flaky_target *t, const yaml_node_t *n)
{
	yaml_node_pair_t *p;
	char		 gotbuf[80];
	size_t		 cnt, nslots = 16, *slots = NULL;	/* index + 1 */
	int		 r = 0;

	if (n->type != YAML_MAPPING_NODE)
		return cfg_err(c, n, "env: expected a mapping of variables, "
		    "got %s", GOT(n));
	cnt = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
	if (cnt > MAX_ITEMS)
		return cfg_err(c, n, "env: expected at most %d variables, got "
		    "%zu", MAX_ITEMS, cnt);
	while (nslots < 2 * cnt)
		nslots *= 2;
	if ((t->env = calloc(cnt + 1, sizeof *t->env)) == NULL ||
	    (slots = calloc(nslots, sizeof *slots)) == NULL)
		return nomem(c);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
	    p++) {
		yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
		const char *name;
		size_t	 h;

		if (c->visits > MAX_VISITS) {
			r = cfg_err(c, k, "expected a file of at most %d "
			    "values with aliases expanded", MAX_VISITS);
			goto out;
		}
		if (k->type != YAML_SCALAR_NODE || is_null(k) ||
		    (name = (const char *)k->data.scalar.value,
		    !name_ok(name, "_")) || isdigit((unsigned char)name[0])) {
			r = cfg_err(c, k, "env: expected a variable name of "
			    "letters, digits and _, got %s", GOT(k));
			goto out;
		}
		for (h = name_hash(name) & (nslots - 1); slots[h] != 0;
		    h = (h + 1) & (nslots - 1))
			if (strcmp(t->env[slots[h] - 1].name, name) == 0) {
				r = cfg_err(c, k, "env: duplicate variable %s",
				    GOT(k));
				goto out;
			}
		if ((t->env[t->nenv].name = strdup(name)) == NULL) {
			r = nomem(c);
			goto out;
		}
		slots[h] = ++t->nenv;
		if ((r = get_str(c, v, "env", "a string value",
		    &t->env[t->nenv - 1].value)) < 0)
			goto out;
	}
out:
	free(slots);
	return r;
}

/* One target: its keys, defaults, and the checks that span keys. */
static int
parse_target(struct ctx *c, const yaml_node_t *n, struct flaky_target *t)
{
	struct flaky_config *cfg = c->cfg;
	yaml_node_t	*v[T_NKEYS];
	char		 gotbuf[80], serr[192];
	const char	*s;
	int64_t		 next;
	int		 r;

	t->runs = 1;
	t->timeout_ms = 30 * 60 * 1000;
	t->confirm_budget_ms = 10 * 60 * 1000;
	t->catch_up = 1;
	t->line = (int)n->start_mark.line + 1;
	if ((r = get_keys(c, n, "target", target_keys, T_NKEYS, v)) < 0)
		return r;
	if (v[T_NAME] == NULL)
		return cfg_err(c, n, "target: expected a name: key");
	if ((r = get_str(c, v[T_NAME], "name", "a target name", &t->name)) < 0)
		return r;
	if (!name_ok(t->name, "._-"))
		return cfg_err(c, v[T_NAME], "name: expected 1 to %d letters, "
		    "digits, '.', '_' or '-', got %s", FLAKY_CONFIG_MAX_NAME,
		    GOT(v[T_NAME]));
	for (size_t i = 0; i < cfg->ntargets; i++)
		if (strcmp(cfg->targets[i].name, t->name) == 0)
			return cfg_err(c, v[T_NAME], "name: duplicate target "
			    "name %s, first at line %d", GOT(v[T_NAME]),
			    cfg->targets[i].line);
	if (v[T_COMMAND] == NULL)
		return cfg_err(c, n, "target \"%s\": expected a command: key",
		    t->name);
	if ((r = parse_command(c, t, v[T_COMMAND])) < 0)
		return r;
	if (v[T_DIR] != NULL) {
		if ((r = get_path(c, v[T_DIR], "dir", "a directory",
		    &t->dir)) < 0)
			return r;
	} else if ((t->dir = strdup(c->basedir)) == NULL)
		return nomem(c);
	if (v[T_SCHEDULE] != NULL) {
		if ((r = get_str(c, v[T_SCHEDULE], "schedule", "a schedule "
		    "such as \"*/15 * * * *\", @daily or \"every 10m\"",
		    &t->schedule)) < 0)
			return r;
		if (flaky_sched_parse(t->schedule, &t->sched, serr,
		    sizeof serr) < 0)
			return cfg_err(c, v[T_SCHEDULE], "schedule: %s", serr);
		if (flaky_sched_next(&t->sched, cfg->tz, 0, flaky_now_ms(),
		    &next) == -ERANGE)
			return cfg_err(c, v[T_SCHEDULE], "schedule: expected "
			    "dates that exist, %s never fires",
			    GOT(v[T_SCHEDULE]));
		t->has_schedule = 1;
	}
	if (v[T_RUNS] != NULL &&
	    (r = get_int(c, v[T_RUNS], "runs", 1, 10000, &t->runs)) < 0)
		return r;
	if (v[T_TIMEOUT] != NULL && (r = get_duration(c, v[T_TIMEOUT],
	    "timeout", 1, &t->timeout_ms)) < 0)
		return r;
	if (v[T_ENV] != NULL && (r = parse_env(c, t, v[T_ENV])) < 0)
		return r;
	if (v[T_JITTER] != NULL && (r = get_duration(c, v[T_JITTER],
	    "jitter", 0, &t->jitter_ms)) < 0)
		return r;
	if (v[T_OVERLAP] != NULL) {
		if ((r = get_text(c, v[T_OVERLAP], "overlap", "skip or queue",
		    &s)) < 0)
			return r;
		if (strcmp(s, "skip") == 0)
			t->overlap = FLAKY_OVERLAP_SKIP;
		else if (strcmp(s, "queue") == 0)
			t->overlap = FLAKY_OVERLAP_QUEUE;
		else
			return cfg_err(c, v[T_OVERLAP], "overlap: expected "
			    "skip or queue, got %s", GOT(v[T_OVERLAP]));
	}
	if (v[T_CATCH_UP] != NULL && (r = get_bool(c, v[T_CATCH_UP],
	    "catch_up", &t->catch_up)) < 0)
		return r;
	if (v[T_ISOLATE] != NULL) {
		if ((r = get_str(c, v[T_ISOLATE], "isolate", "a command "
		    "template containing {test}", &t->isolate)) < 0)
			return r;
		if (strstr(t->isolate, "{test}") == NULL)
			return cfg_err(c, v[T_ISOLATE], "isolate: expected a "
			    "command template containing {test}, got %s",
			    GOT(v[T_ISOLATE]));
	}
	if (v[T_REVISION] != NULL && (r = get_str(c, v[T_REVISION],
	    "revision", "a shell command that prints the revision",
	    &t->revision)) < 0)
		return r;
	if (v[T_CONFIRM] != NULL && (r = get_bool(c, v[T_CONFIRM], "confirm",
	    &t->confirm)) < 0)
		return r;
	if (t->confirm && t->isolate == NULL)
		return cfg_err(c, v[T_CONFIRM], "confirm: expected an isolate: "
		    "template in the same target, confirming reruns tests "
		    "alone");
	if (v[T_CONFIRM_BUDGET] != NULL && (r = get_duration(c,
	    v[T_CONFIRM_BUDGET], "confirm_budget", 1,
	    &t->confirm_budget_ms)) < 0)
		return r;
	if (v[T_SCAN] != NULL &&
	    (r = get_bool(c, v[T_SCAN], "scan", &t->scan)) < 0)
		return r;
	if (v[T_JUNIT] != NULL && (r = get_str(c, v[T_JUNIT], "junit",
	    "the path of a JUnit XML file", &t->junit)) < 0)
		return r;

	if (c->flags & FLAKY_CONFIG_NO_FS_CHECKS)
		return 0;
	{
		struct stat	 st;

		if (stat(t->dir, &st) < 0)
			return cfg_err(c, v[T_DIR] != NULL ? v[T_DIR] : n,
			    "dir: expected an existing directory, \"%s\": %s",
			    t->dir, strerror(errno));
		if (!S_ISDIR(st.st_mode))
			return cfg_err(c, v[T_DIR] != NULL ? v[T_DIR] : n,
			    "dir: expected a directory, \"%s\" is not one",
			    t->dir);
	}
	if (!t->shell)
		return check_command(c, t, v[T_COMMAND]->type ==
		    YAML_SEQUENCE_NODE ? yaml_document_get_node(c->doc,
		    v[T_COMMAND]->data.sequence.items.start[0]) : v[T_COMMAND]);
	return 0;
}

/* One user signature: a name and its compiled patterns. */
static int
parse_signature(struct ctx *c, const yaml_node_t *n,
    struct flaky_user_signature *sig)
{
	static const char *const keys[] = { "name", "patterns" };
	yaml_node_t	*v[2];
	yaml_node_item_t *items;
	struct flaky_config *cfg = c->cfg;
	char		 gotbuf[80];
	size_t		 cnt;
	int		 r;

	if ((r = get_keys(c, n, "signature", keys, 2, v)) < 0)
		return r;
	if (v[0] == NULL)
		return cfg_err(c, n, "signature: expected a name: key");
	if ((r = get_str(c, v[0], "name", "a signature name", &sig->name)) < 0)
		return r;
	if (!name_ok(sig->name, "._-"))
		return cfg_err(c, v[0], "name: expected 1 to %d letters, "
		    "digits, '.', '_' or '-', got %s", FLAKY_CONFIG_MAX_NAME,
		    GOT(v[0]));
	for (size_t i = 0; i < cfg->nsignatures; i++)
		if (strcmp(cfg->signatures[i].name, sig->name) == 0)
			return cfg_err(c, v[0], "name: duplicate signature "
			    "name %s", GOT(v[0]));
	if (v[1] == NULL)
		return cfg_err(c, n, "signature \"%s\": expected a patterns: "
		    "list", sig->name);
	if ((r = get_seq(c, v[1], "patterns", "a list of regular expressions",
	    &items, &cnt)) < 0)
		return r;
	if (cnt == 0)
		return cfg_err(c, v[1], "patterns: expected at least one "
		    "regular expression, got an empty sequence");
	if ((sig->patterns = calloc(cnt, sizeof *sig->patterns)) == NULL)
		return nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		if ((r = get_regex(c, yaml_document_get_node(c->doc, items[i]),
		    "patterns", &sig->patterns[i])) < 0)
			return r;
		sig->npatterns++;
	}
	return 0;
}

static const char *const top_keys[] = {
	"database", "jobs", "socket", "timezone", "kill_grace", "retention",
	"redact", "signatures", "targets",
};
enum {
	K_DATABASE, K_JOBS, K_SOCKET, K_TIMEZONE, K_KILL_GRACE, K_RETENTION,
	K_REDACT, K_SIGNATURES, K_TARGETS, K_NKEYS
};

/* The top-level mapping; the zone first, since schedules need it. */
static int
parse_top(struct ctx *c, yaml_node_t *root)
{
	struct flaky_config *cfg = c->cfg;
	yaml_node_t	*v[K_NKEYS];
	yaml_node_item_t *items;
	char		 gotbuf[80], zerr[192];
	size_t		 cnt;
	int		 r;

	if (root->type != YAML_MAPPING_NODE)
		return cfg_err(c, root, "expected a mapping of settings at the "
		    "top, got %s", GOT(root));
	if ((r = get_keys(c, root, NULL, top_keys, K_NKEYS, v)) < 0)
		return r;
	if (v[K_DATABASE] != NULL && (r = get_path(c, v[K_DATABASE],
	    "database", "the path of the database", &cfg->database)) < 0)
		return r;
	if (v[K_JOBS] != NULL &&
	    (r = get_int(c, v[K_JOBS], "jobs", 1, 1024, &cfg->jobs)) < 0)
		return r;
	if (v[K_SOCKET] != NULL && (r = get_path(c, v[K_SOCKET], "socket",
	    "the path of the control socket", &cfg->socket)) < 0)
		return r;
	if (v[K_TIMEZONE] != NULL) {
		if ((r = get_str(c, v[K_TIMEZONE], "timezone", "a zone name "
		    "such as Europe/Berlin", &cfg->timezone)) < 0)
			return r;
		if ((r = flaky_tz_load(cfg->timezone, &cfg->tz, zerr,
		    sizeof zerr)) < 0)
			return r == -ENOMEM ? nomem(c) : r == -ENOENT ?
			    cfg_err(c, v[K_TIMEZONE], "timezone: expected a "
			    "zone name such as Europe/Berlin, got %s",
			    GOT(v[K_TIMEZONE])) :
			    cfg_err(c, v[K_TIMEZONE], "timezone: %s", zerr);
	} else if ((r = flaky_tz_load(NULL, &cfg->tz, zerr, sizeof zerr)) < 0)
		return r == -ENOMEM ? nomem(c) :
		    cfg_err(c, root, "timezone: %s", zerr);
	if (v[K_KILL_GRACE] != NULL && (r = get_duration(c, v[K_KILL_GRACE],
	    "kill_grace", 0, &cfg->kill_grace_ms)) < 0)
		return r;
	if (v[K_RETENTION] != NULL && (r = get_duration(c, v[K_RETENTION],
	    "retention", 0, &cfg->retention_ms)) < 0)
		return r;
	if (v[K_REDACT] != NULL) {
		if ((r = get_seq(c, v[K_REDACT], "redact", "a list of regular "
		    "expressions", &items, &cnt)) < 0)
			return r;
		cfg->redact = calloc(cnt + 1, sizeof *cfg->redact);
		if (cfg->redact == NULL)
			return nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			if ((r = get_regex(c, yaml_document_get_node(c->doc,
			    items[i]), "redact", &cfg->redact[i])) < 0)
				return r;
			cfg->nredact++;
		}
	}
	if (v[K_SIGNATURES] != NULL) {
		if ((r = get_seq(c, v[K_SIGNATURES], "signatures", "a list of "
		    "signatures", &items, &cnt)) < 0)
			return r;
		if ((cfg->signatures = calloc(cnt + 1,
		    sizeof *cfg->signatures)) == NULL)
			return nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			r = parse_signature(c, yaml_document_get_node(c->doc,
			    items[i]), &cfg->signatures[i]);
			/* Counted even when half filled, so it is freed. */
			cfg->nsignatures++;
			if (r < 0)
				return r;
		}
	}
	if (v[K_TARGETS] != NULL) {
		if (is_null(v[K_TARGETS]))
			return 0;
		if ((r = get_seq(c, v[K_TARGETS], "targets", "a list of "
		    "targets", &items, &cnt)) < 0)
			return r;
		if (cnt > FLAKY_CONFIG_MAX_TARGETS)
			return cfg_err(c, v[K_TARGETS], "targets: expected at "
			    "most %d targets, got %zu",
			    FLAKY_CONFIG_MAX_TARGETS, cnt);
		if ((cfg->targets = calloc(cnt + 1, sizeof *cfg->targets)) ==
		    NULL)
			return nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			r = parse_target(c, yaml_document_get_node(c->doc,
			    items[i]), &cfg->targets[i]);
			/* Counted only when whole, so duplicates are looked
			 * up among complete targets; freed below if not. */
			if (r < 0)
				return r;
			cfg->ntargets++;
		}
	}
	return 0;
}

/* The file's directory, absolute, for relative paths in it. */
static char *
base_dir(const char *name)
{
	char	*copy, *slash, *abs, *ret = NULL, cwd[PATH_MAX];

	if ((copy = strdup(name)) == NULL)
		return NULL;
	if ((slash = strrchr(copy, '/')) == NULL) {
		free(copy);
		copy = strdup(".");
	} else if (slash == copy)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (copy == NULL)
		return NULL;
	if ((abs = realpath(copy, NULL)) != NULL) {
		free(copy);
		return abs;
	}
	if (copy[0] == '/')
		return copy;
	if (getcwd(cwd, sizeof cwd) != NULL &&
	    asprintf(&ret, "%s/%s", cwd, copy) < 0)
		ret = NULL;
	free(copy);
	return ret;
}

/* Line and column of a byte offset, for reader errors that carry only an
 * offset. */
static void
offset_mark(const char *buf, size_t len, size_t off, yaml_mark_t *m)
{
	m->line = 0;
	m->column = 0;
	for (size_t i = 0; i < off && i < len; i++) {
		if (buf[i] == '\n') {
			m->line++;
			m->column = 0;
		} else
			m->column++;
	}
}

/* libyaml's own error as one FILE:LINE:COL line. */
static int
syntax_error(struct ctx *c, yaml_parser_t *p, const char *buf, size_t len)
{
	yaml_node_t	 fake;

	memset(&fake, 0, sizeof fake);
	if (p->error == YAML_MEMORY_ERROR)
		return nomem(c);
	if (p->error == YAML_READER_ERROR)
		offset_mark(buf, len, p->problem_offset, &fake.start_mark);
	else
		fake.start_mark = p->problem_mark;
	if (p->context != NULL)
		return cfg_err(c, &fake, "YAML syntax error: %s %s",
		    p->problem != NULL ? p->problem : "unknown problem",
		    p->context);
	return cfg_err(c, &fake, "YAML syntax error: %s",
	    p->problem != NULL ? p->problem : "unknown problem");
}

/* The limits on depth, value size and alias expansion, checked before
 * libyaml builds its tree (config_limits.c says why). */
static int
limits(struct ctx *c, const char *buf, size_t len)
{
	struct config_limit_err	 e;
	yaml_node_t		 at;
	int			 r;

	if ((r = config_limits_check(buf, len, &e)) == -ENOMEM)
		return nomem(c);
	if (r < 0) {
		memset(&at, 0, sizeof at);
		at.start_mark = e.mark;
		return cfg_err(c, &at, "%s", e.msg);
	}
	return 0;
}

/* Parse a schedule file held in memory. */
int
flaky_config_parse_buffer(const char *name, const char *buf, size_t len,
    unsigned flags, struct flaky_config **ret, char *err, size_t errlen)
{
	struct ctx	 c;
	yaml_parser_t	 parser;
	yaml_document_t	 doc, extra;
	yaml_node_t	*root;
	struct flaky_config *cfg = NULL;
	int		 r = 0, have_parser = 0, have_doc = 0;

	*ret = NULL;
	memset(&c, 0, sizeof c);
	c.file = name;
	c.flags = flags;
	c.err = err;
	c.errlen = errlen;
	c.doc = &doc;
	if (len > FLAKY_CONFIG_MAX_BYTES) {
		yaml_node_t	 past;

		/* Where the limit falls, so the user sees what to cut. */
		memset(&past, 0, sizeof past);
		offset_mark(buf, len, FLAKY_CONFIG_MAX_BYTES, &past.start_mark);
		r = cfg_err(&c, &past, "expected a file of at most %d bytes "
		    "(the size limit), got %zu", FLAKY_CONFIG_MAX_BYTES, len);
		goto out;
	}
	if ((r = limits(&c, buf, len)) < 0)
		goto out;
	if ((c.basedir = base_dir(name)) == NULL ||
	    (cfg = calloc(1, sizeof *cfg)) == NULL ||
	    (cfg->path = strdup(name)) == NULL) {
		r = nomem(&c);
		goto out;
	}
	c.cfg = cfg;
	cfg->jobs = 1;
	cfg->kill_grace_ms = 10 * 1000;
	if (!yaml_parser_initialize(&parser)) {
		r = nomem(&c);
		goto out;
	}
	have_parser = 1;
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(&parser, &doc)) {
		r = syntax_error(&c, &parser, buf, len);
		goto out;
	}
	have_doc = 1;
	if ((root = yaml_document_get_root_node(&doc)) == NULL) {
		r = cfg_err(&c, NULL, "expected a mapping of settings, got an "
		    "empty file");
		goto out;
	}
	/* A second document would be silently ignored: refuse it. */
	if (!yaml_parser_load(&parser, &extra)) {
		r = syntax_error(&c, &parser, buf, len);
		goto out;
	}
	if (yaml_document_get_root_node(&extra) != NULL) {
		yaml_node_t x;

		memset(&x, 0, sizeof x);
		x.start_mark = extra.start_mark;
		r = cfg_err(&c, &x, "expected one YAML document, got a second "
		    "one");
		yaml_document_delete(&extra);
		goto out;
	}
	yaml_document_delete(&extra);
	if ((r = parse_top(&c, root)) < 0)
		goto out;
	if (cfg->tz == NULL) {
		char	 zerr[192];

		r = flaky_tz_load(NULL, &cfg->tz, zerr, sizeof zerr);
		if (r < 0) {
			r = cfg_err(&c, root, "timezone: %s", zerr);
			goto out;
		}
	}
	*ret = cfg;
	cfg = NULL;
out:
	if (have_doc)
		yaml_document_delete(&doc);
	if (have_parser)
		yaml_parser_delete(&parser);
	if (cfg != NULL && cfg->targets != NULL && r < 0) {
		/* The target that failed half way was not counted. */
		cfg->ntargets++;
	}
	flaky_config_free(cfg);
	free(c.basedir);
	return r;
}

/* Read a schedule file, bounded in size, and parse it. */
int
flaky_config_load(const char *path, unsigned flags, struct flaky_config **ret,
    char *err, size_t errlen)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 n = 0, want;
	ssize_t		 got;
	int		 fd, r;

	*ret = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return flaky_error(err, errlen, errno, "%s: cannot open: %s",
		    path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		r = flaky_error(err, errlen, errno, "%s: %s", path,
		    strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = flaky_error(err, errlen, EINVAL, "%s: expected a file, "
		    "got %s", path, S_ISDIR(st.st_mode) ? "a directory" :
		    "a special file");
		goto out;
	}
	/* A file past the size limit is read up to the limit only, to say
	 * where the limit falls in it. */
	want = st.st_size > FLAKY_CONFIG_MAX_BYTES ? FLAKY_CONFIG_MAX_BYTES :
	    (size_t)st.st_size;
	if ((buf = malloc(want + 1)) == NULL) {
		r = flaky_error(err, errlen, ENOMEM, "%s: out of memory", path);
		goto out;
	}
	while (n < want) {
		got = read(fd, buf + n, want - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = flaky_error(err, errlen, errno, "%s: cannot read: "
			    "%s", path, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (st.st_size > FLAKY_CONFIG_MAX_BYTES) {
		yaml_mark_t	 m;

		offset_mark(buf, n, n, &m);
		r = flaky_error(err, errlen, EINVAL, "%s:%zu:%zu: expected a "
		    "file of at most %d bytes (the size limit), got %lld", path,
		    m.line + 1, m.column + 1, FLAKY_CONFIG_MAX_BYTES,
		    (long long)st.st_size);
		goto out;
	}
	r = flaky_config_parse_buffer(path, buf, n, flags, ret, err, errlen);
out:
	free(buf);
	close(fd);
	return r;
}

/* Free one compiled pattern, if it was compiled. */
static void
regex_free(struct flaky_regex *re)
{
	if (re->src != NULL) {
		regfree(&re->re);
		free(re->src);
	}
}

/* Free what a target owns. */
static void
target_free(struct flaky_target *t)
{
	if (t->argv != NULL)
		for (size_t i = 0; t->argv[i] != NULL; i++)
			free(t->argv[i]);
	free(t->argv);
	free(t->name);
	free(t->dir);
	free(t->schedule);
	for (size_t i = 0; i < t->nenv; i++) {
		free(t->env[i].name);
		free(t->env[i].value);
	}
	free(t->env);
	free(t->isolate);
	free(t->revision);
	free(t->junit);
}

/* Free a config and everything it owns; NULL is fine. */
void
flaky_config_free(struct flaky_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->database);
	free(cfg->socket);
	free(cfg->timezone);
	flaky_tz_free(cfg->tz);
	for (size_t i = 0; i < cfg->nredact; i++)
		regex_free(&cfg->redact[i]);
	free(cfg->redact);
	for (size_t i = 0; i < cfg->nsignatures; i++) {
		struct flaky_user_signature *s = &cfg->signatures[i];

		for (size_t j = 0; j < s->npatterns; j++)
			regex_free(&s->patterns[j]);
		free(s->patterns);
		free(s->name);
	}
	free(cfg->signatures);
	for (size_t i = 0; i < cfg->ntargets; i++)
		target_free(&cfg->targets[i]);
	free(cfg->targets);
	free(cfg);
}

/* Look a target up by name. */
const struct flaky_target *
flaky_config_target(const struct flaky_config *cfg, const char *name)
{
	for (size_t i = 0; cfg != NULL && i < cfg->ntargets; i++)
		if (strcmp(cfg->targets[i].name, name) == 0)
			return &cfg->targets[i];
	return NULL;
}
