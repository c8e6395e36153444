/* Directory mode for cargo test, ctest (GoogleTest), RSpec and PHPUnit:
 * which of them a directory's files name, and the command each runs
 * (docs/runners.md, "Directory mode"). command_detect.c asks here after
 * its own runners. */
#include "buildconf.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/run.h"
#include "command_int.h"
#include "util/util.h"

/* Build directories ctest may have been configured in, tried in order
 * (then any other directory of the root that holds CTestTestfile.cmake). */
static const char *const build_dirs[] = { "build", "_build", "out/build",
	"cmake-build-debug", "cmake-build-release", NULL };

/* Does dir/name exist, as a regular file (want 'f') or a directory? */
static int
exists(const char *dir, const char *name, int want)
{
	char	 p[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, name) >= sizeof p ||
	    stat(p, &st) == -1)
		return 0;
	return want == 'f' ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode);
}

/* Does dir/sub hold a file whose name ends with suffix? */
static int
holds(const char *dir, const char *sub, const char *suffix)
{
	char	 p[PATH_MAX];
	DIR	*d;
	struct dirent *de;
	size_t	 sl = strlen(suffix);
	int	 found = 0;

	if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, sub) >= sizeof p ||
	    (d = opendir(p)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		size_t	 n = strlen(de->d_name);

		found = n > sl && strcmp(de->d_name + n - sl, suffix) == 0;
	}
	closedir(d);
	return found;
}

/* The build directory of a CMake project (relative to root) where ctest
 * has its CTestTestfile.cmake, into buf; 0 when there is none. */
static int
ctest_build(const char *root, char *buf, size_t len)
{
	DIR	*d;
	struct dirent *de;
	char	 name[PATH_MAX];

	for (size_t i = 0; build_dirs[i] != NULL; i++) {
		snprintf(name, sizeof name, "%s/CTestTestfile.cmake",
		    build_dirs[i]);
		if (exists(root, name, 'f')) {
			snprintf(buf, len, "%s", build_dirs[i]);
			return 1;
		}
	}
	if ((d = opendir(root)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(name, sizeof name, "%s/CTestTestfile.cmake",
		    de->d_name);
		if (exists(root, name, 'f')) {
			snprintf(buf, len, "%s", de->d_name);
			closedir(d);
			return 1;
		}
	}
	closedir(d);
	return 0;
}

/* The native runner whose project file is in dir (command_int.h). */
const char *
cmd_native_project(const char *dir, const char **reason)
{
	char	 b[PATH_MAX];

	if (exists(dir, "Cargo.toml", 'f')) {
		*reason = "found Cargo.toml";
		return "cargo";
	}
	if (exists(dir, "CMakeLists.txt", 'f') &&
	    ctest_build(dir, b, sizeof b)) {
		*reason = "found CMakeLists.txt and its ctest build directory";
		return "gtest";
	}
	if (exists(dir, ".rspec", 'f')) {
		*reason = "found .rspec";
		return "rspec";
	}
	if (holds(dir, "spec", "_spec.rb")) {
		*reason = "found spec/*_spec.rb";
		return "rspec";
	}
	if (exists(dir, "phpunit.xml", 'f') ||
	    exists(dir, "phpunit.xml.dist", 'f')) {
		*reason = exists(dir, "phpunit.xml", 'f') ?
		    "found phpunit.xml" : "found phpunit.xml.dist";
		return "phpunit";
	}
	return NULL;
}

/* Is name an executable file in envp's PATH? */
static int
in_path(char *const *envp, const char *name)
{
	char	 buf[PATH_MAX];
	const char *path = cmd_env_get(envp, "PATH");

	return path != NULL && flaky_path_find(name, NULL, path, buf,
	    sizeof buf) == 0;
}

/* abs below root, as a relative path ("" when the same). */
static const char *
below(const char *root, const char *abs)
{
	size_t	 n = strlen(root);

	if (strcmp(root, abs) == 0)
		return "";
	return abs + n + (strcmp(root, "/") != 0);
}

/* Directory mode's command for a native runner (command_int.h). */
int
cmd_native_command(const char *runner, struct cmd_vec *a, const char *root,
    const char *abs, char *const *envp, char *err, size_t errlen)
{
	const char *sub = below(root, abs);
	char	 b[PATH_MAX];

	if (strcmp(runner, "cargo") == 0) {
		if (!in_path(envp, "cargo"))
			return flaky_error(err, errlen, ENOENT, "%s: a cargo "
			    "project, but cargo is not in PATH (Debian: apt "
			    "install cargo)", abs);
		/* the whole package: cargo runs the crate, not a directory */
		cmd_vec_add(a, "cargo");
		cmd_vec_add(a, "test");
		cmd_vec_add(a, "--no-fail-fast");
		return 0;
	}
	if (strcmp(runner, "gtest") == 0) {
		if (!in_path(envp, "ctest"))
			return flaky_error(err, errlen, ENOENT, "%s: a CMake "
			    "project, but ctest is not in PATH (Debian: apt "
			    "install cmake)", abs);
		if (!ctest_build(root, b, sizeof b))
			return flaky_error(err, errlen, ENOENT, "%s: a CMake "
			    "project without a build directory: configure "
			    "and build it first (cmake -B build && cmake "
			    "--build build)", root);
		cmd_vec_add(a, "ctest");
		cmd_vec_add(a, "--test-dir");
		cmd_vec_add(a, b);
		cmd_vec_add(a, "--output-on-failure");
		return 0;
	}
	if (strcmp(runner, "rspec") == 0) {
		if (!in_path(envp, "rspec"))
			return flaky_error(err, errlen, ENOENT, "%s: RSpec "
			    "specs, but rspec is not in PATH (Debian: apt "
			    "install ruby-rspec)", abs);
		cmd_vec_add(a, "rspec");
		cmd_vec_add(a, "--format");
		cmd_vec_add(a, "documentation");
		if (*sub != '\0')
			cmd_vec_add(a, sub);
		return 0;
	}
	/* phpunit: the project's own (Composer's vendor/bin), else PATH's */
	if (exists(root, "vendor/bin/phpunit", 'f'))
		cmd_vec_add(a, "vendor/bin/phpunit");
	else if (in_path(envp, "phpunit"))
		cmd_vec_add(a, "phpunit");
	else
		return flaky_error(err, errlen, ENOENT, "%s: a PHPUnit "
		    "configuration, but neither vendor/bin/phpunit nor "
		    "phpunit in PATH (Debian: apt install phpunit)", root);
	cmd_vec_add(a, "--debug");
	cmd_vec_add(a, "-v");
	if (*sub != '\0')
		cmd_vec_add(a, sub);
	return 0;
}
