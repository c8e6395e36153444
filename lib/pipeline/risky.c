/* The tests with static scan findings, as the target's runner names them
 * (issue 18: analyze --risky and flakyd's risky: true rerun only them). */
#include "buildconf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pipeline.h"
#include "store/store.h"
#include "util/util.h"

void
flaky_risky_tests_free(char **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

int
flaky_risky_tests(struct flaky_store *s, const char *target,
    const char *runner, char ***ret, size_t *ret_n, char *err, size_t errlen)
{
	struct flaky_risk *v = NULL;
	char	**t;
	size_t	 n = 0, k = 0;
	int	 pytest = runner != NULL && strcmp(runner, "pytest") == 0, r;

	*ret = NULL;
	*ret_n = 0;
	if ((r = flaky_store_risks(s, target, &v, &n, err, errlen)) < 0)
		return r;
	if ((t = calloc(n + 1, sizeof *t)) == NULL) {
		flaky_risks_free(v, n);
		return flaky_error(err, errlen, ENOMEM, "out of memory");
	}
	/* each finding has a pytest key ("::") and a unittest one; v is
	 * sorted by key, so a test's findings are neighbours */
	for (size_t i = 0; i < n; i++) {
		if ((strstr(v[i].key, "::") != NULL) != pytest ||
		    (k > 0 && strcmp(t[k - 1], v[i].key) == 0))
			continue;
		if ((t[k++] = strdup(v[i].key)) == NULL) {
			flaky_risks_free(v, n);
			flaky_risky_tests_free(t, k);
			return flaky_error(err, errlen, ENOMEM, "out of memory");
		}
	}
	flaky_risks_free(v, n);
	*ret = t;
	*ret_n = k;
	return 0;
}
