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
	struct tls_inline_budget b = { 0 };
	atomic_bool room;

	(void)state;
	/* a cheap step is never handed over */
	atomic_init(&room, true);
	assert_int_equal(tls_offload_type(true, &room, &b, 0), EWYK_NON_BLOCKING);
	/* on: always a helper's */
	assert_int_equal(tls_offload_type(false, NULL, &b, 0), EWYK_BLOCKING);
	/* auto, with room: a helper's */
	assert_int_equal(tls_offload_type(false, &room, &b, 0), EWYK_BLOCKING);
	assert_int_equal(b.inlined + b.spilled, 0);
	/* without: inline, once per gap; a helper's in between */
	atomic_store(&room, false);
	assert_int_equal(tls_offload_type(false, &room, &b, 5000), EWYK_EITHER);
	assert_int_equal(tls_offload_type(false, &room, &b, 5001), EWYK_BLOCKING);
	assert_int_equal(tls_offload_type(false, &room, &b,
			5000 + TLS_INLINE_GAP_US - 1), EWYK_BLOCKING);
	assert_int_equal(tls_offload_type(true, &room, &b, 5002),
			EWYK_NON_BLOCKING);
	assert_int_equal(tls_offload_type(false, &room, &b,
			5000 + TLS_INLINE_GAP_US), EWYK_EITHER);
	assert_int_equal(b.inlined, 2);
	assert_int_equal(b.spilled, 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_costly_step_goes_to_a_helper_only_with_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
