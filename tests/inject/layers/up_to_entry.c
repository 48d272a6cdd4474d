/* SPDX-License-Identifier: MIT */
/* ctest inject_layers_fixture: stands for a file of the middle layer that
 * calls the entry point (inject.c), declared by hand as no header allows. */
int InitializeInjection(void);
void inj_fixture_up_to_entry(void);

void inj_fixture_up_to_entry(void)
{
	InitializeInjection();
}
