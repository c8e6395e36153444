/* The YAML schedule file. libyaml's document API gives a tree whose nodes
 * carry their position, so every check can name FILE:LINE:COL; the walk
 * follows the fixed shape of the file (it never recurses on user data)
 * and counts the nodes it visits, so aliases cannot blow it up. Here: the
 * file, its limits and its top level with signatures:; the readers of one
 * node are config_node.c, a target is config_target.c. */
#include "buildconf.h"

#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yaml.h>

#include "config/config.h"
#include "config_int.h"
#include "config_limits.h"
#include "sched/sched.h"
#include "util/util.h"

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

	if ((r = cfg_get_keys(c, n, "signature", keys, 2, v)) < 0)
		return r;
	if (v[0] == NULL)
		return cfg_err(c, n, "signature: expected a name: key");
	if ((r = cfg_get_str(c, v[0], "name", "a signature name",
	    &sig->name)) < 0)
		return r;
	if (!cfg_name_ok(sig->name, "._-"))
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
	if ((r = cfg_get_seq(c, v[1], "patterns", "a list of regular "
	    "expressions", &items, &cnt)) < 0)
		return r;
	if (cnt == 0)
		return cfg_err(c, v[1], "patterns: expected at least one "
		    "regular expression, got an empty sequence");
	if ((sig->patterns = calloc(cnt, sizeof *sig->patterns)) == NULL)
		return cfg_nomem(c);
	for (size_t i = 0; i < cnt; i++) {
		if ((r = cfg_get_regex(c, yaml_document_get_node(c->doc,
		    items[i]), "patterns", &sig->patterns[i])) < 0)
			return r;
		sig->npatterns++;
	}
	return 0;
}

static const char *const top_keys[] = {
	"database", "jobs", "socket", "timezone", "kill_grace", "retention",
	"redact", "signatures", "targets", "box", "http", "notify",
	"notify_window", "fleet",
};
enum {
	K_DATABASE, K_JOBS, K_SOCKET, K_TIMEZONE, K_KILL_GRACE, K_RETENTION,
	K_REDACT, K_SIGNATURES, K_TARGETS, K_BOX, K_HTTP, K_NOTIFY,
	K_NOTIFY_WINDOW, K_FLEET, K_NKEYS
};

/* box: the name every run of this flakyd records (issue 15). */
static int
parse_box(struct ctx *c, yaml_node_t *node)
{
	char	 why[160];
	int	 r;

	if ((r = cfg_get_str(c, node, "box", "a box name such as "
	    "build-07", &c->cfg->box)) < 0)
		return r;
	if (flaky_box_check(c->cfg->box, why, sizeof why) < 0)
		return cfg_err(c, node, "box: %s", why);
	return 0;
}

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
	if ((r = cfg_get_keys(c, root, NULL, top_keys, K_NKEYS, v)) < 0)
		return r;
	if (v[K_DATABASE] != NULL && (r = cfg_get_db(c, v[K_DATABASE],
	    "database", "the path of the database", &cfg->database)) < 0)
		return r;
	/* flakyd refused it at start; --check-config must say so, here */
	if (cfg->database != NULL && (c->flags & FLAKY_CONFIG_DAEMON) &&
	    cfg_is_uri(cfg->database))
		return cfg_err(c, v[K_DATABASE], "database: expected a local "
		    "SQLite file: flakyd writes its runs there and ships them "
		    "to a server named in fleet: {url: ..., box: ...} "
		    "(docs/fleet.md)");
	if (v[K_BOX] != NULL && (r = parse_box(c, v[K_BOX])) < 0)
		return r;
	if (v[K_JOBS] != NULL &&
	    (r = cfg_get_int(c, v[K_JOBS], "jobs", 1, 1024, &cfg->jobs)) < 0)
		return r;
	if (v[K_SOCKET] != NULL && (r = cfg_get_path(c, v[K_SOCKET], "socket",
	    "the path of the control socket", &cfg->socket)) < 0)
		return r;
	if (v[K_TIMEZONE] != NULL) {
		if ((r = cfg_get_str(c, v[K_TIMEZONE], "timezone", "a zone "
		    "name such as Europe/Berlin", &cfg->timezone)) < 0)
			return r;
		if ((r = flaky_tz_load(cfg->timezone, &cfg->tz, zerr,
		    sizeof zerr)) < 0)
			return r == -ENOMEM ? cfg_nomem(c) : r == -ENOENT ?
			    cfg_err(c, v[K_TIMEZONE], "timezone: expected a "
			    "zone name such as Europe/Berlin, got %s",
			    GOT(v[K_TIMEZONE])) :
			    cfg_err(c, v[K_TIMEZONE], "timezone: %s", zerr);
	} else if ((r = flaky_tz_load(NULL, &cfg->tz, zerr, sizeof zerr)) < 0)
		return r == -ENOMEM ? cfg_nomem(c) :
		    cfg_err(c, root, "timezone: %s", zerr);
	if (v[K_FLEET] != NULL && (r = cfg_parse_fleet(c, v[K_FLEET])) < 0)
		return r;
	if (v[K_KILL_GRACE] != NULL && (r = cfg_get_duration(c, v[K_KILL_GRACE],
	    "kill_grace", 0, &cfg->kill_grace_ms)) < 0)
		return r;
	if (v[K_RETENTION] != NULL && (r = cfg_get_duration(c, v[K_RETENTION],
	    "retention", 0, &cfg->retention_ms)) < 0)
		return r;
	if (v[K_REDACT] != NULL) {
		if ((r = cfg_get_seq(c, v[K_REDACT], "redact", "a list of "
		    "regular expressions", &items, &cnt)) < 0)
			return r;
		cfg->redact = calloc(cnt + 1, sizeof *cfg->redact);
		if (cfg->redact == NULL)
			return cfg_nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			if ((r = cfg_get_regex(c, yaml_document_get_node(c->doc,
			    items[i]), "redact", &cfg->redact[i])) < 0)
				return r;
			cfg->nredact++;
		}
	}
	if (v[K_SIGNATURES] != NULL) {
		if ((r = cfg_get_seq(c, v[K_SIGNATURES], "signatures", "a list "
		    "of signatures", &items, &cnt)) < 0)
			return r;
		if ((cfg->signatures = calloc(cnt + 1,
		    sizeof *cfg->signatures)) == NULL)
			return cfg_nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			r = parse_signature(c, yaml_document_get_node(c->doc,
			    items[i]), &cfg->signatures[i]);
			/* Counted even when half filled, so it is freed. */
			cfg->nsignatures++;
			if (r < 0)
				return r;
		}
	}
	if (v[K_HTTP] != NULL && (r = cfg_parse_http(c, v[K_HTTP])) < 0)
		return r;
	if (v[K_NOTIFY_WINDOW] != NULL && (r = cfg_get_int(c,
	    v[K_NOTIFY_WINDOW], "notify_window", 1, 10000,
	    &cfg->notify_window)) < 0)
		return r;
	if (v[K_NOTIFY] != NULL && (r = cfg_parse_notify(c, v[K_NOTIFY])) < 0)
		return r;
	if (v[K_TARGETS] != NULL) {
		if (cfg_is_null(v[K_TARGETS]))
			return 0;
		if ((r = cfg_get_seq(c, v[K_TARGETS], "targets", "a list of "
		    "targets", &items, &cnt)) < 0)
			return r;
		if (cnt > FLAKY_CONFIG_MAX_TARGETS)
			return cfg_err(c, v[K_TARGETS], "targets: expected at "
			    "most %d targets, got %zu",
			    FLAKY_CONFIG_MAX_TARGETS, cnt);
		if ((cfg->targets = calloc(cnt + 1, sizeof *cfg->targets)) ==
		    NULL)
			return cfg_nomem(c);
		for (size_t i = 0; i < cnt; i++) {
			r = cfg_parse_target(c, yaml_document_get_node(c->doc,
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
		return cfg_nomem(c);
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
		return cfg_nomem(c);
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
		r = cfg_nomem(&c);
		goto out;
	}
	c.cfg = cfg;
	cfg->jobs = 1;
	cfg->kill_grace_ms = 10 * 1000;
	flaky_uploads_conf_default(&cfg->http_uploads);
	cfg->notify_window = FLAKY_NOTIFY_WINDOW_DEFAULT;
	if (!yaml_parser_initialize(&parser)) {
		r = cfg_nomem(&c);
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
	yaml_mark_t	 m;
	char		*buf;
	size_t		 n, size;
	int		 r;

	*ret = NULL;
	/* A file past the size limit is read up to the limit only, to say
	 * where the limit falls in it. */
	r = flaky_read_file_head(path, FLAKY_CONFIG_MAX_BYTES, &buf, &n,
	    &size, err, errlen);
	switch (r) {
	case 0:
		r = flaky_config_parse_buffer(path, buf, n, flags, ret, err,
		    errlen);
		break;
	case -EFBIG:
		offset_mark(buf, n, n, &m);
		r = flaky_error(err, errlen, EINVAL, "%s:%zu:%zu: expected a "
		    "file of at most %d bytes (the size limit), got %zu", path,
		    m.line + 1, m.column + 1, FLAKY_CONFIG_MAX_BYTES, size);
		break;
	case -EISDIR:
	case -EINVAL:
		r = flaky_error(err, errlen, EINVAL, "%s: expected a file, got "
		    "%s", path, r == -EISDIR ? "a directory" :
		    "a special file");
		break;
	case -ENOMEM:
		break;
	default:
		r = flaky_error(err, errlen, -r, "%s: cannot open: %s", path,
		    strerror(-r));
		break;
	}
	free(buf);
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

/* Free a config and everything it owns; NULL is fine. */
void
flaky_config_free(struct flaky_config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->database);
	free(cfg->socket);
	free(cfg->http_listen);
	free(cfg->http_token_file);
	free(cfg->http_database);
	free(cfg->http_tls_cert);
	free(cfg->http_tls_key);
	free(cfg->timezone);
	free(cfg->box);
	free(cfg->fleet_url);
	free(cfg->fleet_box);
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
		cfg_target_free(&cfg->targets[i]);
	free(cfg->targets);
	cfg_receivers_free(cfg);
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
