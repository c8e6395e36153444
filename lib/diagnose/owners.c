/* Owners from a project's CODEOWNERS (issue 32, docs/dashboard.md
 * "Owners"), in GitHub's syntax and GitLab's: patterns as .gitignore
 * writes them (anchored with a leading or inner '/', a directory with a
 * trailing one, '*', '?', '**', [classes]), owners after them (@user,
 * @org/team, an e-mail, GitLab's @@role). GitHub: the last line that
 * matches wins. GitLab adds [Sections] (^[optional], [name][approvals])
 * with default owners: in each section the last match wins, and every
 * section's owners add up. A test is matched on its file, taken from its
 * id and placed in the repository by its target's directory. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diagnose/diagnose.h"
#include "util/util.h"

#define CODEOWNERS_MAX	(3 * 1024 * 1024)	/* GitHub's own bound */
#define RULES_MAX	20000
#define UP_MAX		32			/* directories up to .git */

struct rule {
	char	*pattern;	/* without its leading and trailing '/' */
	int	 anchored, dir_only;
	char	*owners;	/* space-separated; NULL: the section's */
	int	 section;
};

struct flaky_codeowners {
	struct rule	*v;
	size_t		 n;
	char		**defaults;	/* a section's default owners */
	size_t		 nsections;
	char		 file[PATH_MAX];	/* where it was read */
	char		 prefix[PATH_MAX];	/* the target's dir in the repo */
	char		 root[PATH_MAX];	/* the repository's top ("") */
};

void
flaky_codeowners_free(struct flaky_codeowners *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].pattern);
		free(c->v[i].owners);
	}
	for (size_t i = 0; i < c->nsections; i++)
		free(c->defaults[i]);
	free(c->defaults);
	free(c->v);
	free(c);
}

/* A class [...] at p against ch: 1 match, 0 no; *end after it; -1 when
 * p is not a whole class (then '[' is a literal). */
static int
match_class(const char *p, char ch, const char **end)
{
	int	 neg = 0, ok = 0;
	const char *q = p + 1;

	if (*q == '!' || *q == '^') {
		neg = 1;
		q++;
	}
	for (int first = 1; *q != '\0' && (first || *q != ']'); first = 0) {
		char	 lo = *q, hi = *q;

		if (q[1] == '-' && q[2] != '\0' && q[2] != ']') {
			hi = q[2];
			q += 3;
		} else
			q++;
		if (ch >= lo && ch <= hi)
			ok = 1;
	}
	if (*q != ']')
		return -1;
	*end = q + 1;
	return ok != neg;
}

/* Does the glob p match all of s? '*' and '?' stay within a segment;
 * "**" crosses them. */
static int
glob(const char *p, const char *s)
{
	const char *e;
	int	 m;

	for (; *p != '\0'; p++, s++) {
		if (p[0] == '*' && p[1] == '*') {
			/* "**" then "/": no directory or any number */
			p += 2;
			if (*p == '/') {
				if (glob(p + 1, s))
					return 1;
				for (; *s != '\0'; s++)
					if (*s == '/' && glob(p + 1, s + 1))
						return 1;
				return 0;
			}
			for (;; s++) {
				if (glob(p, s))
					return 1;
				if (*s == '\0')
					return 0;
			}
		}
		if (*p == '*') {
			for (;; s++) {
				if (glob(p + 1, s))
					return 1;
				if (*s == '\0' || *s == '/')
					return 0;
			}
		}
		if (*s == '\0')
			return 0;
		if (*p == '?') {
			if (*s == '/')
				return 0;
			continue;
		}
		if (*p == '[' && *s != '/' &&
		    (m = match_class(p, *s, &e)) >= 0) {
			if (!m)
				return 0;
			p = e - 1;
			continue;
		}
		if (*p == '\\' && p[1] != '\0')
			p++;
		if (*p != *s)
			return 0;
	}
	return *s == '\0';
}

/* Does the pattern match s from its start (anchored), or from the start
 * of any of its segments? */
static int
glob_at(const struct rule *r, const char *s)
{
	if (glob(r->pattern, s))
		return 1;
	if (r->anchored)
		return 0;
	for (; *s != '\0'; s++)
		if (*s == '/' && glob(r->pattern, s + 1))
			return 1;
	return 0;
}

/* Does a rule match the file at path, or a directory above it (a
 * directory's owners own what is in it)? Not for a pattern ending in a
 * slash and a star: it owns a directory's own files, not deeper ones
 * (GitHub's documentation). */
static int
rule_match(const struct rule *r, const char *path)
{
	char	 buf[PATH_MAX], *sl;
	size_t	 n = strlen(path), k = strlen(r->pattern);

	if (n >= sizeof buf)
		return 0;
	memcpy(buf, path, n + 1);
	if (!r->dir_only && glob_at(r, buf))
		return 1;
	if (k >= 2 && strcmp(r->pattern + k - 2, "/*") == 0)
		return 0;
	while ((sl = strrchr(buf, '/')) != NULL) {
		*sl = '\0';
		if (glob_at(r, buf))
			return 1;
	}
	return 0;
}

/* The next word of a line (spaces end it unless escaped) into buf; NULL
 * at the end or at a comment. */
static const char *
word(const char *p, char *buf, size_t len)
{
	size_t	 n = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '#')
		return NULL;
	while (*p != '\0' && *p != ' ' && *p != '\t') {
		if (*p == '\\' && p[1] != '\0') {
			if (p[1] == ' ' || p[1] == '#')
				p++;
			else if (n + 1 < len)
				buf[n++] = *p++;
		}
		if (n + 1 < len)
			buf[n++] = *p;
		p++;
	}
	buf[n] = '\0';
	return p;
}

/* The owners after p, space-separated (NULL: none): words that start
 * with '@' or hold one (e-mails); anything else ends them. */
static char *
owners_of(const char *p)
{
	struct flaky_buf b;
	char	 w[512];

	flaky_buf_init(&b);
	while ((p = word(p, w, sizeof w)) != NULL && strchr(w, '@') != NULL) {
		if (b.len > 0)
			flaky_buf_addc(&b, ' ');
		flaky_buf_adds(&b, w);
	}
	if (b.len == 0 || b.oom) {
		flaky_buf_free(&b);
		return NULL;
	}
	return (char *)flaky_buf_cstr(&b);
}

/* A GitLab section header ("[Name]", "^[Name]", "[Name][2]", then its
 * default owners): 1 with its owners added as a new section. */
static int
section(struct flaky_codeowners *c, const char *line)
{
	const char *p = line;
	char	**v;

	if (*p == '^')
		p++;
	if (*p != '[' || (p = strchr(p, ']')) == NULL)
		return 0;
	p++;
	if (*p == '[' && (p = strchr(p, ']')) != NULL)
		p++;
	if (p == NULL)
		return 0;
	if ((v = realloc(c->defaults, (c->nsections + 1) * sizeof *v)) == NULL)
		return -1;
	c->defaults = v;
	c->defaults[c->nsections++] = owners_of(p);
	return 1;
}

/* One line of the file into c: a rule, a section, or nothing. */
static int
parse_line(struct flaky_codeowners *c, const char *line)
{
	char	 pat[PATH_MAX];
	const char *p;
	struct rule *r;
	size_t	 n;
	int	 k;

	while (*line == ' ' || *line == '\t')
		line++;
	if ((k = section(c, line)) != 0)
		return k < 0 ? -1 : 0;
	if ((p = word(line, pat, sizeof pat)) == NULL || c->n >= RULES_MAX)
		return 0;
	if ((r = realloc(c->v, (c->n + 1) * sizeof *r)) == NULL)
		return -1;
	c->v = r;
	r = &c->v[c->n];
	memset(r, 0, sizeof *r);
	n = strlen(pat);
	r->dir_only = n > 1 && pat[n - 1] == '/';
	if (r->dir_only)
		pat[--n] = '\0';
	r->anchored = pat[0] == '/' || strchr(pat, '/') != NULL;
	r->pattern = strdup(pat[0] == '/' ? pat + 1 : pat);
	r->owners = owners_of(p);
	r->section = (int)c->nsections;
	if (r->pattern == NULL)
		return -1;
	c->n++;
	return 0;
}

int
flaky_codeowners_parse(const char *text, size_t len,
    struct flaky_codeowners **ret)
{
	struct flaky_codeowners *c;
	char	*line;
	size_t	 i = 0;

	*ret = NULL;
	if ((c = calloc(1, sizeof *c)) == NULL ||
	    (line = malloc(len + 1)) == NULL) {
		free(c);
		return -ENOMEM;
	}
	while (i < len) {
		size_t	 n = 0;

		while (i + n < len && text[i + n] != '\n')
			n++;
		memcpy(line, text + i, n);
		line[n] = '\0';
		if (n > 0 && line[n - 1] == '\r')
			line[n - 1] = '\0';
		i += n + 1;
		if (parse_line(c, line) < 0) {
			free(line);
			flaky_codeowners_free(c);
			return -ENOMEM;
		}
	}
	free(line);
	*ret = c;
	return 0;
}

int
flaky_codeowners_match(const struct flaky_codeowners *c, const char *path,
    struct flaky_buf *b)
{
	size_t	 start = b->len;
	int	 found = 0;

	if (c == NULL || path == NULL)
		return 0;
	/* the last matching rule of each section (GitHub: one section) */
	for (size_t sec = 0; sec <= c->nsections; sec++) {
		const struct rule *hit = NULL;
		const char *o;

		for (size_t i = 0; i < c->n; i++)
			if ((size_t)c->v[i].section == sec &&
			    rule_match(&c->v[i], path))
				hit = &c->v[i];
		if (hit == NULL)
			continue;
		o = hit->owners != NULL ? hit->owners : sec > 0 ?
		    c->defaults[sec - 1] : NULL;
		if (o == NULL)
			continue;	/* a pattern without owners: none */
		flaky_buf_adds(b, b->len > start ? " " : "");
		flaky_buf_adds(b, o);
		found = 1;
	}
	return found;
}

const char *
flaky_codeowners_file(const struct flaky_codeowners *c)
{
	return c != NULL ? c->file : NULL;
}

/* Is there a file (or directory, for .git) at dir/name? */
static int
exists(const char *dir, const char *name, char *path, size_t len)
{
	struct stat st;

	if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
		return 0;
	return stat(path, &st) == 0;
}

int
flaky_codeowners_load(const char *dir, struct flaky_codeowners **ret,
    char *err, size_t errlen)
{
	static const char *const where[] = { ".github/CODEOWNERS",
	    ".gitlab/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS" };
	char	 root[PATH_MAX], path[PATH_MAX], *text = NULL, *sl;
	size_t	 len, k;
	int	 r;

	*ret = NULL;
	if (dir == NULL || *dir != '/' || strlen(dir) >= sizeof root)
		return 0;
	/* the repository's top: the directory with .git, up from dir */
	snprintf(root, sizeof root, "%s", dir);
	for (int up = 0; !exists(root, ".git", path, sizeof path); up++) {
		if (up == UP_MAX || (sl = strrchr(root, '/')) == NULL ||
		    sl == root) {
			snprintf(root, sizeof root, "%s", dir);
			break;
		}
		*sl = '\0';
	}
	for (k = 0; k < FLAKY_ARRAY_SIZE(where); k++)
		if (exists(root, where[k], path, sizeof path))
			break;
	if (k == FLAKY_ARRAY_SIZE(where))
		return 0;
	if ((r = flaky_read_file(path, CODEOWNERS_MAX, &text, &len, err,
	    errlen)) < 0)
		return r;
	if ((r = flaky_codeowners_parse(text, len, ret)) < 0) {
		free(text);
		return flaky_error(err, errlen, -r, "out of memory");
	}
	free(text);
	snprintf((*ret)->file, sizeof (*ret)->file, "%s", path);
	snprintf((*ret)->root, sizeof (*ret)->root, "%s", root);
	len = strlen(root);
	snprintf((*ret)->prefix, sizeof (*ret)->prefix, "%s",
	    dir[len] == '/' ? dir + len + 1 : "");
	return 0;
}

/* Has s a file name's extension (".py", ".ts")? */
static int
has_ext(const char *s, size_t n)
{
	for (size_t i = n; i-- > 0 && s[i] != '/';)
		if (s[i] == '.')
			return i > 0 && n - i >= 2 && n - i <= 6;
	return 0;
}

/* file's path from the repository's top (the target's directory, then
 * file) in buf; "" when too long. */
static const char *
in_repo(const struct flaky_codeowners *c, const char *file, char *buf,
    size_t len)
{
	if ((size_t)snprintf(buf, len, "%s%s%s", c->prefix, c->prefix[0] ?
	    "/" : "", file) >= len)
		buf[0] = '\0';
	return buf;
}

/* Match file in the target's directory. */
static int
match_in(const struct flaky_codeowners *c, const char *file,
    struct flaky_buf *b)
{
	char	 path[PATH_MAX];

	return *in_repo(c, file, path, sizeof path) != '\0' &&
	    flaky_codeowners_match(c, path, b);
}

int
flaky_codeowners_test(const struct flaky_codeowners *c, const char *test,
    struct flaky_buf *b)
{
	char	 file[PATH_MAX];
	const char *t = test, *end;
	char	*dot, *sl;
	size_t	 n;

	if (c == NULL || test == NULL)
		return 0;
	if (strncmp(t, "./", 2) == 0)
		t += 2;
	/* pytest's "f.py::C::t", the JavaScript runners' "f › d › t",
	 * RSpec's "f_spec.rb[1:2]" */
	if ((end = strstr(t, "::")) == NULL &&
	    (end = strstr(t, " \xe2\x80\xba ")) == NULL)
		end = strchr(t, '[');
	n = end != NULL ? (size_t)(end - t) : strlen(t);
	if (n >= sizeof file - 4)
		return 0;
	memcpy(file, t, n);
	file[n] = '\0';
	if (end != NULL || has_ext(file, n))
		return match_in(c, file, b);
	dot = strrchr(file, '.');
	sl = strrchr(file, '/');
	if (sl != NULL && dot == NULL) {
		/* Go's "pkg/TestX/sub": its package's directory */
		*strchr(file, '/') = '\0';
		return match_in(c, file, b);
	}
	/* unittest's "pkg.mod.Class.test", JUnit's "com.x.FooTest": each
	 * module it may be, longest first ("pkg/mod/Class.py", then
	 * "pkg/mod.py"), then the dotted path as directories */
	for (char *q = file; *q != '\0'; q++)
		if (*q == '.')
			*q = '/';
	for (size_t k = strlen(file); k > 0; k--) {
		char	 mod[PATH_MAX], rel[PATH_MAX], at[PATH_MAX];

		if (file[k] != '/' && file[k] != '\0')
			continue;
		snprintf(mod, sizeof mod, "%.*s.py", (int)k, file);
		/* the module that is there, when the checkout is known: a
		 * rule for every file ("*") would match the first guess */
		if (c->root[0] != '\0' && !exists(c->root, in_repo(c, mod, rel,
		    sizeof rel), at, sizeof at))
			continue;
		if (match_in(c, mod, b))
			return 1;
	}
	return match_in(c, file, b);
}
