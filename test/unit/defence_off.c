// SPDX-License-Identifier: GPL-2.0
/*
 * defence_off.c - the policy's defence switches on the host, for
 * test/run-defences: GP_DEFENCE_OFF=NAME[,NAME...] switches those defences
 * off in a build of test_policy or fuzz_policy with -DGP_TESTING (the names
 * of module/testing.c's test_defence_off=).  test/run-unit never links it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"

bool gp_test_defence_off(enum gp_defence d)
{
	static int mask = -1;

	if (mask < 0) {
		const char *env = getenv("GP_DEFENCE_OFF");
		char buf[512], *tok, *save;
		int i;

		mask = 0;
		snprintf(buf, sizeof(buf), "%s", env ? env : "");
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (i = 0; i < GP_DEF_COUNT && strcmp(gp_defence_names[i], tok); i++)
				;
			if (i == GP_DEF_COUNT) {
				fprintf(stderr, "GP_DEFENCE_OFF: no defence named '%s'\n", tok);
				exit(2);
			}
			mask |= 1 << i;
		}
	}
	return mask & (1 << d);
}
