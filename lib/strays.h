/* Escapees of runs: a run's processes that left its process group
 * (setsid, a daemonizing double fork) outlive it. A program that is a
 * child subreaper (prctl PR_SET_CHILD_SUBREAPER) inherits them when their
 * parent ends; with no run in flight every live child of ours is one. */
#ifndef FLAKY_STRAYS_H
#define FLAKY_STRAYS_H

/* Told each stray's pid before it is killed (for a log line). */
typedef void	(*flaky_stray_cb)(long pid, void *arg);

/* SIGKILL every live child of ours and its process group; zombies are left
 * to the caller's reaping. Call only with no run in flight. Returns how
 * many were alive: their own children are reparented to us in turn, so
 * call again (after reaping) until it returns 0. */
int	 flaky_kill_strays(flaky_stray_cb, void *arg);

#endif
