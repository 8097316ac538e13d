/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * --tls-offload's rule (lib/serve/tls_offload.c), white-box: the room
 * the main lcore read is injected, so the verdict is the rule's alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tls_offload.h"

static void
test_a_costly_step_goes_to_a_helper_only_with_room(void **state)
{
	atomic_bool room;
	uint64_t no_room = 0;

	(void)state;
	/* a cheap step is never handed over */
	atomic_init(&room, true);
	assert_int_equal(tls_offload_type(true, &room, &no_room),
			EWYK_NON_BLOCKING);
	/* on: always a helper's */
	assert_int_equal(tls_offload_type(false, NULL, &no_room), EWYK_BLOCKING);
	/* auto, with room: a helper's; without: inline where none is idle */
	assert_int_equal(tls_offload_type(false, &room, &no_room), EWYK_BLOCKING);
	assert_int_equal(no_room, 0);
	atomic_store(&room, false);
	assert_int_equal(tls_offload_type(false, &room, &no_room), EWYK_EITHER);
	assert_int_equal(tls_offload_type(true, &room, &no_room),
			EWYK_NON_BLOCKING);
	assert_int_equal(no_room, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_costly_step_goes_to_a_helper_only_with_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
