/* Shared by command.c (completing a command) and command_detect.c
 * (directory mode); not part of libflaky's interface. */
#ifndef FLAKY_COMMAND_INT_H
#define FLAKY_COMMAND_INT_H

#include <stddef.h>

#include "util/util.h"

struct flaky_command;

/* A growing NULL-terminated vector of malloc'd strings; an allocation
 * failure sticks in oom, so callers check once at the end. */
struct cmd_vec {
	char	**v;
	size_t	  n, cap;
	int	  oom;
};

void	 cmd_vec_insert(struct cmd_vec *, size_t at, const char *);
void	 cmd_vec_add(struct cmd_vec *, const char *);
void	 cmd_vec_free(struct cmd_vec *);
/* Hands the vector over (NULL-terminated, never NULL unless oom). */
char	**cmd_vec_steal(struct cmd_vec *);

/* The last path component of s. */
const char *cmd_base(const char *s);
/* The value of name in envp, or NULL. */
const char *cmd_env_get(char *const *envp, const char *name);
/* Set NAME=VALUE in e, replacing NAME's value (oom set on failure). */
void	 cmd_env_set(struct cmd_vec *, const char *name,
	    const char *value);

/* Hand both vectors over as a new command's argv and envp: 0, or
 * -ENOMEM with err filled and nothing left to free. */
int	 cmd_vec_hand(struct cmd_vec *a, struct cmd_vec *e, char ***argv,
	    char ***envp, char *err, size_t errlen);
/* Where the runner's own arguments begin in argv: after `pytest`,
 * `python -m unittest`, `go test`, Jest's script. */
size_t	 cmd_runner_args(char *const *argv);

/* cargo test, GoogleTest (a binary, or ctest), RSpec and PHPUnit
 * (command_native.c). */
#define CMD_N_CARGO	1
#define CMD_N_GTEST	2	/* a test binary with a --gtest_ option */
#define CMD_N_CTEST	3
#define CMD_N_RSPEC	4
#define CMD_N_PHPUNIT	5
/* Which of them argv runs (0: none), its own arguments from *args. */
int	 cmd_native_identify(char *const *argv, size_t *args);
/* The runner's name for flaky_command.runner ("cargo", "gtest", "rspec",
 * "phpunit"), NULL for 0. */
const char *cmd_native_runner(int kind);
/* Add to a what the runner needs to print every outcome, saying so in
 * note; returns the runner's name. */
const char *cmd_native_complete(struct cmd_vec *a, int kind, size_t args,
	    struct flaky_buf *note);
/* flaky_command_shuffle and flaky_command_select for these runners: 0,
 * or -ENOTSUP (err filled for shuffle) when the command is none of
 * them, or it cannot. */
int	 cmd_native_shuffle(const struct flaky_command *c, const char *seed,
	    char ***argv, char ***envp, char *err, size_t errlen);
int	 cmd_native_select(const struct flaky_command *c, char *const *tests,
	    size_t n, struct cmd_vec *a, char *err, size_t errlen);
/* Directory mode (detect_native.c): the runner whose project file is in
 * dir ("cargo": Cargo.toml; "gtest": CMakeLists.txt with a ctest build
 * directory; "rspec": .rspec or spec/ *_spec.rb; "phpunit":
 * phpunit.xml[.dist]), with the reason; NULL when none. */
const char *cmd_native_project(const char *dir, const char **reason);
/* Its command for the tests of abs (at or below root): 0, or -ENOENT
 * with err filled (the runner not installed, no build directory). */
int	 cmd_native_command(const char *runner, struct cmd_vec *a,
	    const char *root, const char *abs, char *const *envp, char *err,
	    size_t errlen);
#define CMD_NATIVE_LOOKED_FOR "Cargo.toml, CMakeLists.txt with a " \
	"ctest build directory, .rspec or spec/*_spec.rb, phpunit.xml or " \
	"phpunit.xml.dist"
/* The JavaScript runners besides Jest (command_js.c, detect_js.c,
 * select_js.c). */
struct flaky_command;
#define CMD_JS_VITEST		1
#define CMD_JS_PLAYWRIGHT	2
#define CMD_JS_MOCHA		3
#define CMD_JS_NODETEST		4
/* The runner's name ("vitest", "playwright", "mocha", "nodetest"). */
const char *cmd_js_name(int js);
/* Which of them argv starts (`vitest`, `npx playwright test`, `node
 * [options] --test`, `node .../mocha`...) with *args where its own
 * arguments begin; 0 for none of them. */
int	 cmd_js_identify(char *const *argv, size_t *args);
/* Add what makes the runner name every test to a (its reporter), saying
 * so in note; returns the runner's name. */
const char *cmd_js_complete(int js, struct cmd_vec *a, size_t args,
	    struct flaky_buf *note);
/* Can the runner shuffle (Vitest, Playwright), and its shuffled command
 * (as flaky_command_shuffle). */
int	 cmd_js_shuffles(const char *runner);
int	 cmd_js_shuffle(const struct flaky_command *, const char *seed,
	    char ***argv, char ***envp, char *err, size_t errlen);
/* Directory mode: the JavaScript project in dir (package.json's test
 * script, its dependencies, Jest's configuration): the reason, the runner
 * in *runner ("jest", "vitest", ...; runner may be NULL), or NULL. */
const char *cmd_js_project(const char *dir, const char **runner);
/* Its command, run in root for the tests of abs (at or below root). 0,
 * or -ENOENT with err filled when the runner is not installed. */
int	 cmd_js_command(struct cmd_vec *a, const char *root, const char *abs,
	    const char **runner, char *err, size_t errlen);
/* Jest's and Playwright's test paths are regular expressions matched
 * against absolute paths ("src" would match every file of a project under
 * ~/src): the directory abs, escaped, and a slash, added to a. */
void	 cmd_js_path_pattern(struct cmd_vec *a, const char *abs);
/* The command of a run of only the given tests (select_js.c): 1 when the
 * runner is one of them (a filled), else 0. */
int	 cmd_js_select(const struct flaky_command *, char *const *tests,
	    size_t n, struct cmd_vec *a);

/* A Python project with no pytest configuration, for the choice between
 * pytest and unittest (command_python.c). */
struct cmd_python {
	const char	*root;		/* where the command runs */
	const char	*path;		/* pytest's test path, "." for all */
	char *const	*envp;
	const char	*python;	/* the interpreter unittest runs in */
	const char	*start;		/* unittest discover's -s */
	const char	*top;		/* its -t, or NULL */
	const char	*pattern;	/* its -p */
};
#define CMD_PYTEST	1
#define CMD_UNITTEST	2
/* CMD_PYTEST or CMD_UNITTEST, and in why what chose it: what the project
 * runs (tox.ini, a Makefile, a CI file...), else the larger of the two
 * runners' counts of its tests. Runs both runners' collection (each
 * bounded to a minute) when the project declares neither. */
int	 cmd_python_choose(const struct cmd_python *, struct flaky_buf *why);

#endif
