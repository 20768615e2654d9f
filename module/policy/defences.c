// SPDX-License-Identifier: GPL-2.0
/*
 * defences.c - the names of the defences a test may switch off (enum
 * gp_defence), one table for the GP_TESTING module's test_defence_off=
 * (module/testing.c) and the host's GP_DEFENCE_OFF (test/unit/defence_off.c).
 * Linked into those two builds only; pure C like the rest of the policy.
 */
#include "policy/policy.h"

const char * const gp_defence_names[GP_DEF_COUNT] = {
	[GP_DEF_UNKNOWN] = "unknown",
	[GP_DEF_PROGRESS] = "progress",
	[GP_DEF_BARRIER] = "barrier",
	[GP_DEF_GROUP] = "group",
	[GP_DEF_BARRIER_RELEASE] = "barrier_release",
	[GP_DEF_YIELD_CAP] = "yield_cap",
	[GP_DEF_GOES_ALONG] = "goes_along",
	[GP_DEF_NOT_AQL] = "not_aql",
	[GP_DEF_IDS_PAGE] = "ids_page",
	[GP_DEF_PARK_RECHECK] = "park_recheck",
};
