/* What show, triage, ticket and confirm share: options, finding a test by
 * a part of its name, the triage table's words, and JSON of a diagnosis. */
#ifndef FLAKYCTL_DIAG_H
#define FLAKYCTL_DIAG_H

#include <stdint.h>
#include <stdio.h>

#include "diagnose/diagnose.h"
#include "flakyctl.h"
#include "output.h"
#include "store/store.h"
#include "util/util.h"

/* The options every diagnosis command takes. */
struct diag_opts {
	const char	*since;		/* default 30d */
	const char	*until;
	const char	*target;
	struct flaky_query q;
};
#define DIAG_OPTIONS \
	{ "since", 's', 0, "D|DATE|all", "the window's start (default 30d; " \
	    "all: from the first run)" }, \
	{ "until", 'u', 0, "DATE", "the window's end, exclusive (default " \
	    "now)" }, \
	{ "target", 'T', 0, "NAME", "only this target's tests (default " \
	    "all targets)" }
/* Handle one of DIAG_OPTIONS; 1 when c was one. */
int	 diag_option(struct diag_opts *, int c, const char *arg);
/* The window from the options; -1 after a usage message. */
int	 diag_window(struct diag_opts *, const char *cmd);

/* The test a user means by a full id or a unique part of one. On no match
 * or an ambiguous part, prints the closest names or the candidates to
 * stderr and returns -1. */
int	 diag_resolve(struct flaky_store *, const char *cmd, const char *target,
	    const char *query, int64_t *test_id);
/* The same, with the test's whole name and its target (either pointer
 * may be NULL; the caller frees what it gets). */
int	 diag_resolve_name(struct flaky_store *, const char *cmd,
	    const char *target, const char *query, int64_t *test_id,
	    char **name, char **target_name);
/* The same among refs (what: "quarantined tests"): the index in *ret. */
int	 diag_resolve_among(const struct flaky_test_ref *refs, size_t n,
	    const char *cmd, const char *target, const char *query,
	    const char *what, size_t *ret);

/* The diagnosis as one JSON object (without the trailing newline). */
void	 diag_json(FILE *, const struct flaky_diagnosis *, int with_failures);

/* The config's isolate: template of a target, or NULL (caller frees). */
char	*diag_isolate(struct ctl *, const char *target);
/* Load the config's signatures: into a classifier made the default (for
 * what this process stores). 0 when there is no config or no signature;
 * -1 after a message on a bad config. */
struct flaky_classifier;
int	 diag_load_signatures(struct ctl *, struct flaky_store *,
	    struct flaky_classifier **);

/* Co-failure clusters (clusters.c): the window's clusters, or -1 after a
 * message naming cmd. */
int	 cluster_read(struct flaky_store *, const char *cmd,
	    const struct flaky_query *, struct flaky_clusters *);
/* "cluster 2: 14 tests of web fail together in 28 of 300 runs ..." */
void	 cluster_title(const struct flaky_cluster *, struct flaky_buf *);
/* What a cluster shares (overlap, message, signature, file, hour), one
 * line each after prefix. */
void	 cluster_hints(const struct flaky_cluster *, const char *prefix,
	    struct flaky_buf *);
/* A cluster as one JSON object (docs/json.md). */
void	 cluster_json(FILE *, const struct flaky_cluster *);
/* ticket --cluster N (cluster_ticket.c): an exit code. */
int	 cluster_ticket(struct ctl *, struct flaky_store *,
	    const struct flaky_query *, long long id);

#endif
