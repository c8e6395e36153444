/* The command table's machinery: one option parser and one --help for
 * every command, both read from the command's cmd_entry. */
#include "buildconf.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "flakyctl.h"
#include "log.h"
#include "util/util.h"

/* Global options: every command takes them, so no entry repeats them. */
const struct cmd_option cmd_global_options[] = {
	{ "db", 0, CTL_OPT_DB, "PATH", "the database, a file or a "
	    "postgresql:// URI (default $FLAKY_DB, the config's database:, "
	    "then ./flaky.db)" },
	{ "config", 0, CTL_OPT_CONFIG, "FILE", "the configuration file "
	    "(default $FLAKY_CONFIG, then /etc/flaky/flaky.yaml for a "
	    "command that only reads, where there is no ./flaky.db)" },
	{ "socket", 0, CTL_OPT_SOCKET, "PATH", "flakyd's control socket "
	    "(default $FLAKY_SOCKET, the config's socket:, then "
	    FLAKY_DEFAULT_SOCKET ")" },
	{ "format", 0, CTL_OPT_FORMAT, "FORMAT", "table, json, csv, markdown, "
	    "tsv, github or junit, where the command has it (default "
	    "table)" },
	{ NULL, 0, 0, NULL, NULL }
};

/* The code an option hands back: its own, else its letter. */
static int
option_code(const struct cmd_option *o)
{
	return o->code != 0 ? o->code : o->letter;
}

/* Does the entry's own table have this long name? */
static int
entry_has_name(const struct cmd_entry *e, const char *name)
{
	for (const struct cmd_option *o = e->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return 1;
	return 0;
}

/* Does the entry take over a global option, declaring one of the same
 * name in its own table (quarantine's --format, whose export has formats
 * of its own)? Then the handler gets it; CMD_OPTION_KIND is no global
 * option and stays the parser's. */
static int
entry_overrides(const struct cmd_entry *e, int code)
{
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		if (option_code(o) == code)
			return entry_has_name(e, o->name);
	return 0;
}

/* Add one option to getopt_long's arrays. A table too long for them is
 * a mistake in the program, not in the user's command line. */
static void
add_option(struct cmd_getopt *g, size_t *n, const struct cmd_option *o)
{
	size_t	 len;

	if (*n >= CMD_OPTIONS_MAX)
		fatalx("%s: more than %d options", g->entry->name,
		    CMD_OPTIONS_MAX);
	g->longopts[*n].name = o->name;
	g->longopts[*n].has_arg = o->arg ? required_argument : no_argument;
	g->longopts[*n].flag = NULL;
	g->longopts[*n].val = option_code(o);
	(*n)++;
	if (o->letter == 0)
		return;
	len = strlen(g->shortopts);
	g->shortopts[len++] = (char)o->letter;
	if (o->arg != NULL)
		g->shortopts[len++] = ':';
	g->shortopts[len] = '\0';
}

/* Build getopt_long's arrays from the entry and the global options. */
void
cmd_getopt_init(struct cmd_getopt *g, const struct cmd_entry *e,
    struct ctl *ctl, int argc, char **argv)
{
	static const struct cmd_option help = { "help", 'h', CTL_OPT_HELP,
	    NULL, NULL };
	size_t	 n = 0;

	memset(g, 0, sizeof *g);
	g->entry = e;
	g->ctl = ctl;
	g->argc = argc;
	g->argv = argv;
	g->exit = EXIT_ERROR;
	/* ":" first: a missing value comes back as ':', not as '?', so the
	 * two errors get their own words. */
	snprintf(g->shortopts, sizeof g->shortopts, "%s:",
	    e->flags & CMD_STOP_AT_OPERAND ? "+" : "");
	for (const struct cmd_option *o = e->options; o && o->name; o++)
		add_option(g, &n, o);
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		if (!entry_has_name(e, o->name))
			add_option(g, &n, o);
	add_option(g, &n, &help);
	memset(&g->longopts[n], 0, sizeof g->longopts[n]);
	/* The errors are ours, in one line with the usage; and a fresh
	 * start, whatever an earlier parse of argv left behind. */
	opterr = 0;
	optind = 0;
}

/* The option the user wrote, for an error: "--name" (without its value)
 * or "-x". Inside a cluster ("-fx") getopt has not moved on, and the
 * word before it is another option's. */
static void
bad_option(const struct cmd_getopt *g, char *buf, size_t len)
{
	const char	*w = optind > 0 && optind <= g->argc ?
	    g->argv[optind - 1] : "";

	if (optind == g->before && optopt > 0 && optopt < 256)
		snprintf(buf, len, "-%c", optopt);
	else if (strncmp(w, "--", 2) == 0)
		snprintf(buf, len, "%.*s", (int)strcspn(w, "="), w);
	else if (optopt > 0 && optopt < 256)
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%s", w);
}

/* The long option a mistyped "--name" meant (help and globals too). */
static const char *
nearest_option(const struct cmd_getopt *g, const char *word)
{
	const char	*names[CMD_OPTIONS_MAX + 1];
	size_t		 n = 0;

	for (const struct option *o = g->longopts; o->name; o++)
		names[n++] = o->name;
	return cmd_nearest(word, names, n);
}

/* Unknown, ambiguous (a prefix of several), or given a value it does not
 * take: say which, once. */
static void
unknown_option(const struct cmd_getopt *g)
{
	char		 w[128], names[512] = "";
	size_t		 nmatch = 0, plen;
	const char	*cmd = g->entry->name, *near;

	bad_option(g, w, sizeof w);
	if (strncmp(w, "--", 2) == 0 && optopt != 0) {
		ctl_usage_error(cmd, "option '%s' takes no value", w);
		return;
	}
	plen = strlen(w) > 2 ? strlen(w) - 2 : 0;
	for (const struct option *o = g->longopts; plen > 0 && o->name; o++)
		if (strncmp(o->name, w + 2, plen) == 0) {
			size_t	 k = strlen(names);

			snprintf(names + k, sizeof names - k, "%s--%s",
			    nmatch++ ? ", " : "", o->name);
		}
	if (nmatch > 1)
		ctl_usage_error(cmd, "option '%s' is ambiguous: %s", w, names);
	else if (plen > 0 && (near = nearest_option(g, w + 2)) != NULL)
		ctl_usage_error(cmd, "unknown option '%s'; did you mean "
		    "'--%s'?", w, near);
	else
		ctl_usage_error(cmd, "unknown option '%s'", w);
}

/* The argument name of an option code, for the missing-value error. */
static const char *
arg_name(const struct cmd_getopt *g, int code)
{
	for (const struct cmd_option *o = g->entry->options; o && o->name; o++)
		if (option_code(o) == code)
			return o->arg;
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		if (option_code(o) == code)
			return o->arg;
	return NULL;
}

/* The next option for the handler; globals, --help and errors here. */
int
cmd_getopt(struct cmd_getopt *g)
{
	char	 w[128];
	int	 c;

	for (;;) {
		g->before = optind;
		c = getopt_long(g->argc, g->argv, g->shortopts, g->longopts,
		    NULL);
		switch (c) {
		case -1:
			return 0;
		case ':':
			bad_option(g, w, sizeof w);
			ctl_usage_error(g->entry->name, "option '%s' needs a "
			    "value (%s)", w, arg_name(g, optopt) ?
			    arg_name(g, optopt) : "?");
			return -1;
		case '?':
			unknown_option(g);
			return -1;
		case 'h':
		case CTL_OPT_HELP:
			cmd_print_help(stdout, g->entry);
			g->exit = EXIT_OK;
			return -1;
		}
		if (c < CTL_OPT_DB || entry_overrides(g->entry, c))
			return c;
		if (ctl_global_option(g->ctl, c, optarg) < 0)
			return -1;
	}
}

/* "-s, --since D|DATE" or "    --html FILE": the left column of help. */
static void
option_words(const struct cmd_option *o, char *buf, size_t len)
{
	snprintf(buf, len, "%c%c%c --%s%s%s", o->letter ? '-' : ' ',
	    o->letter ? o->letter : ' ', o->letter ? ',' : ' ', o->name,
	    o->arg ? " " : "", o->arg ? o->arg : "");
}

/* The length of the word at s; with group, "[--runs N]" is one word, so
 * that a synopsis breaks between its brackets, not inside them. */
static int
word_length(const char *s, int group)
{
	int	 n = 0, depth = 0;

	for (; s[n] != '\0' && (s[n] != ' ' || depth > 0); n++) {
		if (group && (s[n] == '[' || s[n] == '('))
			depth++;
		else if (group && (s[n] == ']' || s[n] == ')') && depth > 0)
			depth--;
	}
	return n;
}

/* Words from column col on, broken before column 80 and continued at
 * column indent: help read in an 80-column terminal. */
static void
print_wrapped(FILE *f, const char *s, int col, int indent, int group)
{
	while (*s != '\0') {
		int	 n = word_length(s, group);

		if (col > indent && col + 1 + n >= 80) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%.*s", n, s);
		col += n;
		s += n;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

/* One section of options, the help aligned at width; those the entry
 * has itself are left to its own section. */
static void
print_options(FILE *f, const char *title, const struct cmd_option *opts,
    const struct cmd_entry *skip, int width)
{
	char	 w[128];

	if (opts == NULL || opts->name == NULL)
		return;
	fprintf(f, "\n%s:\n", title);
	for (const struct cmd_option *o = opts; o->name; o++) {
		if (skip != NULL && entry_has_name(skip, o->name))
			continue;
		option_words(o, w, sizeof w);
		if ((int)strlen(w) > width)
			fprintf(f, "  %s\n%*s", w, width + 4, "");
		else
			fprintf(f, "  %-*s  ", width, w);
		print_wrapped(f, o->help, width + 4, width + 4, 0);
	}
}

/* The entry's example command lines, each indented. */
static void
print_example(FILE *f, const char *ex)
{
	if (ex == NULL)
		return;
	fprintf(f, "\nexample%s:\n", strchr(ex, '\n') != NULL ? "s" : "");
	while (*ex != '\0') {
		size_t	 n = strcspn(ex, "\n");

		fprintf(f, "  %.*s\n", (int)n, ex);
		ex += n;
		ex += *ex == '\n';
	}
}

/* usage, summary, then the command's options and the global ones. */
void
cmd_print_help(FILE *f, const struct cmd_entry *e)
{
	char	 w[128];
	int	 width = 0;

	/* One column for the command's and the global options alike, at
	 * most 26 wide so that the help keeps to 80 columns or near. */
	for (const struct cmd_option *o = e->options; o && o->name; o++) {
		option_words(o, w, sizeof w);
		if ((int)strlen(w) > width)
			width = (int)strlen(w);
	}
	for (const struct cmd_option *o = cmd_global_options; o->name; o++) {
		option_words(o, w, sizeof w);
		if ((int)strlen(w) > width)
			width = (int)strlen(w);
	}
	if (width > 26)
		width = 26;
	fprintf(f, "usage: flakyctl ");
	print_wrapped(f, e->usage, 16, 16, 1);
	fprintf(f, "\n");
	print_wrapped(f, e->summary, 0, 0, 0);
	print_options(f, "options", e->options, NULL, width);
	print_options(f, "global options", cmd_global_options, e, width);
	print_example(f, e->example);
}

/* A command by its exact name. */
const struct cmd_entry *
cmd_find(const char *name)
{
	for (size_t i = 0; cmd_table[i] != NULL; i++)
		if (strcmp(cmd_table[i]->name, name) == 0)
			return cmd_table[i];
	return NULL;
}

/* Edit distance with a swap of two neighbours as one edit (optimal
 * string alignment): "reprot" is one edit from "report". Words are cut
 * at 63 bytes; names are short. */
static size_t
typo_distance(const char *a, const char *b)
{
	size_t	 d[3][64], la = strlen(a), lb = strlen(b);

	la = la > 63 ? 63 : la;
	lb = lb > 63 ? 63 : lb;
	for (size_t i = 0; i <= la; i++) {
		size_t	*row = d[i % 3], *up = d[(i + 2) % 3];
		size_t	*up2 = d[(i + 1) % 3];

		for (size_t j = 0; j <= lb; j++) {
			size_t	 best;

			if (i == 0 || j == 0) {
				row[j] = i + j;
				continue;
			}
			best = up[j - 1] + (a[i - 1] != b[j - 1]);
			if (up[j] + 1 < best)
				best = up[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && up2[j - 2] + 1 < best)
				best = up2[j - 2] + 1;
			row[j] = best;
		}
	}
	return d[la % 3][lb];
}

/* The name word is a mistyping of: at most one edit away for a short
 * word, two for a longer one, the nearest; ties go to the first. */
const char *
cmd_nearest(const char *word, const char *const *names, size_t n)
{
	const char	*best = NULL;
	size_t		 bestd = (size_t)-1, len = strlen(word);
	size_t		 limit = len >= 5 ? 2 : 1;

	for (size_t i = 0; i < n; i++) {
		size_t	 d = typo_distance(word, names[i]);

		if (d < bestd && d < strlen(names[i])) {
			best = names[i];
			bestd = d;
		}
	}
	return bestd <= limit ? best : NULL;
}

/* The command a mistyped word meant, or NULL. */
const char *
cmd_nearest_command(const char *word)
{
	const char	*names[64];
	size_t		 n = 0;

	for (size_t i = 0; cmd_table[i] != NULL && n < 64; i++)
		names[n++] = cmd_table[i]->name;
	return cmd_nearest(word, names, n);
}
