/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - TAP output of the C unit tests in test/unit, in the kselftest
 * style: "TAP version 13", the plan "1..N" (first, or last when the count
 * is known only at the end), "ok N - name" / "not ok N - name", "#"
 * diagnostics, and last "# N passed, N failed".  Exit status 1 when any
 * test failed.  Every line is flushed as it is written, so a test that
 * crashes keeps the lines before the crash; test/run-unit fails a program
 * whose last line never came (crashed, killed) or whose lines are fewer
 * than its plan.  test/run-unit and scripts/tap-summary renumber the lines
 * across files.  Header-only: each test is one program.
 *
 * Two ways to use it:
 *   - a table of tests (struct tap_test) whose checks are EXPECT(cond):
 *     return tap_run(tests, n);
 *   - a stream of checks: tap_start(plan or 0); tap_ok(cond, "name %d", x);
 *     ...; return tap_done();
 */
#ifndef GP_TEST_TAP_H
#define GP_TEST_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_n, tap_failed, tap_plan;

/* The current test of tap_run() has failed (EXPECT sets it). */
static int tap_cur_failed;

/* EXPECT(cond): a failed condition fails the current test; its first five print a diagnostic. */
#define EXPECT(cond) do {							\
	if (!(cond) && tap_cur_failed++ < 5)					\
		printf("# %s:%d: expected %s\n", __FILE__, __LINE__, #cond);	\
} while (0)

/* Start the output; @plan: the number of tests, or 0 to print it at the end. */
static inline void tap_start(int plan)
{
	tap_plan = plan;
	printf("TAP version 13\n");
	if (plan)
		printf("1..%d\n", plan);
}

/* One test's line: "ok N - name" or "not ok N - name". */
static inline __attribute__((format(printf, 2, 3))) bool tap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* Piped, stdout is fully buffered: a crash must not take the lines before it. */
	fflush(stdout);
	tap_failed += !ok;
	return ok;
}

/* A diagnostic: "# text". */
static inline __attribute__((format(printf, 1, 2))) void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The end: the plan if not given first, "# N passed, N failed"; the exit status. */
static inline int tap_done(void)
{
	if (!tap_plan)
		printf("1..%d\n", tap_n);
	tap_diag("%d passed, %d failed", tap_n - tap_failed, tap_failed);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

struct tap_test {
	const char *name;
	void (*fn)(void);
};

/* Run a table of tests, each one line; Return: the exit status. */
static inline int tap_run(const struct tap_test *tests, int n)
{
	int i;

	tap_start(n);
	for (i = 0; i < n; i++) {
		tap_cur_failed = 0;
		tests[i].fn();
		tap_ok(!tap_cur_failed, "%s", tests[i].name);
	}
	return tap_done();
}

#endif /* GP_TEST_TAP_H */
