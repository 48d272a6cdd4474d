/* SPDX-License-Identifier: MIT */
/* ctest inject_layers_fixture: stands for a file of the base layer (state.c,
 * log.c) that calls up into the encoder. */
int inj_encoder_start(void);
void inj_fixture_up_to_encoder(void);

void inj_fixture_up_to_encoder(void)
{
	inj_encoder_start();
}
