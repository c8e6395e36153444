/* flakyd: the scheduled evidence-collection daemon. One process, one
 * libevent loop: a timer for the schedule, the spawner's SIGCHLD, signals,
 * the control socket. Nothing in the loop waits. */
#ifndef FLAKYD_H
#define FLAKYD_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "run/run.h"
#include "config/config.h"
#include "pipeline/pipeline.h"
#include "store/store.h"

struct event;
struct event_base;

/* The database: a write waits this long for another writer's lock, then
 * the finished runs wait in memory and are retried, from the first delay
 * doubling to the last. With this many waiting no new run starts. At exit
 * what waits is tried for this long. */
#define FLAKYD_BUSY_MS		250
#define FLAKYD_RETRY_FIRST_MS	500
#define FLAKYD_RETRY_LAST_MS	(60 * 1000)
#define FLAKYD_WAITING_MAX	64
#define FLAKYD_FINAL_FLUSH_MS	10000
/* Another writer's lock is said in the log only past this long; a write
 * that keeps failing is said again this often. */
#define FLAKYD_BUSY_QUIET_MS	10000
#define FLAKYD_STORE_NAG_MS	60000
/* The target's revision: command may take this long. */
#define FLAKYD_REVISION_TIMEOUT_MS	30000
/* confirm: true looks at the tests that failed in this window */
#define FLAKYD_CONFIRM_WINDOW_MS	(30LL * 86400 * 1000)

/* A loaded config with what the daemon derives from it; runs in flight
 * hold a reference, so a reload never pulls a definition from under them. */
struct cfgref {
	struct flaky_config	*cfg;
	char			***envs;	/* per target, NULL-ended */
	/* per target: its command and environment completed so that the
	 * runner prints every test's outcome (lib/command.h) */
	struct flaky_command	*cmds;
	char			**versions;	/* per target: its runner's */
	int			 refs;
};

struct trigger;

/* A target as the daemon follows it across reloads (by name). */
struct tstate {
	char			*name;
	int64_t			 id;		/* targets.id */
	const struct flaky_target *def;		/* in the current config */
	int			 removed;	/* gone from the config */
	int64_t			 due_ms;	/* next schedule time, or
						 * FLAKY_NO_FIRE */
	int64_t			 fire_ms;	/* due_ms plus jitter */
	char			 sched_src[64];	/* what due_ms came from */
	int64_t			 jitter_ms;
	struct trigger		*active;	/* waiting or running */
	struct trigger		*pending;	/* overlap: queue; one */
	struct flaky_last_run	 last;
	int64_t			 last_failures;
	unsigned		 fires;		/* risky: every other one */
	/* perturb: the suite runs started since flakyd started: the next
	 * run takes step perturbed % nperturb of the cycle */
	uint64_t		 perturbed;
	LIST_ENTRY(tstate)	 gone;		/* removed but still active */
};

/* One trigger of a target: its runs, one after another, in one job slot. */
struct trigger {
	struct tstate		*ts;
	const char		*kind;		/* schedule, catch-up, manual */
	int			 runs;
	int			 started, finished;
	int			 has_slot;
	int64_t			 queued_ms;
	struct cfgref		*cref;		/* held while it has the slot */
	const struct flaky_target *def;
	char			**envp;		/* completed (cfgref) */
	char			**argv;		/* completed (cfgref) */
	const struct flaky_command *cmd;	/* cfgref's: shuffled, selected */
	const char		*runner_version;	/* cfgref's */
	char			*revision;
	struct flaky_proc	*revproc;	/* the revision: command */
	struct flaky_buf	 revout;
	struct job		*job;		/* the run in flight */
	struct event		*next_ev;	/* start the next run */
	/* confirm: true, after the runs: tests rerun alone until settled
	 * or the budget ends. */
	struct flaky_confirm	*confirm;
	int64_t			 confirm_end_us;
	int			 confirm_runs;
	/* until_settled: true: the runs stop once settled */
	struct flaky_settle	*settle;
	/* risky: true, every other trigger: only the tests with scan
	 * findings (argv and envp point here then) */
	char			**sel_argv, **sel_envp;
	int			 selected;
	/* until_settled: true, after the first whole runs: the open tests'
	 * command for the next run (made from cmd above) */
	char			**open_argv, **open_envp;
	int			 open_told;
	TAILQ_ENTRY(trigger)	 wait;
};
TAILQ_HEAD(triggerq, trigger);

/* One run of a trigger, while it runs (the pipeline owns the run). */
struct job {
	struct trigger		*tr;
	struct flaky_run	*run;
	char			*target;
	char			*revision;
	int			 index, of;	/* of 0: a run alone */
	struct flaky_confirm_test *ctest;	/* the test it runs alone */
	struct flaky_stress	*stress;	/* beside its run (stress:) */
	char			**argv, **envp;	/* a shuffled run's */
	char			 seed[16];
};

struct flakyd {
	struct event_base	*base;
	struct flaky_spawner	*sp;
	struct flaky_store	*store;
	char			*config_path;
	char			*db_path;
	char			*socket_path;
	struct cfgref		*cur;
	int64_t			 start_ms;	/* "every" counts from here */
	int			 foreground;

	struct tstate		**targets;	/* as in the current config */
	size_t			 ntargets;
	LIST_HEAD(, tstate)	 gone;
	struct triggerq		 waitq;		/* waiting for a slot */
	int			 nwaiting;
	int			 slots;		/* triggers holding a slot */
	struct event		*kick_ev;

	int			 timerfd;
	struct event		*timer_ev;
	int64_t			 armed_ms;

	struct flaky_pipeline	*pl;		/* runs to their evidence */
	int			 store_failing;	/* failed writes in a row */
	int64_t			 store_failing_since_ms;	/* monotonic */
	int64_t			 store_told_ms;	/* last said, monotonic */

	struct event		*sweep_ev;	/* strays of the subreaper */
	int			 sweeps;

	int			 stopping;
	struct event		*deadline_ev;
	struct event		*sig_ev[4];
	struct event		*watchdog_ev;
	int64_t			 runs_done, runs_failed_store;
	struct flaky_classifier	*classifier;	/* the config's signatures */
	int64_t			 pruned_ms;	/* last retention pass */
	struct flaky_http	*http;		/* the dashboard, or NULL */
};

extern struct flakyd	*flakyd;

/* scheduler.c, runs.c, reload.c: the schedule */
struct cfgref	*cfgref_new(struct flaky_config *);
void	 cfgref_unref(struct cfgref *);
int	 sched_init(struct flakyd *, char *err, size_t errlen);
int	 sched_apply(struct flakyd *, struct flaky_config *, char *err,
	    size_t errlen);
void	 sched_catch_up(struct flakyd *);
void	 sched_arm(struct flakyd *);
int	 sched_manual(struct flakyd *, const char *name, int runs,
	    int *ret_queued, char *err, size_t errlen);
void	 sched_shutdown(struct flakyd *);
void	 sched_sweep_final(struct flakyd *);
void	 sched_free(struct flakyd *);
int	 sched_running(struct flakyd *);
struct tstate *sched_find(struct flakyd *, const char *name);
/* Inside the scheduler: the next fire time of a target, starting waiting
 * triggers (from the loop), and a trigger's end. */
void	 sched_next_fire(struct flakyd *, struct tstate *, int64_t after_ms);
void	 sched_kick(struct flakyd *);
void	 trigger_end(struct trigger *);

/* runs.c: a trigger's runs, from its slot to its end. */
int	 runs_init(struct flakyd *, char *err, size_t errlen);
void	 runs_free(struct flakyd *);
struct trigger *trigger_new(struct flakyd *, struct tstate *, const char *kind,
	    int runs);
void	 trigger_free(struct trigger *);
void	 trigger_start(struct flakyd *, struct trigger *);
void	 job_free(struct job *);

/* reload.c: a config made the running schedule (sched_apply), the
 * config's derived data (cfgref_*), target states. */
void	 tstate_free(struct tstate *);
/* Can each target's runner shuffle where its perturb: asks? 0, or
 * -EINVAL with err "FILE:LINE:COL: perturb: ..." */
int	 perturb_check_config(const struct flaky_config *, char *err,
	    size_t errlen);

/* main.c */
int	 flakyd_reload(struct flakyd *, char *err, size_t errlen);
void	 flakyd_maybe_exit(struct flakyd *);

/* control.c */
int	 control_init(struct flakyd *, const char *path);
void	 control_close(void);

/* http.c: the dashboard of http: (lib/http). */
struct flaky_http;
int	 http_start(struct flakyd *, const struct flaky_config *, char *err,
	    size_t errlen);
void	 http_reload_check(struct flakyd *, const struct flaky_config *old,
	    const struct flaky_config *);
void	 http_close(struct flakyd *);

/* revision.c: 1 when git runs and tr->next_ev fires once it is done. */
int	 revision_git_start(struct flakyd *, struct trigger *);

/* guard.c: a process that kills the runs' groups if flakyd dies. */
void	 guard_start(void);
void	 guard_group(pid_t pgid, int alive);
void	 guard_close(void);

/* alerts.c: tier changes told to the receivers of notify:
 * (docs/alerts.md). */
void	 alerts_apply(struct flakyd *);
void	 alerts_kick(struct flakyd *);
void	 alerts_shutdown(struct flakyd *);
void	 alerts_free(struct flakyd *);
/* alert_text.c: the sentence an alert is told in (its "text"), with
 * the 95% interval lo to hi of its rate. */
void	 alert_text(const struct flaky_alert *, double lo, double hi,
	    struct flaky_buf *);

/* webhook.c: one POST of an alert, https checked; told once, from the
 * loop. */
struct webhook;
typedef void	(*webhook_cb)(void *arg, int ok, const char *why);
int	 webhook_post(struct event_base *, const char *url,
	    const char *ca_file, int64_t timeout_ms, const char *body,
	    size_t len, webhook_cb, void *arg, struct webhook **ret,
	    char *err, size_t errlen);
void	 webhook_free(struct webhook *);
void	 webhook_shutdown(void);
char	*webhook_safe_url(const char *url);
int	 webhook_basic(const char *userinfo, char *buf, size_t len);
/* ship.c: finished runs to the fleet's server (fleet: in the config), from
 * a thread of its own; status reads a copy of its state. */
enum ship_state {
	SHIP_CONNECTING = 0,	/* not yet tried */
	SHIP_UP,		/* connected; shipping or nothing to ship */
	SHIP_DOWN,		/* the server or the connection failed */
	SHIP_REFUSED,		/* it answered no: credentials, schema, box */
};
struct ship_status {
	enum ship_state		 state;
	char			 error[512];	/* why not up, one line */
	int64_t			 since_ms;	/* in this state since */
	int64_t			 attempts;	/* failed in a row, this state */
	struct flaky_ship_backlog backlog;
	int64_t			 last_ms;	/* last batch; 0: none */
	int64_t			 last_runs, last_new;
};
int	 ship_start(struct flakyd *, const struct flaky_config *, char *err,
	    size_t errlen);
void	 ship_wake(void);
void	 ship_reload_check(const struct flaky_config *old,
	    const struct flaky_config *cfg);
int	 ship_status(struct ship_status *, const char **box,
	    const char **where);
const char *ship_state_name(enum ship_state);
void	 ship_stop(void);

/* notify.c: the sd_notify datagram protocol, without libsystemd. */
void	 notify_init(void);
void	 notify_send(const char *state);
/* The watchdog interval in ms, 0 when systemd did not ask for pings. */
int64_t	 notify_watchdog_ms(void);
void	 notify_close(void);

#endif
