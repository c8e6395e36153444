/* Two accounts and a transfer each way. On every third run (runs 3, 6,
 * 9..., counted in $HANG_STATE, default .hang-count) both transfers run at
 * once: transfer_a_to_b locks a then b, transfer_b_to_a b then a, and each
 * waits for the mutex the other holds: a lock-order deadlock that only the
 * test's time limit ends. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;
static int hangs, balance_a = 100, balance_b = 100;

/* This run's number, counted in the state file. */
static int
run_number(void)
{
	const char	*path = getenv("HANG_STATE");
	FILE		*f;
	int		 n = 0;

	if (path == NULL)
		path = ".hang-count";
	if ((f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "%d", n + 1);
		fclose(f);
	}
	return n + 1;
}

/* Both threads hold their first lock before either takes its second. */
static void
meet(void)
{
	if (hangs)
		pthread_barrier_wait(&both);
}

static void *
transfer_a_to_b(void *arg)
{
	pthread_mutex_lock(&lock_a);
	meet();
	pthread_mutex_lock(&lock_b);
	balance_a -= 10;
	balance_b += 10;
	pthread_mutex_unlock(&lock_b);
	pthread_mutex_unlock(&lock_a);
	return arg;
}

static void *
transfer_b_to_a(void *arg)
{
	pthread_mutex_lock(&lock_b);
	meet();
	pthread_mutex_lock(&lock_a);
	balance_b -= 10;
	balance_a += 10;
	pthread_mutex_unlock(&lock_a);
	pthread_mutex_unlock(&lock_b);
	return arg;
}

int
main(int argc, char **argv)
{
	pthread_t	 t1, t2;

	if (argc > 1 && strcmp(argv[1], "deposit") == 0) {
		balance_a += 5;
		return balance_a == 105 ? 0 : 1;
	}
	hangs = run_number() % 3 == 0;
	pthread_barrier_init(&both, NULL, 2);
	pthread_create(&t1, NULL, transfer_a_to_b, NULL);
	pthread_create(&t2, NULL, transfer_b_to_a, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return balance_a + balance_b == 200 ? 0 : 1;
}
