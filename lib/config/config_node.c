/* Reading one node of a schedule file's YAML tree into a value: strings
 * without NUL bytes, bounded integers, booleans, durations, paths under
 * the file's directory, regular expressions (bounded in number and
 * size), sequences and mappings of known keys. Every error is one line
 * FILE:LINE:COL: key: expected ..., got ... */
#include "buildconf.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "config/config.h"
#include "config_int.h"
#include "util/util.h"

/* One line "FILE:LINE:COL: message" about node n; returns -EINVAL. */
int
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
int
cfg_nomem(struct ctx *c)
{
	flaky_error(c->err, c->errlen, ENOMEM, "%s: out of memory", c->file);
	return -ENOMEM;
}

/* Is a node YAML's null (an empty or ~ or null plain scalar)? */
int
cfg_is_null(const yaml_node_t *n)
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
const char *
cfg_describe(const yaml_node_t *n, char *buf, size_t len)
{
	const unsigned char *v;
	size_t	 i, o = 0, vlen;

	if (n->type == YAML_SEQUENCE_NODE)
		return n->data.sequence.items.top ==
		    n->data.sequence.items.start ? "an empty sequence" :
		    "a sequence";
	if (n->type == YAML_MAPPING_NODE)
		return "a mapping";
	if (cfg_is_null(n))
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

/* A node by index, counted against the visit bound. */
yaml_node_t *
cfg_node_at(struct ctx *c, int index)
{
	c->visits++;
	return yaml_document_get_node(c->doc, index);
}

/* A scalar's text; checks it is a string without NUL bytes. */
int
cfg_get_text(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, const char **ret)
{
	char	 gotbuf[80];

	if (n->type != YAML_SCALAR_NODE || cfg_is_null(n))
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
int
cfg_get_str(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, char **ret)
{
	const char *v = NULL;	/* set unless an error (gcc -O3 cannot tell) */
	int	 r;

	if ((r = cfg_get_text(c, n, key, expect, &v)) < 0)
		return r;
	free(*ret);
	if ((*ret = strdup(v)) == NULL)
		return cfg_nomem(c);
	return 0;
}

/* A bounded integer. */
int
cfg_get_int(struct ctx *c, const yaml_node_t *n, const char *key, int min,
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
int
cfg_get_bool(struct ctx *c, const yaml_node_t *n, const char *key, int *ret)
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
int
cfg_get_duration(struct ctx *c, const yaml_node_t *n, const char *key,
    int64_t min_ms, int64_t *ret)
{
	char	 gotbuf[80];
	int64_t	 ms;

	if (n->type != YAML_SCALAR_NODE || cfg_is_null(n) ||
	    flaky_parse_duration((const char *)n->data.scalar.value, &ms) < 0)
		return cfg_err(c, n, "%s: expected a duration such as 30s, 10m "
		    "or 1h30m, got %s", key, GOT(n));
	if (ms < min_ms)
		return cfg_err(c, n, "%s: expected a duration above 0 such as "
		    "30s, 10m or 1h30m, got %s", key, GOT(n));
	*ret = ms;
	return 0;
}

/* A relative path becomes one under the file's directory; a PostgreSQL
 * URI (database: for flakyctl, docs/fleet.md) stays as written. */
int
cfg_get_path(struct ctx *c, const yaml_node_t *n, const char *key,
    const char *expect, char **ret)
{
	const char *v = NULL;
	int	 r;

	if ((r = cfg_get_text(c, n, key, expect, &v)) < 0)
		return r;
	free(*ret);
	*ret = NULL;
	if (v[0] == '/' || cfg_is_uri(v))
		*ret = strdup(v);
	else if (strcmp(v, ".") == 0)
		*ret = strdup(c->basedir);
	else if (asprintf(ret, "%s/%s", c->basedir,
	    strncmp(v, "./", 2) == 0 ? v + 2 : v) < 0)
		*ret = NULL;
	return *ret == NULL ? cfg_nomem(c) : 0;
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
int
cfg_get_regex(struct ctx *c, const yaml_node_t *n, const char *key,
    struct flaky_regex *ret)
{
	char	 gotbuf[80], msg[128];
	const char *v;
	int	 r;

	if ((r = cfg_get_text(c, n, key, "a regular expression", &v)) < 0)
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
		return cfg_nomem(c);
	}
	return 0;
}

/* Items of a sequence node, with a bound on their number. */
int
cfg_get_seq(struct ctx *c, const yaml_node_t *n, const char *key,
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
int
cfg_get_keys(struct ctx *c, const yaml_node_t *map, const char *what,
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
		yaml_node_t *k = cfg_node_at(c, p->key);
		yaml_node_t *v = cfg_node_at(c, p->value);
		const char *name;

		if (c->visits > MAX_VISITS)
			return cfg_err(c, k, "expected a file of at most %d "
			    "values with aliases expanded", MAX_VISITS);
		if (k == NULL || v == NULL)
			return cfg_err(c, map, "broken mapping");
		if (k->type != YAML_SCALAR_NODE || cfg_is_null(k))
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
int
cfg_name_ok(const char *s, const char *extra)
{
	size_t	 n = strlen(s);

	if (n == 0 || n > FLAKY_CONFIG_MAX_NAME)
		return 0;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr(extra, *s) == NULL)
			return 0;
	return 1;
}
