/* sd_notify(3) without libsystemd: one datagram per state change to the
 * socket named by $NOTIFY_SOCKET ("@name" is the abstract namespace). */
#include "buildconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "flakyd.h"
#include "log.h"

static int			 notify_fd = -1;
static struct sockaddr_un	 notify_addr;
static socklen_t		 notify_len;

/* Find systemd's notification socket, if we run under systemd. */
void
notify_init(void)
{
	const char	*e = getenv("NOTIFY_SOCKET");
	size_t		 len;

	if (e == NULL || (e[0] != '/' && e[0] != '@'))
		return;
	len = strlen(e);
	if (len >= sizeof notify_addr.sun_path) {
		log_warnx("NOTIFY_SOCKET is too long, not notifying systemd");
		return;
	}
	memset(&notify_addr, 0, sizeof notify_addr);
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, e, len);
	if (e[0] == '@')
		notify_addr.sun_path[0] = '\0';
	notify_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0);
	if (notify_fd == -1)
		log_warn("notify socket");
	/* Our runs must not talk to systemd in our name. */
	unsetenv("NOTIFY_SOCKET");
}

/* One state change ("READY=1"); nothing outside systemd. */
void
notify_send(const char *state)
{
	if (notify_fd == -1)
		return;
	if (sendto(notify_fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&notify_addr, notify_len) == -1)
		log_debug("sd_notify %s: %s", state, strerror(errno));
}

/* How often systemd wants a ping, when it wants one for us. */
int64_t
notify_watchdog_ms(void)
{
	const char	*e = getenv("WATCHDOG_USEC");
	const char	*p = getenv("WATCHDOG_PID");
	long long	 usec;

	if (e == NULL || (usec = strtoll(e, NULL, 10)) <= 0)
		return 0;
	if (p != NULL && strtol(p, NULL, 10) != (long)getpid())
		return 0;
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
	return usec / 1000 > 0 ? usec / 1000 : 1;
}

/* Close the notification socket. */
void
notify_close(void)
{
	if (notify_fd != -1)
		close(notify_fd);
	notify_fd = -1;
}
