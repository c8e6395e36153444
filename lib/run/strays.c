/* Escapees: processes a run left behind (setsid, double fork) that were
 * reparented to us, a child subreaper, once their run ended. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/run.h"

/* Is pid a zombie (or gone)? */
static int
dead(long pid)
{
	char	 path[64], buf[512], *p;
	FILE	*f;
	char	 state = 'X';

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "re")) == NULL)
		return 1;
	p = fgets(buf, sizeof buf, f);
	fclose(f);
	/* "pid (comm) state ...": comm may hold anything. */
	if (p != NULL && (p = strrchr(buf, ')')) != NULL)
		sscanf(p + 1, " %c", &state);
	return state == 'Z' || state == 'X';
}

/* Kill one stray and its group. */
static int
kill_one(long pid, flaky_stray_cb cb, void *arg)
{
	if (pid <= 1 || pid == (long)getpid() || dead(pid))
		return 0;
	if (cb != NULL)
		cb(pid, arg);
	kill((pid_t)-pid, SIGKILL);
	kill((pid_t)pid, SIGKILL);
	return 1;
}

/* Our children from /proc/self/task/T/children (one small file per
 * thread, CONFIG_PROC_CHILDREN): cost by our own children, not by every
 * process on the machine. -1 when the kernel has no such file. */
static int
kill_children(flaky_stray_cb cb, void *arg)
{
	struct dirent	*de;
	DIR		*dir;
	char		 path[300], buf[4096];
	int		 found = 0, any = 0;
	FILE		*f;

	if ((dir = opendir("/proc/self/task")) == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children",
		    de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		any = 1;
		while (fscanf(f, "%4095s", buf) == 1)
			found += kill_one(strtol(buf, NULL, 10), cb, arg);
		fclose(f);
	}
	closedir(dir);
	return any ? found : -1;
}

/* The portable way: every process's parent, from /proc/PID/stat. */
static int
kill_children_scan(flaky_stray_cb cb, void *arg)
{
	struct dirent	*de;
	DIR		*dir;
	char		 path[300], buf[512], *p;
	long		 me = (long)getpid();
	int		 found = 0;
	FILE		*f;

	if ((dir = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(dir)) != NULL) {
		long	 ppid;
		char	 state;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		p = fgets(buf, sizeof buf, f);
		fclose(f);
		if (p == NULL || (p = strrchr(buf, ')')) == NULL ||
		    sscanf(p + 1, " %c %ld", &state, &ppid) != 2 ||
		    ppid != me || state == 'Z')
			continue;
		found += kill_one(strtol(de->d_name, NULL, 10), cb, arg);
	}
	closedir(dir);
	return found;
}

int
flaky_kill_strays(flaky_stray_cb cb, void *arg)
{
	int	 found;

	if ((found = kill_children(cb, arg)) < 0)
		found = kill_children_scan(cb, arg);
	return found;
}
