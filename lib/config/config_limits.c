/* Limits on a schedule file, checked on libyaml's event stream before
 * yaml_parser_load builds the tree. The loader has no limits of its own:
 * it nests as deep as the input asks (and libyaml's scanner spends time in
 * proportion to the depth on every token), and an alias costs one node in
 * its tree but a whole copy of the anchored subtree once the schedule is
 * read into structs. So this pass counts, in one linear walk with a fixed
 * stack, the depth, each value's size, and the nodes and bytes the file
 * would have with every alias replaced by what it names; it stops at the
 * first event past a limit, so refusing costs no more than reading up to
 * that point. */
#include "buildconf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_limits.h"

#define TABLE_SIZE	2048	/* > 2 * CONFIG_MAX_ANCHORS, a power of 2 */

/* What an anchored node expands to. */
struct anchor {
	char		*name;
	size_t		 nodes;
	size_t		 bytes;
	int		 done;		/* 0 while its collection is open */
};

/* An open sequence or mapping. */
struct frame {
	struct anchor	*anchor;	/* or NULL */
	size_t		 nodes;		/* the totals when it opened */
	size_t		 bytes;
};

struct limits {
	struct anchor	*table;
	size_t		 nanchors;
	size_t		 naliases;
	size_t		 nodes;		/* with aliases expanded */
	size_t		 bytes;
	int		 depth;
	struct frame	 stack[CONFIG_MAX_DEPTH];
	struct config_limit_err *e;
};

/* Fill e at mark; returns -EINVAL. */
static int __attribute__((format(printf, 3, 4)))
limit_err(struct limits *l, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list	 ap;

	l->e->mark = *mark;
	va_start(ap, fmt);
	vsnprintf(l->e->msg, sizeof l->e->msg, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The slot of an anchor name: its entry, or the empty slot it would take.
 * Hashed, since a linear search per alias would make the check itself
 * quadratic. */
static struct anchor *
anchor_slot(struct limits *l, const char *name)
{
	uint32_t	 h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	for (size_t i = h & (TABLE_SIZE - 1);; i = (i + 1) & (TABLE_SIZE - 1))
		if (l->table[i].name == NULL ||
		    strcmp(l->table[i].name, name) == 0)
			return &l->table[i];
}

/* Record an anchor as its node starts; -EINVAL past the count limit. */
static int
anchor_add(struct limits *l, const unsigned char *name,
    const yaml_mark_t *mark, struct anchor **ret)
{
	struct anchor	*a;

	*ret = NULL;
	if (name == NULL)
		return 0;
	a = anchor_slot(l, (const char *)name);
	if (a->name == NULL) {
		/* The table never fills: the count stops well short. */
		if (++l->nanchors > CONFIG_MAX_ANCHORS)
			return limit_err(l, mark, "expected at most %d anchors "
			    "(the anchor limit), got more", CONFIG_MAX_ANCHORS);
		if ((a->name = strdup((const char *)name)) == NULL)
			return -ENOMEM;
	}
	/* A second anchor of one name is the loader's error to report. */
	a->nodes = 1;
	a->bytes = 0;
	a->done = 0;
	*ret = a;
	return 0;
}

/* Add n nodes and b bytes to the expanded totals, checking both. */
static int
grow(struct limits *l, size_t n, size_t b, const yaml_mark_t *mark,
    const char *at)
{
	/* Each addend is at most a limit, so the sums cannot overflow. */
	l->nodes += n;
	l->bytes += b;
	if (l->nodes > CONFIG_MAX_NODES)
		return limit_err(l, mark, "expected at most %d values with "
		    "aliases expanded (the node limit), got more%s%s",
		    CONFIG_MAX_NODES, at != NULL ? " at *" : "",
		    at != NULL ? at : "");
	if (l->bytes > CONFIG_MAX_EXPANDED)
		return limit_err(l, mark, "expected at most %d bytes of values "
		    "with aliases expanded (the alias expansion limit), got "
		    "more%s%s", CONFIG_MAX_EXPANDED, at != NULL ? " at *" : "",
		    at != NULL ? at : "");
	return 0;
}

/* A sequence or mapping opens: bound the depth before going deeper. */
static int
open_collection(struct limits *l, const yaml_event_t *ev,
    const unsigned char *anchor)
{
	struct frame	*f;
	int		 r;

	if (l->depth == CONFIG_MAX_DEPTH)
		return limit_err(l, &ev->start_mark, "expected at most %d "
		    "nested sequences and mappings (the nesting limit), got "
		    "more", CONFIG_MAX_DEPTH);
	f = &l->stack[l->depth++];
	f->nodes = l->nodes;
	f->bytes = l->bytes;
	if ((r = anchor_add(l, anchor, &ev->start_mark, &f->anchor)) < 0)
		return r;
	return grow(l, 1, 0, &ev->start_mark, NULL);
}

/* A sequence or mapping closes: an anchor on it now knows its size. */
static void
close_collection(struct limits *l)
{
	struct frame	*f;

	if (l->depth == 0)
		return;		/* cannot happen with libyaml's events */
	f = &l->stack[--l->depth];
	if (f->anchor != NULL) {
		f->anchor->nodes = l->nodes - f->nodes;
		f->anchor->bytes = l->bytes - f->bytes;
		f->anchor->done = 1;
	}
}

/* A scalar: its size, and its anchor's. */
static int
scalar(struct limits *l, const yaml_event_t *ev)
{
	struct anchor	*a;
	size_t		 len = ev->data.scalar.length;
	int		 r;

	if (len > CONFIG_MAX_SCALAR)
		return limit_err(l, &ev->start_mark, "expected a value of at "
		    "most %d bytes (the value size limit), got %zu",
		    CONFIG_MAX_SCALAR, len);
	if ((r = anchor_add(l, ev->data.scalar.anchor, &ev->start_mark,
	    &a)) < 0)
		return r;
	if (a != NULL) {
		a->bytes = len;
		a->done = 1;
	}
	return grow(l, 1, len, &ev->start_mark, NULL);
}

/* An alias: it costs what its anchor expands to. */
static int
alias(struct limits *l, const yaml_event_t *ev)
{
	const char	*name = (const char *)ev->data.alias.anchor;
	struct anchor	*a;

	if (++l->naliases > CONFIG_MAX_ALIASES)
		return limit_err(l, &ev->start_mark, "expected at most %d "
		    "aliases (the alias limit), got more", CONFIG_MAX_ALIASES);
	a = anchor_slot(l, name);
	if (a->name == NULL)
		return grow(l, 1, 0, &ev->start_mark, NULL); /* the loader's */
	if (!a->done)
		return limit_err(l, &ev->start_mark, "expected an alias after "
		    "the end of its anchor, got *%.64s inside &%.64s", name,
		    name);
	return grow(l, a->nodes, a->bytes, &ev->start_mark, name);
}

/* One event; 1 at the end of the stream. */
static int
event(struct limits *l, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		return 1;
	case YAML_SCALAR_EVENT:
		return scalar(l, ev);
	case YAML_ALIAS_EVENT:
		return alias(l, ev);
	case YAML_SEQUENCE_START_EVENT:
		return open_collection(l, ev, ev->data.sequence_start.anchor);
	case YAML_MAPPING_START_EVENT:
		return open_collection(l, ev, ev->data.mapping_start.anchor);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		close_collection(l);
		return 0;
	default:
		return 0;
	}
}

/* Check a schedule file against the limits in config_limits.h. */
int
config_limits_check(const char *buf, size_t len, struct config_limit_err *e)
{
	struct limits	 l;
	yaml_parser_t	 parser;
	yaml_event_t	 ev;
	int		 r = 0;

	memset(&l, 0, sizeof l);
	l.e = e;
	if ((l.table = calloc(TABLE_SIZE, sizeof *l.table)) == NULL)
		return -ENOMEM;
	if (!yaml_parser_initialize(&parser)) {
		free(l.table);
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	while (r == 0) {
		if (!yaml_parser_parse(&parser, &ev)) {
			/* The loader reports syntax errors; memory is ours. */
			r = parser.error == YAML_MEMORY_ERROR ? -ENOMEM : 0;
			break;
		}
		r = event(&l, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	for (size_t i = 0; i < TABLE_SIZE; i++)
		free(l.table[i].name);
	free(l.table);
	return r < 0 ? r : 0;
}
