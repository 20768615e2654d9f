/* SPDX-License-Identifier: GPL-2.0 */
/*
 * testing.h - test-only race windows and limits (testing.c).
 */
#ifndef GP_TESTING_H
#define GP_TESTING_H

#include <linux/types.h>

/*
 * Test-only race windows and limits.  They exist only in the
 * GP_TESTING build (testing.c, make's build/testing/), which the race tests
 * load; the module users get has neither the parameters nor the sleeps.
 */
enum gp_test_window {
	GP_TEST_ACTION,		/* a decision made, p->mutex not yet taken */
	GP_TEST_REAP,		/* between the two phases of a registry reap */
};

#ifdef GP_TESTING
void gp_test_window(enum gp_test_window w);
unsigned int gp_test_max_queues(void);
bool gp_test_ibt(void);
unsigned int gp_test_maxactive(void);
#else
static inline void gp_test_window(enum gp_test_window w) { }
static inline unsigned int gp_test_max_queues(void) { return 0; }
static inline bool gp_test_ibt(void) { return false; }
static inline unsigned int gp_test_maxactive(void) { return 0; }
#endif

#endif /* GP_TESTING_H */
