/* What a report prints beside its rows that the rows do not hold: each
 * test's signatures over the window (with its polluter and race timing)
 * and the static scan's findings. The command's store is read once, the
 * struct handed to the printing, and freed after. */
#ifndef FLAKYCTL_EVIDENCE_H
#define FLAKYCTL_EVIDENCE_H

#include <stdint.h>
#include <stdio.h>

#include "diagnose/diagnose.h"
#include "store/store.h"
#include "util/util.h"

/* A test's flips in the report's window (issue 29), newest first. */
struct report_flips {
	int64_t			 test_id;
	struct flaky_flip	*v;
	size_t			 n;
};

struct report_evidence {
	struct flaky_test_sig	*sigs;
	size_t			 nsigs;
	struct flaky_risk	*risks;
	size_t			 nrisks;
	struct flaky_clusters	 clusters;	/* co-failure clusters */
	struct flaky_perturb_row *perturbs;	/* by test id (issue 18) */
	size_t			 nperturbs;
	struct flaky_box_row	*boxes;		/* by test id (issue 15) */
	size_t			 nboxes;
	struct report_flips	*flips;		/* by test id (issue 29) */
	size_t			 nflips;
	int64_t			 flip_since, flip_until;
	/* issue 34: seed sweeps in the window, their replays (by test
	 * id) and each listed test's tolerance headroom */
	int			 seeded;
	struct flaky_replay_row	*replays;
	size_t			 nreplays;
	struct evidence_headroom {
		int64_t		 test_id;
		struct flaky_headroom_site *v;
		size_t		 n;
	}			*hr;
	size_t			 nhr;
};

/* Load the signatures of the rows that failed (every == 0: those above
 * noise only, as the table shows no other) in the window q, the
 * co-failure clusters of q, and the findings of target (NULL: all). A part that cannot be read stays empty
 * (a failure of the signatures is said on stderr): the report goes on. */
void	 evidence_load(struct report_evidence *, struct flaky_store *,
	    const struct flaky_query *q, const char *target, int every,
	    const struct flaky_test_row *, size_t);
void	 evidence_free(struct report_evidence *);
/* A row's signatures, NULL if none. */
const struct flaky_test_sig *evidence_sig(const struct report_evidence *,
	    int64_t test_id);
/* A row's findings: how many, from *first on. */
size_t	 evidence_risks(const struct report_evidence *,
	    const struct flaky_test_row *, size_t *first);

/* The JSON members signature, signatures, polluter, depends_on and
 * race_timing of a report row. */
void	 evidence_json_sig(FILE *, const struct flaky_test_sig *);
/* The JSON member static_risks of a report row. */
void	 evidence_json_risks(FILE *, const struct report_evidence *,
	    const struct flaky_test_row *);
/* The JSON member cluster of a report row: its cluster's id or null. */
void	 evidence_json_cluster(FILE *, const struct report_evidence *,
	    const struct flaky_test_row *);
/* race_timing: null, or the evidence that made a test RACE by timing. */
void	 evidence_json_race_timing(FILE *, const struct flaky_timing *);

/* A row's rates per perturbation: how many, from *first on (none when
 * its target had no perturbed run in the window). */
size_t	 evidence_perturbs(const struct report_evidence *, int64_t test_id,
	    size_t *first);
/* "2% calm (1/50), 31% under cpu:2 (15/48)" */
void	 perturb_words(const struct flaky_perturb_row *, size_t,
	    struct flaky_buf *);
/* The JSON member by_perturbation of a report row: [] when none. */
void	 evidence_json_perturbs(FILE *, const struct report_evidence *,
	    int64_t test_id);
/* The words of the table's line under a row with rates per
 * perturbation, appended to b: 1, or 0 (nothing) when the test had only
 * calm runs. */
int	 evidence_perturb_words(const struct report_evidence *, int64_t,
	    struct flaky_buf *b);
/* "2% calm (1/50), 31% under cpu:2 (15/48); fails more under cpu:2
 * (Fisher p = 2e-05)": nothing when the test had only calm runs. */
void	 diag_stress_words(const struct flaky_diagnosis *, struct flaky_buf *);
/* The JSON members by_perturbation and stress of a diagnosis. */
void	 diag_json_stress(FILE *, const struct flaky_diagnosis *);

/* boxes.c (issue 15). The rates per box of the tests ids (those the
 * report lists), and INFRA in the signatures of those that fail on one
 * box only; a failure is said on stderr and the report goes on. */
void	 evidence_load_boxes(struct report_evidence *, struct flaky_store *,
	    const struct flaky_query *, const int64_t *ids, size_t n);
/* "30% on box-a (9/30), 0% on box-b (0/30); fails on box-a only (Fisher
 * p = 0.00096)" */
void	 box_words(const struct flaky_box_row *, size_t, struct flaky_buf *);
/* The line under a report row: 1, or 0 (nothing) when its test ran on
 * one box. */
int	 evidence_box_words(const struct report_evidence *, int64_t test_id,
	    struct flaky_buf *);
/* The JSON member boxes of a report row: [] when it ran on one box. */
void	 evidence_json_boxes(FILE *, const struct report_evidence *,
	    int64_t test_id);
/* A diagnosis' rates per box (nothing on one box), the sentence of its
 * INFRA evidence, and its JSON members boxes and box_evidence. */
void	 diag_box_words(const struct flaky_diagnosis *, struct flaky_buf *);
void	 diag_json_boxes(FILE *, const struct flaky_diagnosis *);

/* flips.c (issue 29). The flips of the rows' tests in the window of q
 * (a failure is said on stderr and the report goes on). */
void	 evidence_load_flips(struct report_evidence *, struct flaky_store *,
	    const struct flaky_query *, const struct flaky_test_row *,
	    size_t);
void	 evidence_free_flips(struct report_evidence *);
/* A test's flips, or NULL when it has none in the window. */
const struct report_flips *evidence_flips(const struct report_evidence *,
	    int64_t test_id);
/* "flipped on 3 revisions in 14 days: ...": 1, or 0 (nothing) when none. */
int	 evidence_flip_words(const struct report_evidence *, int64_t test_id,
	    struct flaky_buf *);
/* The JSON member flips of a report row: how many revisions. */
void	 evidence_json_flips(FILE *, const struct report_evidence *,
	    int64_t test_id);
/* The JSON members flips, flip_revisions and flip_summary of a
 * diagnosis (show, triage, ticket). */
void	 diag_json_flips(FILE *, const struct flaky_diagnosis *);
/* evidence_seed.c (issue 34). The window's seed sweeps: replays, SEED in
 * the signatures, every listed test's headroom (evidence_load calls
 * it). */
void	 evidence_load_seeds(struct report_evidence *, struct flaky_store *,
	    const struct flaky_query *, const struct flaky_test_row *, size_t);
void	 evidence_free_seeds(struct report_evidence *);
/* A row's sweep evidence: 1 when its test ran in a sweep (se filled). */
int	 evidence_seed(const struct report_evidence *, int64_t test_id,
	    struct flaky_seed_evidence *se);
/* A row's headroom sites: how many, in *ret. */
size_t	 evidence_headroom(const struct report_evidence *, int64_t test_id,
	    const struct flaky_headroom_site **ret);
/* "fails for 5 of 40 seeds ...": 1, or 0 (nothing) when the test did not
 * fail in a sweep. */
int	 evidence_seed_words(const struct report_evidence *, int64_t,
	    struct flaky_buf *);
/* The JSON members seeds (null when no sweep ran it) and headroom. */
void	 evidence_json_seeds(FILE *, const struct report_evidence *,
	    int64_t test_id);
void	 seed_json(FILE *, const struct flaky_seed_evidence *,
	    const char *reproduce);
void	 headroom_json(FILE *, const struct flaky_headroom_site *, size_t);
/* A diagnosis' seeds and headroom: JSON members, and text lines after
 * the prefixes given ("  seeds:       "); no seeds line for SEED when
 * evidence_shown (its evidence line says the same). */
void	 diag_json_seeds(FILE *, const struct flaky_diagnosis *);
void	 diag_seed_lines(const struct flaky_diagnosis *, const char *seeds,
	    const char *headroom, const char *repro, int evidence_shown);
/* hangs.c (issue 33): where its timeouts hung, show's lines (full: the
 * whole thread) and the JSON member hangs of a diagnosis. */
void	 diag_hang_print(const struct flaky_diagnosis *, int full);
void	 diag_json_hangs(FILE *, const struct flaky_diagnosis *);

#endif
