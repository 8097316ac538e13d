#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Show that the lib/exec tests can fail: build each test against
deliberately broken copies of lib/exec (one bug each) and expect a failure.

    tests/unit/exec/mutants.py [NAME...]      (from the source root)

Not a meson test: it recompiles about thirty variants (a few minutes on two
cores). Needs gcc and libcmocka-dev. Exit status 1 if a mutant survives.
"""

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
LIB = os.path.join(ROOT, 'lib', 'exec')
TESTS = os.path.join(ROOT, 'tests', 'unit', 'exec')

# name, file, [(old, new)], test program, test filter (cmocka glob), what
MUTANTS = [
    ('row1', 'strategy.c',
     [('bool inline_ok = type == EWYK_NON_BLOCKING ||',
       'bool inline_ok = false ||')],
     'decision', 'row1*', 'NON_BLOCKING consults the helper'),
    ('row2', 'strategy.c',
     [('(type == EWYK_EITHER && nb);', '(type == EWYK_EITHER && false);')],
     'decision', 'row2*', 'EITHER on a flagged thread tries EPC'),
    ('row2-jetty94', 'strategy.c',
     [('\t\tif (inline_ok)\n\t\t\treturn EWYK_PC;\n\t\tif (type == EWYK_BLOCKING && nb)',
       '\t\tif (inline_ok)\n\t\t\treturn type == EWYK_EITHER ? EWYK_PIC : EWYK_PC;\n\t\tif (type == EWYK_BLOCKING && nb)')],
     'decision', 'row2*', 'EITHER on a flagged thread is PIC (Jetty 9.4)'),
    ('row3', 'strategy.c',
     [('\t\tif (type == EWYK_BLOCKING && nb)\n\t\t\treturn EWYK_PEC;\n\t\tif (try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}',
       '\t\tif (type == EWYK_BLOCKING && nb)\n\t\t\treturn EWYK_PEC;\n\t\tif (type == EWYK_BLOCKING && try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}')],
     'decision', 'row3*', 'EITHER never EPC'),
    ('row4', 'strategy.c',
     [('return type == EWYK_EITHER ? EWYK_PIC : EWYK_PEC;',
       'return type == EWYK_EITHER ? EWYK_PC : EWYK_PEC;')],
     'decision', 'row4*', 'EITHER without helper runs unflagged'),
    ('row4-flag', 'strategy.c',
     [('\tif (pic)\n\t\told = ewyk_nonblocking_set(true);\n', '')],
     'decision', 'row4*', 'PIC forgets to set the flag'),
    ('row5', 'strategy.c',
     [('\t\tif (type == EWYK_BLOCKING && nb)\n\t\t\treturn EWYK_PEC;\n\t\tif (try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}',
       '\t\tif (try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}')],
     'decision', 'row5*', 'BLOCKING on a flagged thread tries EPC'),
    ('row6', 'strategy.c',
     [('\t\tif (type == EWYK_BLOCKING && nb)\n\t\t\treturn EWYK_PEC;\n\t\tif (try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}',
       '\t\tif (type == EWYK_BLOCKING && nb)\n\t\t\treturn EWYK_PEC;\n\t\tif (type != EWYK_BLOCKING && try_epc(s))\n\t\t\treturn EWYK_EPC;\n\t\tbreak;\n\t}')],
     'decision', 'row6*', 'BLOCKING never EPC'),
    ('row7', 'strategy.c',
     [('return type == EWYK_EITHER ? EWYK_PIC : EWYK_PEC;',
       'return type == EWYK_EITHER ? EWYK_PIC : EWYK_PC;')],
     'decision', 'row7*', 'BLOCKING without helper runs inline'),
    ('epc-fail-keeps-producing', 'strategy.c',
     [('owner = reacquire(s);', 'owner = rc < 0 ? true : reacquire(s);')],
     'decision', 'epc_failure*', 'failed EPC task skips the re-acquire (Jetty #2468)'),
    ('epc-fail-leaves', 'strategy.c',
     [('owner = reacquire(s);', 'owner = rc < 0 ? false : reacquire(s);')],
     'decision', 'epc_failure*', 'failed EPC task gives production up for good'),
    ('epc-no-release-first', 'strategy.c',
     [('if (cas(s, &w, w_with_state(w_with_pending(w, p + 1),\n\t\t\t\tST_IDLE)))\n\t\t\tbreak;',
       'if (cas(s, &w, w_with_pending(w, p + 1)))\n\t\t\tbreak;'),
      ('\tif (s->exec.try_execute(s->exec.try_execute_ctx, &s->run_task))\n\t\treturn true;',
       '\tif (s->exec.try_execute(s->exec.try_execute_ctx, &s->run_task)) {\n\t\tw = load(s);\n\t\twhile (w_state(w) != ST_IDLE && !cas(s, &w, w_with_state(w, ST_IDLE)))\n\t\t\t;\n\t\treturn true;\n\t}')],
     'decision', 'epc_early*', 'helper woken before production is released (Jetty 12.0 order)'),
    ('reproducing-ignored', 'strategy.c',
     [('\t\tif (w_state(w) == ST_REPRODUCING) {\n\t\t\tif (cas(s, &w, w_with_state(w, ST_PRODUCING)))',
       '\t\tif (0) {\n\t\t\tif (cas(s, &w, w_with_state(w, ST_PRODUCING)))')],
     'decision', 'reproducing*', 'owner goes idle despite REPRODUCING'),
    ('pending-leak', 'strategy.c',
     [('\t\tif (how == PENDING)\n\t\t\tnw = w_with_pending(w, w_pending(w) - 1);',
       '\t\tif (how == PENDING)\n\t\t\tnw = w;')],
     'decision', 'row3*', 'arriving helper keeps its token'),
    ('dispatch-no-withdraw', 'strategy.c',
     [('\tcnt_inc(s, C_DISPATCH_FAILED);\n\tw = load(s);\n\twhile (!cas(s, &w, w & ~W_QUEUED))\n\t\t;\n',
       '\tcnt_inc(s, C_DISPATCH_FAILED);\n')],
     'decision', 'dispatch*', 'refused dispatch leaves its token'),
    ('epc-reuses-queued', 'strategy.c',
     [('\t\tp = w_pending(w);\n\t\tif (p > 0) {', '\t\tp = w_pending(w);\n\t\tif (p > 0 || (w & W_QUEUED) != 0) {')],
     'decision', 'epc_ignores*', 'EPC waits for a producer queued behind blocked tasks (Jetty #547)'),
    ('forced-pc-ignored', 'strategy.c',
     [('\tcase EWYK_MODE_PC:\n\t\treturn EWYK_PC;\n', '')],
     'decision', 'forced*', 'mode switch to pc ignored'),
    ('rejected-silent', 'strategy.c',
     [('\t\ts->rejected(s->ctx, t, rc);', '\t\t;')],
     'decision', 'pec_rejected', 'PEC refusal not reported'),
    ('steal-not-seen', 'strategy.c',
     [('\t\tif ((w & W_INLINE) == 0 || w_tick(w) != tick)\n\t\t\treturn false;\n', '')],
     'decision', 'steal*', 'old owner does not notice the steal'),
    ('stress-two-producers', 'strategy.c',
     [('owner = reacquire(s);', 'owner = rc < 0 ? true : reacquire(s);')],
     'stress', 'stress_adaptive', 'failed EPC task skips the re-acquire (Jetty #2468)'),
    ('stress-lost-wakeup', 'strategy.c',
     [('\t\tif (w_state(w) == ST_REPRODUCING) {\n\t\t\tif (cas(s, &w, w_with_state(w, ST_PRODUCING)))',
       '\t\tif (0) {\n\t\t\tif (cas(s, &w, w_with_state(w, ST_PRODUCING)))')],
     'stress', 'stress_pingpong', 'REPRODUCING ignored'),
    ('stress-pic-on-flagged', 'strategy.c',
     [('\t\tif (inline_ok)\n\t\t\treturn EWYK_PC;\n\t\tif (type == EWYK_BLOCKING && nb)',
       '\t\tif (inline_ok)\n\t\t\treturn type == EWYK_EITHER ? EWYK_PIC : EWYK_PC;\n\t\tif (type == EWYK_BLOCKING && nb)')],
     'stress', 'stress_adaptive', 'PIC on a thread already flagged'),
    ('stress-counter', 'strategy.c',
     [('\t\tcnt_inc(s, m);\n', '\t\tif (m != EWYK_EPC)\n\t\t\tcnt_inc(s, m);\n')],
     'stress', 'stress_adaptive', 'EPC not counted'),
    ('stress-pending-leak', 'strategy.c',
     [('\t\tif (how == PENDING)\n\t\t\tnw = w_with_pending(w, w_pending(w) - 1);',
       '\t\tif (how == PENDING)\n\t\t\tnw = w;')],
     'stress', 'stress_adaptive', 'arriving helper keeps its token'),
    ('stress-steal-not-seen', 'strategy.c',
     [('\t\tif ((w & W_INLINE) == 0 || w_tick(w) != tick)\n\t\t\treturn false;\n', '')],
     'stress', 'stress_steal', 'old owner does not notice the steal'),
    ('exhausted-inline', 'strategy.c',
     [('return type == EWYK_EITHER ? EWYK_PIC : EWYK_PEC;',
       'return type == EWYK_EITHER ? EWYK_PIC : EWYK_PC;')],
     'exhausted', '*', 'no helper: BLOCKING runs inline'),
    ('exhausted-either-pec', 'strategy.c',
     [('return type == EWYK_EITHER ? EWYK_PIC : EWYK_PEC;', 'return EWYK_PEC;')],
     'exhausted', '*', 'no helper: EITHER deferred'),
    ('reserved-fifo', 'reserved.c',
     [('(w >> 3) > (best_w >> 3)', '(w >> 3) < (best_w >> 3)')],
     'reserved', 'lifo_order', 'oldest idle worker first'),
    ('reserved-index-order', 'reserved.c',
     [('(best < 0 || (w >> 3) > (best_w >> 3))', '(best < 0)')],
     'reserved', 'lifo_order', 'first idle slot in index order'),
    ('reserved-no-wake', 'reserved.c',
     [('\tif ((w & S_PARKED) != 0)\n\t\texec_futex_wake(slot_futex(sl), 1);\n\treturn true;',
       '\treturn true;')],
     'reserved', 'parked_worker_woken', 'claim does not wake a parked worker'),
    ('reserved-stop-no-wake', 'reserved.c',
     [('\t\t\t\tif ((w & S_PARKED) != 0)\n\t\t\t\t\texec_futex_wake(slot_futex(sl), 1);\n', '')],
     'reserved', 'stop_spinning_and_parked', 'stop leaves parked workers asleep'),
    ('reserved-stop-no-flag', 'reserved.c',
     [('\tatomic_store(&rp->stopping, true);\n\tfor (i = 0; i < rp->size; i++) {\n\t\tsl = &rp->slots[i];\n\t\tw = atomic_load(&sl->word);\n\t\twhile (is_idle(w)) {',
       '\tfor (i = 0; i < rp->size; i++) {\n\t\tsl = &rp->slots[i];\n\t\tw = atomic_load(&sl->word);\n\t\twhile (0) {')],
     'reserved', 'stop_spinning_and_parked', 'stop never tells the workers'),
    ('reserved-on-ignores-idx', 'reserved.c',
     [('\t\tsl = &rp->slots[idx];\n', '\t\tsl = &rp->slots[atomic_load(&rp->hint)];\n')],
     'reserved', 'execute_on', 'try_execute_on claims the LIFO top'),
    ('reserved-claims-uncounted', 'reserved.c',
     [('\tatomic_fetch_add_explicit(&rp->missed, 1, memory_order_relaxed);\n', '')],
     'reserved', 'lifo_order', 'missed claims not counted'),
    ('bpool-reject-uncounted', 'blocking_pool.c',
     [('\tif (bp->count == bp->cap) {\n\t\tbp->rejected++;', '\tif (bp->count == bp->cap) {')],
     'bpool', 'full_queue_rejects', 'rejection not counted'),
    ('bpool-reject-code', 'blocking_pool.c',
     [('\t\tpthread_mutex_unlock(&bp->lock);\n\t\treturn EWYK_REJECTED;\n\t}\n\tbp->ring',
       '\t\tpthread_mutex_unlock(&bp->lock);\n\t\treturn -ENOSPC;\n\t}\n\tbp->ring')],
     'bpool', 'full_queue_rejects', 'full queue not told apart'),
    ('bpool-no-reap', 'blocking_pool.c',
     [('\t\t\tif (bp->count == 0 && !bp->stopping &&\n\t\t\t\t\tbp->threads > bp->min_threads) {',
       '\t\t\tif (0) {')],
     'bpool', 'idle_reaped', 'idle threads never end'),
    ('bpool-over-cap', 'blocking_pool.c',
     [('bp->max_threads = conf->max_threads;', 'bp->max_threads = conf->max_threads * 2;'),
      ('calloc(conf->max_threads, sizeof(*bp->th))', 'calloc(conf->max_threads * 2, sizeof(*bp->th))')],
     'bpool', 'thread_cap', 'thread cap ignored'),
    ('bpool-stop-drops', 'blocking_pool.c',
     [('\t\tif (bp->count == 0) {\n\t\t\tif (bp->stopping)\n\t\t\t\tbreak;',
       '\t\tif (bp->count == 0 || bp->stopping) {\n\t\t\tif (bp->stopping)\n\t\t\t\tbreak;')],
     'bpool', 'stop_drains', 'stop drops queued tasks'),
    ('fiber-unwatched', 'strategy.c',
     [('\t\t\tif (!consume_inline(s, t, false))\n\t\t\t\treturn;\n\t\t\tcontinue;',
       '\t\t\tconsume_pec(s, t);\n\t\t\tcontinue;')],
     'decision', 'fiber_free*', 'a fiber task is not run inline'),
    ('fiber-not-stealable', 'strategy.c',
     [('\tbool stealable = (s->flags & EWYK_STRATEGY_STEALABLE) != 0;',
       '\tbool stealable = (s->flags & EWYK_STRATEGY_STEALABLE) != 0 &&\n\t\tt->mode != EWYK_FIBER;')],
     'decision', 'fiber_free*', 'the watchdog cannot see a fiber'),
    ('fiber-fallback-uncounted', 'strategy.c',
     [('\tif (r < 0)\n\t\tcnt_inc(s, C_FIBER_FALLBACK);', '')],
     'decision', 'fiber_exhausted*', 'no fiber free goes uncounted'),
    ('fiber-resume-follows-mode', 'strategy.c',
     [('\tif (r > 0)\n\t\treturn true;', '\tif (r > 0 && 0)\n\t\treturn true;')],
     'decision', 'fiber_resume*', 'a parked fiber is run on a thread'),
    ('fiber-forced-ignored', 'strategy.c',
     [('\tif (atomic_load_explicit(&s->mode, memory_order_relaxed) !=\n\t\t\tEWYK_MODE_ADAPTIVE)\n\t\treturn false;', '')],
     'decision', 'fiber_resume*', 'forced modes start fibers'),
]


def build(tmp, test):
    srcs = [os.path.join(tmp, f) for f in sorted(os.listdir(tmp))
            if f.endswith('.c')]
    exe = os.path.join(tmp, 'test_' + test)
    cmd = ['gcc', '-std=gnu11', '-O2', '-g', '-D_GNU_SOURCE', '-Wall',
           '-I', tmp, '-I', os.path.join(tmp, 'include'), '-I', TESTS,
           '-o', exe,
           os.path.join(TESTS, 'test_%s.c' % test)] + srcs + \
          ['-lcmocka', '-lpthread']
    subprocess.run(cmd, check=True, capture_output=True)
    return exe


def run(exe, flt):
    env = dict(os.environ, CMOCKA_TEST_ABORT='0')
    if flt:
        env['EXEC_TEST_FILTER'] = flt
    try:
        p = subprocess.run([exe], env=env, capture_output=True, timeout=90)
        return p.returncode
    except subprocess.TimeoutExpired:
        return 'timeout'


def main():
    want = set(sys.argv[1:])
    survived = 0
    with tempfile.TemporaryDirectory() as base:
        # Control: the unbroken library passes every test used below.
        for test in sorted({m[3] for m in MUTANTS
                            if not want or m[0] in want}):
            tmp = os.path.join(base, 'control-' + test)
            shutil.copytree(LIB, tmp, ignore=shutil.ignore_patterns(
                'meson.build'))
            rc = run(build(tmp, test), None)
            print('%-28s %-8s %s' % ('control', 'pass' if rc == 0 else
                                     'FAIL(%s)' % rc, test))
            if rc != 0:
                return 2
        for name, fname, reps, test, flt, what in MUTANTS:
            if want and name not in want:
                continue
            tmp = os.path.join(base, name)
            shutil.copytree(LIB, tmp, ignore=shutil.ignore_patterns(
                'meson.build'))
            path = os.path.join(tmp, fname)
            src = open(path).read()
            for old, new in reps:
                if src.count(old) < 1:
                    print('%-28s STALE (pattern not found)' % name)
                    survived += 1
                    break
                src = src.replace(old, new)
            else:
                open(path, 'w').write(src)
                rc = run(build(tmp, test), flt)
                ok = rc != 0
                survived += 0 if ok else 1
                print('%-28s %-8s %-9s %-26s %s' % (
                    name, 'killed' if ok else 'SURVIVED', test, flt, what))
                sys.stdout.flush()
            shutil.rmtree(tmp)
    print('%d mutant(s) survived' % survived)
    return 1 if survived else 0


if __name__ == '__main__':
    sys.exit(main())
