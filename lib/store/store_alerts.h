/* Part of store.h (include that, not this): the alerts' events and
 * their deliveries (alerts.c, docs/alerts.md). */
#ifndef FLAKY_STORE_ALERTS_H
#define FLAKY_STORE_ALERTS_H

#include <stddef.h>
#include <stdint.h>

struct flaky_store;

/* Alerts (alerts.c, docs/alerts.md). A test of a stored run that could
 * make an event (it failed in the window, has an open alert or is in
 * quarantine), with its tier's window (its target's last counted runs up
 * to that run) and its last tier event (enum flaky_alert_kind, -1: none). */
struct flaky_alert_test {
	int64_t		 test_id;
	char		*test;
	int64_t		 runs, failures;	/* the window */
	int		 failed, passed;	/* in this run */
	int		 last_kind;
	int		 quarantined, release_told;
};
/* An event, and when read for a list, its deliveries. */
struct flaky_alert_delivery {
	char		*receiver, *error;
	int		 state;		/* 0 pending, 1 delivered, 2 failed */
	int64_t		 attempts, done_ms;
};
struct flaky_alert {
	int64_t		 id, test_id, run_id, at_ms, created_ms;
	int		 kind;		/* enum flaky_alert_kind */
	int64_t		 runs, failures;
	int64_t		 passes, needed;	/* release: else -1 */
	char		*target, *test;
	int64_t		 attempts, next_ms;	/* flaky_store_alert_next */
	struct flaky_alert_delivery *d;
	size_t		 nd;
};
/* The event the test's window calls for, -1: none. */
int	 flaky_alert_decide(const struct flaky_alert_test *, int min_runs);
/* The run a target's evaluation stands at (its newest run when first
 * seen), and its next counted run after that: 1 with *ret_run and its
 * start, 0 when none. */
int	 flaky_store_alert_cursor(struct flaky_store *, int64_t target_id,
	    int64_t *ret, char *err, size_t errlen);
int	 flaky_store_alert_next_run(struct flaky_store *, int64_t target_id,
	    int64_t after, int64_t *ret_run, int64_t *ret_ms, char *err,
	    size_t errlen);
int	 flaky_store_alert_set_cursor(struct flaky_store *, int64_t target_id,
	    int64_t run_id, char *err, size_t errlen);
int	 flaky_store_alert_window(struct flaky_store *, int64_t target_id,
	    int64_t run_id, int64_t run_ms, int window,
	    struct flaky_alert_test **ret, size_t *ret_n, char *err,
	    size_t errlen);
void	 flaky_alert_tests_free(struct flaky_alert_test *, size_t);
/* Add an event (in the caller's transaction) with a pending delivery per
 * receiver: 1, or 0 when it was there already. */
int	 flaky_store_alert_add(struct flaky_store *, const struct flaky_alert *,
	    const char *const *receivers, size_t nreceivers, char *err,
	    size_t errlen);
/* The oldest pending event of a receiver: 1, 0 when none. */
int	 flaky_store_alert_next(struct flaky_store *, const char *receiver,
	    struct flaky_alert *ret, char *err, size_t errlen);
int	 flaky_store_alert_mark(struct flaky_store *, int64_t alert_id,
	    const char *receiver, int state, int64_t attempts,
	    int64_t next_ms, const char *error, int64_t now_ms, char *err,
	    size_t errlen);
/* Events created since since_ms, oldest first, with their deliveries. */
int	 flaky_store_alerts_list(struct flaky_store *, int64_t since_ms,
	    struct flaky_alert **ret, size_t *ret_n, char *err, size_t errlen);
void	 flaky_alert_clear(struct flaky_alert *);
void	 flaky_alerts_free(struct flaky_alert *, size_t);

#endif
