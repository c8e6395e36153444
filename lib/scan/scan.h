/* scan: a static scan of Python test code for approximate assertions
 * (comparisons in asserts, assertAlmostEqual, assert_allclose, approx, ...)
 * and for tests that seed their randomness. A tokenizer and an
 * indentation-based statement structure in C; no Python at run time.
 * The rules are in docs/scan.md. Like all of libflaky: no output, no exits.
 *
 * The one header of lib/scan/ the rest of the tree includes, as
 * "scan/scan.h". The files behind it: tokenize.c, strings.c, numbers.c and
 * encoding.c (the tokenizer), structure.c (statements and scopes), rules.c
 * (the findings), seed.c (the seeding signal), result.c, scan.c (these
 * entry points) and walk.c (the files a scan covers). */
#ifndef FLAKY_SCAN_H
#define FLAKY_SCAN_H

#include <stddef.h>

enum flaky_finding_category {
	FLAKY_FINDING_COMPARISON,	/* assert with <, <=, >, >= */
	FLAKY_FINDING_UNITTEST,		/* self.assertAlmostEqual(...) */
	FLAKY_FINDING_TORCH,		/* torch.testing.assert_close(...) */
	FLAKY_FINDING_NUMPY,		/* np.testing.assert_allclose(...) */
	FLAKY_FINDING_APPROX,		/* assert x == pytest.approx(y) */
	FLAKY_FINDING_NCATEGORIES
};

/* One finding. Strings are never NULL ("" when absent) and belong to the
 * result they came from. */
struct flaky_finding {
	int		 line;		/* of the assert or the call, as ast says */
	int		 category;	/* enum flaky_finding_category */
	const char	*classes;	/* enclosing classes, outermost first, "A.B" */
	const char	*function;	/* innermost enclosing function */
	const char	*test;		/* nearest enclosing function named test* */
	const char	*tolerance;	/* "rtol=1e-6, atol=0" in source order */
	const char	*source;	/* the source line, trimmed, bounded */
	int		 test_index;	/* into result->tests, or -1 */
	int		 seeded;	/* the test (or, without one, the module)
					 * seeds its randomness */
};

/* A function whose name starts with "test", with its seeding signal. */
struct flaky_scan_test {
	int		 line;		/* of the def */
	const char	*classes;	/* enclosing classes, "" when none */
	const char	*name;
	int		 seeded;	/* itself, a fixture it names, setUp /
					 * setup_method / setUpClass of its class,
					 * an autouse fixture, or module-level
					 * code seeds */
	int		 nfindings;	/* findings inside it */
};

/* The scan of one file. When skipped is set the file is not valid Python
 * (as far as the scanner can tell), reason says why and there are no
 * findings or tests. */
struct flaky_scan_result {
	struct flaky_finding	*findings;	/* sorted by line, category,
						 * classes, function */
	size_t			 nfindings;
	struct flaky_scan_test	*tests;		/* in source order */
	size_t			 ntests;
	int			 skipped;
	char			 reason[160];	/* "line 3: unterminated string" */
	int			 module_seeded;	/* module-level code seeds */
	size_t			 bytes;		/* size of the source scanned */
	struct pyscan_arena	*arena;		/* owns every string above */
};

/* Largest file scanned; a bigger one is skipped with a reason. */
#define FLAKY_PYSCAN_MAX_BYTES	(64 * 1024 * 1024)

/* Scan a source buffer (need not be NUL-terminated). An invalid file is
 * not an error: it returns 0 with ret->skipped set. Returns 0, -ENOMEM or
 * -EFBIG; *ret is for flaky_scan_result_free(). */
int	 flaky_pyscan_buffer(const char *src, size_t len,
	    struct flaky_scan_result **ret, char *err, size_t errlen);
/* Read and scan one regular file. Returns 0 or a negative errno
 * (-ENOENT, -EACCES, -EISDIR, -EINVAL for a FIFO or device, ...) with err
 * naming the path. */
int	 flaky_pyscan_file(const char *path, struct flaky_scan_result **ret,
	    char *err, size_t errlen);
void	 flaky_scan_result_free(struct flaky_scan_result *);

/* The token stream of src, for tests and debugging: one token per line,
 * "LINE TYPE TEXT" (TYPE one of NAME NUMBER STRING OP NEWLINE INDENT
 * DEDENT FSTART FEND END; TEXT for the first four). Returns 0, -EINVAL
 * when src is not valid Python (err: "line N: reason") or -ENOMEM. */
struct flaky_buf;
int	 flaky_pyscan_tokens(const char *src, size_t len, struct flaky_buf *out,
	    char *err, size_t errlen);

/* "comparison", "unittest", "torch", "numpy", "approx"; NULL if unknown. */
const char *flaky_finding_category_name(int category);

/* The files a scan of path covers: path itself when it is not a
 * directory, else every regular *.py file below it (symlinks to files
 * included, symlinked directories not followed), each directory's entries
 * sorted byte-wise, depth first, joined to path as given. Appends to
 * *paths / *npaths (a malloc'd array of malloc'd strings, for
 * flaky_pyscan_paths_free()). An unreadable directory is reported through
 * the callback (which may be NULL) and the walk goes on; returns 0,
 * -ENOMEM or the errno of a path that does not exist. */
typedef void (*flaky_pyscan_walk_error)(void *arg, const char *path,
	    int error);
int	 flaky_pyscan_paths(const char *path, char ***paths, size_t *npaths,
	    flaky_pyscan_walk_error onerror, void *arg,
	    char *err, size_t errlen);
void	 flaky_pyscan_paths_free(char **paths, size_t npaths);

#endif
