/* Logging and aborting allocation for the programs (flakyd, flakyctl).
 * libflaky never logs; the programs log once, where they decide. */
#ifndef FLAKY_LOG_H
#define FLAKY_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* foreground: plain "flakyd: msg" on stderr. Under systemd (JOURNAL_STREAM
 * set and stderr is that stream) lines get <N> priority prefixes. */
void	 log_init(const char *progname, int verbose);
/* Each line starts with the time (UTC, ms), unless journald takes the
 * lines (it stamps them itself): flakyd's. */
void	 log_timestamps(int on);
/* Called before each line is written (flakyctl's progress line erases
 * itself); NULL: none. */
void	 log_set_hook(void (*)(void));
int	 log_verbose(void);
void	 log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	 fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	 fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

#endif
