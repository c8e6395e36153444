/* Diagnosis of one test over a window of stored runs: its failure modes
 * and signature, whether its failures follow another test in the run
 * order (the polluter), flaky or broken per revision with fixed and
 * regressed transitions, and how failing runs differ in time from
 * passing ones. See docs/triage.md. */
#ifndef FLAKY_DIAGNOSE_H
#define FLAKY_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
/* Seed sweeps and tolerance headroom (seeds.c, headroom.c), apart in
 * diagnose_seed.h, a part of this header. */
#include "diagnose/diagnose_seed.h"

/* At most this many tests are examined for order dependence at once. */
#define FLAKY_ORDER_VICTIMS_MAX	256
/* Runs read for order dependence: the newest this many in the window
 * (a report reads fewer). */
#define FLAKY_ORDER_RUNS_MAX	2000
#define FLAKY_ORDER_RUNS_REPORT	500
/* RACE from timing in a report reads about this many results per target
 * (the newest runs, 20 to FLAKY_ORDER_RUNS_REPORT of them). */
#define FLAKY_TIMING_ROWS_REPORT	200000
/* A polluter needs at least this many failures after it (a set-up test
 * as many failures in the runs where it did not run before). */
#define FLAKY_ORDER_MIN_FAILS	3
/* ... and a one-sided Fisher p-value, times the candidates and the two
 * directions, below this. */
#define FLAKY_ORDER_ALPHA	1e-4
/* Failures at most this long are "early" when passes take longer. */
#define FLAKY_EARLY_MS		200.0
/* RACE from timing: at least this many failing and passing durations ...
 * and a two-sided Mann-Whitney p-value below this. */
#define FLAKY_TIMING_MIN	5
#define FLAKY_TIMING_ALPHA	1e-3

/* Stress (issue 18): a test fails more under a perturbation than calm
 * when its stressed rate is at least FLAKY_STRESS_RATIO times the calm one
 * and a one-sided Fisher test gives p below FLAKY_STRESS_ALPHA (with at
 * least FLAKY_STRESS_MIN_FAILS failures under it): evidence for RACE (an
 * UNKNOWN signature becomes RACE) or for a TIMEOUT it already has. */
#define FLAKY_STRESS_ALPHA	1e-3
#define FLAKY_STRESS_RATIO	2.0
#define FLAKY_STRESS_MIN_FAILS	3
struct flaky_stress_evidence {
	const char	*perturbation;	/* the worst; NULL: not sensitive */
	int64_t		 calm_runs, calm_failures;
	int64_t		 runs, failures;	/* under it */
	double		 p;
};
/* The evidence from a test's rows per perturbation (calm first): 1 when
 * it fails more under stress (ev filled; perturbation points into v),
 * else 0. */
int	 flaky_stress_sensitive(const struct flaky_perturb_row *, size_t,
	    struct flaky_stress_evidence *);
/* The signature with that evidence: UNKNOWN (or none) becomes RACE,
 * anything else stays. */
const char *flaky_stress_signature(const char *signature);

/* Box (issue 15): a test that fails on one box and never on the others
 * is an infrastructure flake of that box: at least FLAKY_BOX_MIN_RUNS
 * runs and FLAKY_BOX_MIN_FAILS failures on it, no failure on any other
 * box, at least FLAKY_BOX_MIN_RUNS runs on another box (those with fewer
 * runs say too little to count), and a one-sided Fisher test of its
 * failures against the other boxes' below FLAKY_BOX_ALPHA: evidence for
 * INFRA (an UNKNOWN signature becomes INFRA). */
#define FLAKY_BOX_ALPHA		1e-3
#define FLAKY_BOX_MIN_RUNS	10
#define FLAKY_BOX_MIN_FAILS	3
/* The rates per box come from the newest runs of a target that hold
 * about this many results (20 to 500 runs; as a report reads durations
 * for timing): report, show and triage say the same. */
#define FLAKY_BOX_ROWS		200000
struct flaky_box_evidence {
	const char	*box;		/* the box it fails on; NULL: none */
	int64_t		 runs, failures;	/* on it */
	int64_t		 other_runs;	/* on the other boxes, none failed */
	int		 other_boxes;	/* how many, with enough runs */
	double		 p;
};
/* The evidence from a test's rows per box: 1 when it fails on one box
 * only (ev filled; box points into v), else 0. */
int	 flaky_box_infra(const struct flaky_box_row *, size_t,
	    struct flaky_box_evidence *);
/* The signature with that evidence: UNKNOWN (or none) becomes INFRA,
 * anything else stays. */
const char *flaky_box_signature(const char *signature);

/* Order dependence: failures of a victim against whether a candidate ran
 * before it in the same run. Either direction: it fails after a polluter,
 * or it fails unless a set-up test (the provider) ran first. */
struct flaky_order_evidence {
	int64_t		 polluter_id;	/* 0: none found */
	int64_t		 provider_id;	/* 0: none; else it must run first */
	int64_t		 k_before, n_before;	/* fails of runs with it before */
	int64_t		 k_without, n_without;	/* fails of the other runs */
	double		 p;		/* one-sided Fisher, uncorrected */
	size_t		 candidates;	/* tests compared, each both ways */
};

/* Accumulates run orders for a set of victims (tests with mixed
 * outcomes), then names each one's polluter if the evidence holds. */
struct flaky_order_acc;
int	 flaky_order_new(const int64_t *victims, size_t n,
	    struct flaky_order_acc **ret);
void	 flaky_order_free(struct flaky_order_acc *);
int	 flaky_order_add_run(struct flaky_order_acc *,
	    const struct flaky_run_order *);
/* The evidence for victims[i]; returns 1 when a polluter or a set-up
 * test was found (polluter_id or provider_id says which). */
int	 flaky_order_result(const struct flaky_order_acc *, size_t i,
	    struct flaky_order_evidence *);
/* Read a target's run orders from the store into a new accumulator. */
int	 flaky_order_from_store(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, const int64_t *victims, size_t n,
	    size_t max_runs, struct flaky_order_acc **ret, char *err,
	    size_t errlen);

enum flaky_rev_state {
	FLAKY_REV_STABLE = 0,	/* no failure */
	FLAKY_REV_FLAKY,	/* passed and failed */
	FLAKY_REV_BROKEN,	/* failed every run */
};
enum flaky_transition {
	FLAKY_TRANS_NONE = 0,
	FLAKY_TRANS_FIXED,	/* failed before, no failure at this one */
	FLAKY_TRANS_REGRESSED,	/* no failure before, fails at this one */
};
const char *flaky_rev_state_name(int);
const char *flaky_transition_name(int);

/* A test at one revision (NULL: runs that recorded none). */
struct flaky_rev_stat {
	char		*revision;
	int64_t		 runs, failures;
	int64_t		 first_ms, last_ms;
	int		 state;		/* enum flaky_rev_state */
	int		 transition;	/* from the revision before */
	double		 ci_low, ci_high;	/* 95% Wilson */
};

/* One distinct failure (by fingerprint). */
struct flaky_failure_mode {
	int64_t		 fingerprint;
	int64_t		 count;
	char		*signature;
	char		*normalized;
	char		*example;	/* the newest real message */
	int64_t		 last_run_id;
};

struct flaky_sig_tally {
	char		*name;
	int64_t		 count;
};

struct flaky_timing {
	int64_t		 n_pass, n_fail;	/* with a known duration */
	double		 median_pass, p90_pass;	/* ms; NAN: none */
	double		 median_fail, p90_fail;
	double		 min_fail, max_fail;
	int		 early;		/* failures end well before passes */
	int		 near_limit;	/* failures cluster at one long time */
	double		 mw_p;		/* Mann-Whitney, fail vs pass; NAN:
					 * under FLAKY_TIMING_MIN of either */
	int		 varies;	/* outcome goes with the duration,
					 * not near a limit: RACE evidence */
};
/* Timing from durations in microseconds (sorted here, in place; either
 * may be NULL when its count is 0). */
void	 flaky_timing_fold(struct flaky_timing *, int64_t *pass, size_t np,
	    int64_t *fail, size_t nf);

/* The overall verdict at the latest revision. A test without a counted
 * run in the window has none: it is not stable, it is unknown. */
enum flaky_verdict {
	FLAKY_VERDICT_STABLE = 0,	/* never failed in one or more runs */
	FLAKY_VERDICT_FLAKY,		/* mixed at the latest revision */
	FLAKY_VERDICT_BROKEN,		/* fails every run at the latest */
	FLAKY_VERDICT_FIXED,		/* failed before, not at the latest */
	FLAKY_VERDICT_SKIPPED,		/* no counted run, only skips */
	FLAKY_VERDICT_NONE,		/* no counted run: no evidence */
};
const char *flaky_verdict_name(int);

struct flaky_diagnosis {
	int64_t		 test_id, target_id;
	char		*target, *test;
	int64_t		 runs, failures, skips;
	int64_t		 first_ms, last_ms;	/* 0: no result in the window */
	/* Its target's runs in the window (of the kinds asked for) and how
	 * many were incomplete: why a test has no counted run. Read only
	 * for such a test (runs and skips 0); -1 otherwise. */
	int64_t		 target_runs, target_incomplete;
	char		*incomplete_why;	/* the newest such run's reason */
	const char	*signature;	/* dominant; NULL: never failed */
	char		*sigbuf;
	struct flaky_sig_tally *sigs;	/* all seen, most first */
	size_t		 nsigs;
	struct flaky_failure_mode *modes;	/* most first */
	size_t		 nmodes;
	struct flaky_order_evidence order;
	char		*polluter;	/* suspected from the stored run
					 * orders: its test name, or NULL */
	/* Confirmed: the set flakyctl polluter stored (table polluters),
	 * shown to make the test fail when run before it; its test names
	 * in run order. npolluters 0: none stored. */
	char		**polluters;
	size_t		 npolluters;
	int		 polluters_minimal;	/* 0: its budget ran out */
	char		*depends_on;	/* the set-up test's name, or NULL */
	int		 race_timing;	/* RACE because of timing.varies */
	struct flaky_rev_stat *revs;	/* oldest first */
	size_t		 nrevs;
	int		 verdict;	/* enum flaky_verdict */
	struct flaky_timing timing;
	char		*seed;		/* of the newest failing run */
	char		*runner;
	char		*command, *dir;	/* the target's */
	struct flaky_result_row *failed;	/* every failure, oldest first */
	size_t		 nfailed;
	/* flakyctl confirm's runs of the test alone against the others */
	int64_t		 alone_runs, alone_failures;
	int64_t		 suite_runs, suite_failures;
	double		 alone_p;	/* all failures in the suite by chance */
	int		 passes_alone;	/* confirmed order dependence */
	/* The mirror: failing alone every time while it passes in the suite
	 * is order dependence too (it relies on a test that ran first). */
	double		 alone_pass_p;	/* all passes in the suite by chance */
	int		 fails_alone;
	/* issue 18: the rate per perturbation, and the stress evidence */
	struct flaky_perturb_row *perturbs;
	size_t		 nperturbs;
	struct flaky_stress_evidence stress;
	int		 stress_race;	/* RACE because of stress */
	/* issue 15: the rate per box, and the evidence of one box */
	struct flaky_box_row *boxes;
	size_t		 nboxes;
	struct flaky_box_evidence box;
	int		 box_infra;	/* INFRA because of one box */
	/* issue 29: the revisions it failed and passed on in the window,
	 * newest first (flaky_store_test_flips): flaky with no rate
	 * needed. A break and its fix (every run of a revision failed, the
	 * next revision passed) is none. */
	struct flaky_flip *flips;
	size_t		 nflips;
	int64_t		 since_ms, until_ms;	/* the window asked for */
	/* issue 34: seed sweeps and the headroom of approximate
	 * assertions (diagnose_seed.h) */
	struct flaky_seed_evidence seed_ev;
	int		 seed_sig;	/* SEED because of the sweep */
	struct flaky_headroom_site *headroom;
	size_t		 nheadroom;
	/* issue 33: where its timeouts hung, from their stored stacks */
	struct flaky_hangs hangs;
};

/* The trigger flakyctl confirm records; what makes a run alone is its kind
 * (FLAKY_KIND_ALONE), not this name. */
#define FLAKY_TRIGGER_CONFIRM	"confirm"
/* Passing alone confirms order dependence below this chance. */
#define FLAKY_ALONE_ALPHA	0.01

/* Everything about one test in the window. */
int	 flaky_diagnose_test(struct flaky_store *, int64_t test_id,
	    const struct flaky_query *, struct flaky_diagnosis **ret,
	    char *err, size_t errlen);
/* The same for n tests at once, ret[i] for ids[i]: one pass over each
 * target's results serves up to FLAKY_ORDER_VICTIMS_MAX tests. */
int	 flaky_diagnose_tests(struct flaky_store *, const int64_t *ids,
	    size_t n, const struct flaky_query *, struct flaky_diagnosis **ret,
	    char *err, size_t errlen);
void	 flaky_diagnosis_free(struct flaky_diagnosis *);
/* The passes in a row that release a quarantined test (docs/history.md):
 * fixed when above 0, else ceil(ln 0.05 / ln(1 - p)) with p its failure
 * rate in all its stored runs, FLAKY_RELEASE_AFTER for a test that never
 * failed. *p gets the rate (-1 when fixed or unknown). */
#define FLAKY_RELEASE_AFTER	30
long long flaky_release_after(struct flaky_store *, int64_t test_id,
	    long long fixed, double *p);

/* Folding the evidence of a test's results (pure; also used by tests):
 * revisions, timing, modes and signatures into d. */
int	 flaky_diagnose_rows(struct flaky_diagnosis *d,
	    const struct flaky_result_row *rows, size_t n);

/* The per-test signature for a report: the dominant stored signature
 * (ORDER_DEPENDENT when a polluter or a set-up test was found, RACE when
 * it is UNKNOWN and the outcome goes with the duration), all signatures
 * with counts, and the polluter's or set-up test's name. Only for the tests asked about, and
 * the order is read only for the victims among them (a report asks about
 * the tests it shows: reading every run's order for every test would
 * make a report over millions of results slow). */
struct flaky_test_sig {
	int64_t		 test_id;
	char		*signature;	/* NULL: never failed */
	struct flaky_sig_tally *sigs;
	size_t		 nsigs;
	char		*polluter;	/* NULL: none found */
	char		*depends_on;	/* NULL: none found */
	int		 race_timing;	/* RACE from timing (below) */
	struct flaky_timing timing;	/* read for UNKNOWN ones only */
	int		 stress_race;	/* RACE from stress (issue 18) */
	int		 box_infra;	/* INFRA from one box (issue 15) */
	int		 seed_sensitive;	/* SEED (issue 34) */
};
/* Make the UNKNOWN signatures of tests that fail more under stress RACE
 * (sigs sorted by test id, perturbs as flaky_store_perturb_stats gives
 * them); -ENOMEM. */
int	 flaky_stress_sigs(struct flaky_test_sig *, size_t,
	    const struct flaky_perturb_row *, size_t);
/* Make the UNKNOWN signatures of tests that fail on one box only INFRA
 * (sigs sorted by test id, boxes as flaky_store_box_stats gives them). */
void	 flaky_box_sigs(struct flaky_test_sig *, size_t,
	    const struct flaky_box_row *, size_t);
int	 flaky_test_signatures(struct flaky_store *, const struct flaky_query *,
	    const int64_t *ids, size_t nids, const int64_t *victims,
	    size_t nvictims, struct flaky_test_sig **ret, size_t *ret_n,
	    char *err, size_t errlen);
void	 flaky_test_sigs_free(struct flaky_test_sig *, size_t);
/* The entry for a test id in a list from flaky_test_signatures, or NULL. */
const struct flaky_test_sig *flaky_test_sig_find(const struct flaky_test_sig *,
	    size_t, int64_t test_id);

/* Finding a test by a full id or a unique part of one. */
enum {
	FLAKY_FIND_ONE = 0,	/* *match is the test */
	FLAKY_FIND_AMBIGUOUS,	/* matches[] lists the candidates */
	FLAKY_FIND_NONE,	/* matches[] lists the closest names */
};
/* Looks query up in refs; fills up to max indexes into refs. */
int	 flaky_find_test(const struct flaky_test_ref *refs, size_t n,
	    const char *query, size_t *matches, size_t max, size_t *nmatches);
/* Edit distance, bounded: strings are cut at FLAKY_EDIT_MAX bytes (a
 * miss over 100,000 test names takes about a second). */
#define FLAKY_EDIT_MAX	64
size_t	 flaky_edit_distance(const char *, const char *);

/* Co-failure clusters (cluster.c, docs/triage.md): tests of one target
 * that fail in the same runs more often than chance allows. Each pair of
 * tests with at least min_failures failures is a 2x2 table over the runs
 * both ran in; a pair is linked when its failing runs overlap by a
 * Jaccard index of at least min_jaccard and its one-sided Fisher p-value
 * passes Holm's step-down correction at alpha over every pair eligible.
 * Clusters are the connected components of the links. */
#define FLAKY_CLUSTER_MIN_FAILS	3
#define FLAKY_CLUSTER_MIN_JACCARD	0.3
#define FLAKY_CLUSTER_ALPHA	0.01
/* The newest runs of the window read, the same for every command (a
 * cluster's number means one thing in clusters, triage, report and
 * ticket), and as many as a report reads for polluters. */
#define FLAKY_CLUSTER_RUNS_MAX	500

struct flaky_cluster_opts {
	int64_t		 min_failures;	/* 0: FLAKY_CLUSTER_MIN_FAILS */
	double		 min_jaccard;	/* 0: FLAKY_CLUSTER_MIN_JACCARD */
	double		 alpha;		/* 0: FLAKY_CLUSTER_ALPHA */
};

/* A hint of the common cause: a value and how often it was seen. */
struct flaky_cluster_hint {
	char		*value;		/* NULL: none */
	int64_t		 count;		/* of total */
	int64_t		 total;
	int64_t		 tests;		/* members that show it */
};

struct flaky_cluster_member {
	int64_t		 test_id;
	char		*name;
	int64_t		 runs, failures;	/* in the window's runs read */
};

struct flaky_cluster {
	int		 id;		/* 1..n, biggest first */
	int64_t		 target_id;
	char		*target;
	struct flaky_cluster_member *members;	/* most failures first */
	size_t		 n;
	int64_t		 runs;		/* runs of the target read */
	int64_t		 shared_runs;	/* runs where two or more failed */
	int64_t		 any_runs;	/* runs where one or more failed */
	double		 mean_jaccard, min_jaccard;	/* over member pairs */
	double		 p_max;		/* the weakest link's p-value */
	/* What the failures in shared runs have in common. */
	struct flaky_cluster_hint message;	/* normalized text */
	int64_t		 fingerprint;
	struct flaky_cluster_hint signature;
	struct flaky_cluster_hint file;		/* members' file or class */
	int64_t		 hours[24];	/* shared runs by UTC hour started */
	int64_t		 run_hours[24];	/* all runs of the target so */
	/* The FLAKY_CLUSTER_HOURS hours (from peak_hour, UTC, wrapping at
	 * midnight) that hold the most shared runs: peak_shared of them,
	 * and peak_runs of all the target's runs; peak_hour -1: none. */
	int		 peak_hour;
	int64_t		 peak_shared, peak_runs;
	/* Hypergeometric p of peak_shared or more there by chance, and
	 * whether it is a hint: under alpha once multiplied by 24 (the
	 * windows tried). */
	double		 peak_p;
	int		 hours_hint;
};
#define FLAKY_CLUSTER_HOURS	4

struct flaky_clusters {
	struct flaky_cluster *v;
	size_t		 n;
	size_t		 tests;		/* tests with min_failures */
	int64_t		 runs;		/* runs read */
	uint64_t	 pairs;		/* pairs eligible (the correction) */
	uint64_t	 tested;	/* pairs that met the Jaccard bound */
	uint64_t	 links;		/* pairs significant */
};

/* Clusters from the evidence (pure: the unit tests feed it directly). */
int	 flaky_clusters_find(const struct flaky_cofail *,
	    const struct flaky_cluster_opts *, struct flaky_clusters *ret);
/* The same from the store's window of q. */
int	 flaky_clusters_from_store(struct flaky_store *,
	    const struct flaky_query *, const struct flaky_cluster_opts *,
	    struct flaky_clusters *ret, char *err, size_t errlen);
void	 flaky_clusters_free(struct flaky_clusters *);
/* The cluster a test is in, or NULL. */
const struct flaky_cluster *flaky_cluster_of(const struct flaky_clusters *,
	    int64_t test_id);
/* The file or class of a test id (pytest "f.py::C::t" gives
 * "f.py", Jest "f › d › t" gives "f", unittest "m.C.t" gives "m.C");
 * into buf, cut to len. */
void	 flaky_test_group(const char *test, char *buf, size_t len);

/* The smallest polluter (minimize.c): ddmin over ncand tests that ran
 * before a victim in a failing run. The oracle is asked about a subset,
 * as indexes into the candidates in their order, and returns 1 when the
 * victim fails after them, 0 when it passes, or a negative errno. */
typedef int	(*flaky_minimize_oracle)(const size_t *idx, size_t n,
		    void *arg);
struct flaky_minimize {
	size_t		*set;		/* indexes, ascending */
	size_t		 n;
	size_t		 calls;		/* oracle calls made */
	int		 minimal;	/* 1-minimal; 0: the budget ran out */
};
/* 0 with a 1-minimal failing set; -ENOENT when all ncand do not fail;
 * -E2BIG when max_calls ran out (*ret then holds the smallest failing set
 * found, minimal 0); -ENOMEM or the oracle's error. */
int	 flaky_minimize(size_t ncand, size_t max_calls,
	    flaky_minimize_oracle, void *arg, struct flaky_minimize *ret);
void	 flaky_minimize_free(struct flaky_minimize *);


/* Stacks of hung runs (hang.c, hang_lock.c, hang_words.c; issue 33,
 * docs/triage.md). Where the run of s was stuck, into s->hang: the
 * test's thread among all, its innermost frame of the test's own code
 * (files under dir, the run's directory; NULL: ours), the call it waited
 * in, waiting or running, or a deadlock. 0 or -ENOMEM. */
int	 flaky_hang_fold(struct flaky_stacks *, const char *dir);
/* A runner's own dump of a hung test (pytest-timeout's, go test
 * -timeout's) in text: a capture holding it, or NULL when there is none
 * (flaky_stacks_free). */
struct flaky_stacks *flaky_hang_from_text(const char *text, size_t len);
/* "hung in `wait_for_reply` (client.py:88) in 7 of 8 timeouts; 1 in
 * `socket.recv`", a deadlock named; nothing when no stacks are stored. */
void	 flaky_hang_words(const struct flaky_hangs *, struct flaky_buf *);
/* The first patch the newest hang points at: a lock order, a timeout on
 * the call it waited in, a bound on a loop. Nothing without stacks. */
void	 flaky_hang_patch(const struct flaky_hangs *, struct flaky_buf *);
/* The cause the newest hang names (a deadlock, a wait without a bound, a
 * loop that never ends, a promise never settled), or NULL. */
const char *flaky_hang_cause(const struct flaky_hangs *);
/* The newest hung thread's frames, trimmed to about max lines around the
 * test's own (tickets, the test page). */
void	 flaky_hang_stack(const char *frames, int max, struct flaky_buf *);

/* The words of a diagnosis (words.c), shared by flakyctl show, triage and
 * ticket and the dashboard. The triage table (DESIGN.md): most likely
 * cause and first patch of a signature. */
const char *flaky_sig_cause(const char *signature);
const char *flaky_sig_patch(const char *signature);
/* The same for one test: broken, or relying on a set-up test, first. */
const char *flaky_test_cause(const struct flaky_diagnosis *);
/* The patch of its signature: where its timeouts hung when their stacks
 * say, else the triage table's, with the polluter (flaky_test_patch's
 * last case; ticket and JSON use it for a test not broken). */
void	 flaky_sig_test_patch(const struct flaky_diagnosis *,
	    struct flaky_buf *);
void	 flaky_test_patch(const struct flaky_diagnosis *, struct flaky_buf *);
/* The reason the newest incomplete run of a target in the window of q
 * gave (of q's kinds, among its newest FLAKY_WHY_RUNS runs): a copy in
 * *ret, NULL when there is none. */
#define FLAKY_WHY_RUNS	50
int	 flaky_incomplete_why(struct flaky_store *, int64_t target_id,
	    const struct flaky_query *, char **ret, char *err, size_t errlen);
/* Why a test has no counted run: "all 3 of its results were skips (skip
 * or xfail)", "all 3 runs of its target in the window were incomplete
 * ..., the newest incomplete one: REASON" */
void	 flaky_unrun_words(const struct flaky_diagnosis *, struct flaky_buf *);
/* "; suspected polluter X (...): confirm with `flakyctl polluter T`", or
 * the confirmed set, or nothing: what a patch says of the polluter. */
void	 flaky_polluter_patch(const struct flaky_diagnosis *,
	    struct flaky_buf *);
/* One sentence of evidence for the signature. */
void	 flaky_evidence_words(const struct flaky_diagnosis *,
	    struct flaky_buf *);
/* "fails on box-3 in 4 of 9 runs, never on the other boxes (...)" */
void	 flaky_box_evidence_words(const struct flaky_diagnosis *,
	    struct flaky_buf *);
/* "outcome varies with timing: fails in a median of ..." (RACE). */
void	 flaky_race_words(const struct flaky_timing *, struct flaky_buf *);
/* The timing in words ("fails within 3 ms, passes in ~120 ms"), or "". */
void	 flaky_timing_words(const struct flaky_diagnosis *,
	    struct flaky_buf *);
/* "0/60 at abc123, at most 6% at 95%" for the latest revision. */
void	 flaky_revision_words(const struct flaky_diagnosis *,
	    struct flaky_buf *);

/* Flips in words (flips.c), the one sentence report, show, triage, the
 * ticket and the dashboard print: "flipped on 3 revisions in 14 days:
 * a1b2c3d failed in job unit#2, passed in unit#3" (a run without CI
 * metadata is named by its id: "failed in run 12, passed in run 14").
 * Only the newest detail flips are spelt out (the rest counted). since
 * INT64_MIN: "since the first run". Nothing for n 0. */
#define FLAKY_FLIP_DETAILS	3
void	 flaky_flip_words(const struct flaky_flip *, size_t n, int64_t since_ms,
	    int64_t until_ms, size_t details, struct flaky_buf *);
/* "flipped on 3 revisions in 14 days" alone (no detail), for a count. */
void	 flaky_flip_count_words(int64_t revisions, int64_t since_ms,
	    int64_t until_ms, struct flaky_buf *);
/* A revision as the words show it: a hex hash of 12 or more digits cut
 * to its first 7 (git's short form), anything else whole. */
void	 flaky_flip_revision(const char *rev, struct flaky_buf *);

/* Owners from CODEOWNERS (owners.c; docs/dashboard.md "Owners"), GitHub's
 * and GitLab's syntax. */
struct flaky_codeowners;
/* The rules of a CODEOWNERS text; -ENOMEM. */
int	 flaky_codeowners_parse(const char *text, size_t len,
	    struct flaky_codeowners **ret);
/* The rules of the repository around dir (a target's directory: up to the
 * directory with .git, then .github/CODEOWNERS, .gitlab/CODEOWNERS,
 * CODEOWNERS or docs/CODEOWNERS, the first there, at most 3 MiB): 0 with
 * *ret NULL when there is none, -errno with err when it cannot be read. */
int	 flaky_codeowners_load(const char *dir,
	    struct flaky_codeowners **ret, char *err, size_t errlen);
/* The owners of path (from the repository's top), space-separated, added
 * to b: 1, or 0 when no rule gives it one. */
int	 flaky_codeowners_match(const struct flaky_codeowners *,
	    const char *path, struct flaky_buf *b);
/* The same for a test id: its file (pytest's node id, the JavaScript
 * runners' file, RSpec's, Go's package, unittest's module), in the
 * target's directory. */
int	 flaky_codeowners_test(const struct flaky_codeowners *,
	    const char *test, struct flaky_buf *b);
/* The file the rules came from (load), or NULL. */
const char *flaky_codeowners_file(const struct flaky_codeowners *);
void	 flaky_codeowners_free(struct flaky_codeowners *);

/* A test as its runner names and selects it (repro.c). A shell command
 * that reproduces the failure: the runner's selection of this one test
 * (pytest node id, unittest id, Jest file and -t, go -run), or isolate
 * (a target's isolate: template, {test} replaced) when not NULL; the
 * suite's command for TAP and JUnit. */
void	 flaky_repro(const struct flaky_diagnosis *, const char *isolate,
	    struct flaky_buf *);
/* The runner of a test (the runs' record, else guessed from the command):
 * pytest, unittest, jest, gotest, tap, junit or NULL. */
const char *flaky_repro_runner(const char *runner, const char *command);
/* The target's command up to its runner's own word ("python3 -m
 * pytest"), or dflt when the command does not show it plainly. */
void	 flaky_repro_runner_prefix(const char *runner, const char *command,
	    const char *dflt, struct flaky_buf *);
/* s for sh, quoted when it needs it. */
void	 flaky_sh_quote(struct flaky_buf *, const char *s);
/* The test id without its file, module or package. */
const char *flaky_repro_short_name(const char *runner, const char *id);
/* Jest's full name of a test id ("describe title"), regex-escaped. */
void	 flaky_repro_jest_name(struct flaky_buf *, const char *id);
/* Go's -run/-skip pattern of a test id ("^TestX$/^sub$"); -1: not Go's. */
int	 flaky_repro_go_pattern(struct flaky_buf *, const char *id);

/* A test's ticket (ticket.c), the one text flakyctl ticket prints and the
 * dashboard's test page shows. Its title: "Checkout › talks to slow API:
 * TIMEOUT flake (js), 4/15 runs, median duration 2.3 s". */
void	 flaky_ticket_title(const struct flaky_diagnosis *, struct flaky_buf *);
/* Its Markdown body after the title, with the smallest polluter and the
 * static scan's findings st holds for the test; isolate as flaky_repro's
 * (NULL: no "Alone:" command). 0, or -ENOMEM. */
int	 flaky_ticket_body(struct flaky_store *st,
	    const struct flaky_diagnosis *, const char *isolate,
	    struct flaky_buf *);
/* The whole ticket: "## title", a blank line and the body. */
int	 flaky_ticket_markdown(struct flaky_store *st,
	    const struct flaky_diagnosis *, const char *isolate,
	    struct flaky_buf *);
/* The smallest polluter flakyctl polluter stored for a test, as lines
 * for triage (markdown 0) or a ticket's section (1); nothing if none. */
void	 flaky_polluter_words(struct flaky_store *,
	    const struct flaky_diagnosis *, int markdown, struct flaky_buf *);
/* "approximate assertion at FILE:LINE (tol), unseeded" */
void	 flaky_risk_words(const struct flaky_risk *, struct flaky_buf *);
/* A test's static scan findings, one line each after prefix: how many,
 * or -1 when the store cannot say. */
int	 flaky_risks_lines(struct flaky_store *, const char *target,
	    const char *test, const char *prefix, struct flaky_buf *);

#endif
