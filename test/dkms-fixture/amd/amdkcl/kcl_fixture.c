// SPDX-License-Identifier: GPL-2.0
/* Fixture: a kcl export; pre-build.sh renames it (include/rename_symbol.h). */
#include <linux/export.h>

int kcl_fixture_symbol(void);

int kcl_fixture_symbol(void)
{
	return 0;
}
EXPORT_SYMBOL(kcl_fixture_symbol);
