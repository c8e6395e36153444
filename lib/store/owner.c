/* Owners of running rows. A run's row is written when it starts, with the
 * process that writes it: the boot (/proc/sys/kernel/random/boot_id), the
 * pid and the pid's start time (field 22 of /proc/PID/stat, clock ticks
 * since boot), so that a pid reused by another process is not taken for
 * the owner. A row whose owner is gone (another boot, no such pid, or the
 * pid started at another time) can never be finished: any writer that
 * opens the database marks it interrupted. A live owner's rows are never
 * touched, whoever looks. */
#include "buildconf.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store_int.h"
#include "util/util.h"

/* Read a small file whole into buf (NUL-terminated); length or -1. */
static ssize_t
read_small(const char *path, char *buf, size_t cap)
{
	ssize_t	 n, len = 0;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((size_t)len < cap - 1 &&
	    (n = read(fd, buf + len, cap - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* The start time of pid (field 22 of /proc/PID/stat), or -1 when there is
 * no such process. The command name (field 2) may hold spaces and
 * parentheses: the fields are counted from the last ')'. */
int64_t
store_owner_start_time(pid_t pid)
{
	char		 path[64], buf[1024], *p;
	long long	 v;
	int		 field;

	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	if (read_small(path, buf, sizeof buf) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return -1;
	/* p + 1 starts field 3 (state) */
	for (field = 2; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	if (field != 22 || sscanf(p, "%lld", &v) != 1)
		return -1;
	return (int64_t)v;
}

/* This process as an owner, read once per process (a forked child reads
 * its own again: its pid differs). */
static pthread_mutex_t	 self_lock = PTHREAD_MUTEX_INITIALIZER;
static struct store_owner self;

int
store_owner_self(struct store_owner *ret)
{
	pid_t	 pid = getpid();
	ssize_t	 n;
	int	 r = 0;

	pthread_mutex_lock(&self_lock);
	if (self.pid != pid) {
		memset(&self, 0, sizeof self);
		n = read_small("/proc/sys/kernel/random/boot_id", self.boot,
		    sizeof self.boot);
		while (n > 0 && (self.boot[n - 1] == '\n' ||
		    self.boot[n - 1] == ' '))
			self.boot[--n] = '\0';
		self.start = store_owner_start_time(pid);
		if (n <= 0 || self.start < 0)
			r = -ENOENT;	/* no /proc: no owner recorded */
		else
			self.pid = pid;
	}
	*ret = self;
	pthread_mutex_unlock(&self_lock);
	return r;
}

/* Is the owner of a running row gone? Rows without an owner (written
 * before schema version 5, or where /proc was missing) count as gone: no
 * one can finish them. mine: the owner is this very process. */
static int
owner_gone(const struct store_owner *me, const char *boot, int64_t pid,
    int64_t start, int shared, int *mine)
{
	int64_t	 st;

	*mine = 0;
	/* On a server many machines write: another boot id is another
	 * machine, whose processes this one cannot see. */
	if (shared && (boot == NULL || strcmp(boot, me->boot) != 0))
		return 0;
	if (boot == NULL || pid <= 0 || me->pid == 0)
		return 1;
	if (strcmp(boot, me->boot) != 0)
		return 1;	/* rebooted since: every process is gone */
	if (pid == me->pid && start == me->start) {
		*mine = 1;
		return 0;
	}
	if (pid > INT32_MAX || (kill((pid_t)pid, 0) == -1 && errno == ESRCH))
		return 1;
	/* alive, or not ours to signal (EPERM): the same process only if it
	 * started when the owner did. A start time we cannot read (another
	 * user's process under hidepid, or it just exited) proves nothing:
	 * the row waits for the next look rather than risk a live run. */
	st = store_owner_start_time((pid_t)pid);
	return st >= 0 && st != start;
}

/* Collect the ids of the running rows to mark (owner gone, or ours when
 * mine_too), read outside any transaction: the common case finds none and
 * takes no lock at all. */
static int
collect(struct flaky_store *s, int64_t target_id, int mine_too,
    int64_t **ret, size_t *ret_n, char *err, size_t errlen)
{
	struct store_owner me;
	struct sql_stmt	*st = NULL;
	int64_t		*v = NULL;
	size_t		 n = 0, cap = 0;
	int		 rc, r = 0, mine;

	*ret = NULL;
	*ret_n = 0;
	store_owner_self(&me);
	/* runs_running holds only the running rows */
	if (sql_prepare_v2(store_db(s), "SELECT id, owner_boot, "
	    "owner_pid, owner_start FROM runs INDEXED BY runs_running "
	    "WHERE status = 'running' AND (?1 = 0 OR target_id = ?1)", -1,
	    &st, NULL) != SQL_OK)
		return store_sql_error(s, err, errlen,
		    "looking for interrupted runs");
	sql_bind_int64(st, 1, target_id);
	while ((rc = sql_step(st)) == SQL_ROW) {
		const char *boot = (const char *)sql_column_text(st, 1);

		if (!owner_gone(&me, boot, sql_column_type(st, 2) ==
		    SQL_NULL ? 0 : sql_column_int64(st, 2),
		    sql_column_int64(st, 3), sql_is_pg(store_db(s)), &mine) &&
		    !(mine && mine_too))
			continue;
		if (flaky_array_grow(&v, &cap, n, sizeof *v) < 0) {
			r = -ENOMEM;
			goto out;
		}
		v[n++] = sql_column_int64(st, 0);
	}
	if (rc != SQL_DONE)
		r = store_sql_error(s, err, errlen,
		    "looking for interrupted runs");
out:
	sql_finalize(st);
	if (r < 0) {
		free(v);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Mark the collected rows interrupted in one write transaction; a row
 * finished meanwhile (no longer running) is left alone. */
static int
mark(struct flaky_store *s, const int64_t *ids, size_t n, char *err,
    size_t errlen)
{
	struct sql_stmt	*st = NULL;
	int		 r, own = !store_in_tx(s), changed = 0;

	if (own && (r = flaky_store_begin(s, err, errlen)) < 0)
		return r;
	if (sql_prepare_v2(store_db(s), "UPDATE runs SET status = "
	    "'interrupted', error = coalesce(error, 'interrupted: the run "
	    "did not finish') WHERE id = ?1 AND status = 'running'", -1, &st,
	    NULL) != SQL_OK) {
		r = store_sql_error(s, err, errlen, "marking interrupted runs");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		sql_reset(st);
		sql_bind_int64(st, 1, ids[i]);
		if (sql_step(st) != SQL_DONE) {
			r = store_sql_error(s, err, errlen,
			    "marking interrupted runs");
			goto fail;
		}
		changed += sql_changes(store_db(s));
	}
	sql_finalize(st);
	st = NULL;
	if (own && (r = flaky_store_commit(s, err, errlen)) < 0)
		return r;
	return changed;
fail:
	sql_finalize(st);
	if (own)
		flaky_store_rollback(s);
	return r;
}

/* The rows of target_id (0: all) whose owner is gone, and ours too when
 * mine_too, become interrupted; returns how many. */
static int
mark_rows(struct flaky_store *s, int64_t target_id, int mine_too, char *err,
    size_t errlen)
{
	int64_t		*ids;
	size_t		 n;
	int		 r;

	if ((r = collect(s, target_id, mine_too, &ids, &n, err, errlen)) < 0)
		return r;
	r = n > 0 ? mark(s, ids, n, err, errlen) : 0;
	free(ids);
	return r;
}

int
flaky_store_mark_orphans(struct flaky_store *s, int64_t target_id,
    char *err, size_t errlen)
{
	return mark_rows(s, target_id, 0, err, errlen);
}

int
flaky_store_mark_interrupted(struct flaky_store *s, int64_t target_id,
    char *err, size_t errlen)
{
	return mark_rows(s, target_id, 1, err, errlen);
}
