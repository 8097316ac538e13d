#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The mutation run: small deliberate breaks of the product, each of which
some fast test must notice.

    tests/mutation/run.py [--only NAME|GLOB ...] [--find [GLOB,...]]
                          [--list] [-j N] [--file PATH]

Every break lives in tests/mutation/breaks/*.toml (one file per area). The
run copies the source tree into build-mutation/tree and tree-1 (one per
job, -j, default 2; only files that changed are rewritten, so their
builds stay incremental from one run to the next), builds there what the
breaks' tests need (unoptimised, without debug information, through
ccache: a compile is what each break costs, and a file put back or a
break of an earlier run is a hit), runs every test the breaks name on the unbroken
tree (the control: each must pass and run at least one test; a cmocka
program runs once, whole, for all its filters), then, two
at a time, patches one file for a break, rebuilds only the targets its
tests need, runs them, and puts the file back. Exit status 1 if a break
survives, if its old text is no longer found exactly once (the list must
follow the code: a break that no longer applies is an error, not a pass),
if a broken tree does not build, or if the control fails. The last line:
"mutation: N breaks: C caught, F failed" (tests/run.sh counts it).

Adding a break
--------------
Append to the area's file under tests/mutation/breaks/:

    [[break]]
    name = "http-status-uncounted"   # unique, short, kebab-case
    file = "lib/http/http_conn.c"    # one file of the product
    what = "answers are not counted by status"
    old = 'st->by_status[http_status_slot(status)]++;'
    new = 'st->by_status[HTTP_ST_OTHER]++;'
    tests = ["http_counters:test_http1_requests_statuses_methods_bytes"]

old must occur exactly once in file. Copy it with its tabs: TOML's
literal strings ('...', and '''...''' over several lines, the newline
right after the opening quotes dropped) take it as it is, backslashes
included. For several edits of the same file give old and new as lists of
the same length. Choose a break a user would suffer from (a limit, a
counter an operator alerts on, a validator, an order, a timer), make it
small and plausible, in a .c file where one will do (a header shared
across a library recompiles all of it, broken and again put back), and
name the test that must fail on it:

    NAME             the meson test NAME (meson test --list), whole
    NAME:GLOB        the same, only its cmocka tests matching GLOB (the
                     filter is preloaded: tests/mutation/cmocka_filter.c)
    NAME@PATH        the same with PATH (from the source root) as its only
                     argument: one fuzz input for a replay test
    pytest:FILE::TEST   one integration test (root; builds app/ewykd,
                     app/ewyk-load and the example plugin);
                     only where it is cheap (a few seconds)

Every test listed must fail on the break (a list is a claim, so it cannot
rot): list the one that catches it. `run.py --only NAME --find` runs every
unit test on the break and names the cmocka tests that fail (--find
'tcp_*,http_cond' for some only); `run.py --only NAME` then shows it
caught. If nothing fails, the break has found a gap: write the test that
closes it, and see it fail on the break. A test is given max(10 s, 10 x
its control time; 3 x for an integration test), capped by its meson
timeout; a test that times out on
a break counts as failing on it. A test of this round's work comes with a
break of its own in the list.

Determinism
-----------
A catcher must fail on its break every time, not by chance. A test whose
outcome may hang on timing or threads (a stress test, one of meson's
'tsan' suite; an integration test) is run on its break twice, and a break
whose two runs disagree fails the run as UNSTEADY: give it a catcher that
drives the interleaving itself (a unit test of the state machine, a hook,
a step-by-step harness) instead. A break marked `steady = true` is one
whose integration catcher checks what no timing can change (an option
refused, a file installed, a header that must be there): run once.
"""

import argparse
import concurrent.futures
import copy
import fcntl
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import threading
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BREAKS = os.path.join(ROOT, 'tests', 'mutation', 'breaks')
PYTHON = '/usr/bin/python3'
SHIM = os.path.join('tests', 'mutation', 'libewyk_cmocka_filter.so')
EXCLUDE_TOP = re.compile(r'^(build[^/]*|\.git)(/|$)')


class ListError(Exception):
    pass


# The list ------------------------------------------------------------------

def load_breaks(paths):
    breaks, names = [], set()
    for path in paths:
        with open(path, 'rb') as f:
            try:
                doc = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                raise ListError('%s: %s' % (path, e))
        for b in doc.get('break', []):
            where = '%s: break %r' % (os.path.relpath(path, ROOT),
                                       b.get('name'))
            for key in ('name', 'file', 'what', 'old', 'new', 'tests'):
                if key not in b:
                    raise ListError('%s: no %s' % (where, key))
            old, new = b['old'], b['new']
            if isinstance(old, str):
                old, new = [old], [new]
            if (not isinstance(new, list) or len(old) != len(new) or
                    not all(isinstance(s, str) for s in old + new)):
                raise ListError('%s: old and new differ in kind or length'
                                % where)
            if any(o == n for o, n in zip(old, new)) or '' in old:
                raise ListError('%s: an edit that changes nothing' % where)
            if not b['tests']:
                raise ListError('%s: no test named' % where)
            if b['name'] in names:
                raise ListError('%s: name used twice' % where)
            names.add(b['name'])
            if not isinstance(b.get('steady', False), bool):
                raise ListError('%s: steady is true or false' % where)
            breaks.append(dict(name=b['name'], file=b['file'],
                               what=b['what'], edits=list(zip(old, new)),
                               tests=list(b['tests']),
                               steady=b.get('steady', False),
                               source=os.path.relpath(path, ROOT)))
    return breaks


def apply_edits(text, edits):
    """The broken text, or raises ListError naming the edit that does not
    apply: its old text must be there exactly once."""
    for i, (old, new) in enumerate(edits):
        n = text.count(old)
        if n != 1:
            raise ListError('edit %d: old text found %d times (want 1): %r'
                            % (i + 1, n, old[:70]))
        text = text.replace(old, new)
    return text


# The scratch tree ------------------------------------------------------------

def source_files():
    try:
        out = subprocess.run(
            ['git', '-C', ROOT, 'ls-files', '-z', '--cached', '--others',
             '--exclude-standard'], check=True, capture_output=True).stdout
        files = [f for f in out.decode().split('\0') if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            rel = os.path.relpath(d, ROOT)
            dirs[:] = [x for x in dirs if not EXCLUDE_TOP.match(
                os.path.normpath(os.path.join(rel, x)))
                and x != '__pycache__']
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(f for f in files if not EXCLUDE_TOP.match(f) and
                  os.path.isfile(os.path.join(ROOT, f)))


def sync_tree(tree):
    """Makes tree a copy of the source, rewriting only what differs, so
    that ninja rebuilds only that (a file a break left behind included)."""
    want = set(source_files())
    changed = 0
    for rel in want:
        src, dst = os.path.join(ROOT, rel), os.path.join(tree, rel)
        with open(src, 'rb') as f:
            data = f.read()
        try:
            with open(dst, 'rb') as f:
                if f.read() == data:
                    continue
        except OSError:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, 'wb') as f:
            f.write(data)
        shutil.copymode(src, dst)
        changed += 1
    for d, dirs, names in os.walk(tree):
        rel = os.path.relpath(d, tree)
        dirs[:] = [x for x in dirs if not EXCLUDE_TOP.match(
            os.path.normpath(os.path.join(rel, x)))]
        for n in names:
            r = os.path.normpath(os.path.join(rel, n))
            if r not in want and '__pycache__' not in r:
                os.unlink(os.path.join(d, n))
    return changed


def write_file(path, text):
    with open(path, 'w') as f:
        f.write(text)


# Tests -----------------------------------------------------------------------

class Spec:
    """One test as a break names it."""

    def __init__(self, text, meson_tests, build):
        self.text = text
        self.home = os.path.dirname(build)	# the tree it was read from
        self.filter = None
        self.args = None
        self.pytest = None
        self.pytest_ids = None	# a control run's: all of one file at once
        if text.startswith('pytest:'):
            self.pytest = text[len('pytest:'):]
            self.targets = ['app/ewykd', 'app/ewyk-load',
                            'app/plugins/ewyk-hello.so']
            self.timeout_cap = 120
            self.timing = True
            return
        name = text
        if '@' in name:
            name, arg = name.split('@', 1)
            self.args = [os.path.join(os.path.dirname(build), arg)]
        elif ':' in name:
            name, self.filter = name.split(':', 1)
        t = meson_tests.get(name)
        if t is None:
            raise ListError('test %r: no meson test of that name' % name)
        self.cmd = t['cmd'] if self.args is None else \
            t['cmd'][:1] + self.args
        self.env = t.get('env') or {}
        self.workdir = t.get('workdir') or build
        self.timeout_cap = t.get('timeout') or 60
        # Stress tests (threads racing) are the 'tsan' suite's.
        self.timing = any(x == 'tsan' or x.endswith(':tsan')
                          for x in t.get('suite', []))
        exe = os.path.relpath(t['cmd'][0], build)
        self.targets = [exe] if not exe.startswith('..') else []
        if self.filter is not None:
            self.targets.append(SHIM)

    def limit(self):
        """How long the test may take on a break: 10 x its control time
        (3 x for an integration test, whose control takes seconds and
        whose breaks often make it wait), 10 s at least, within its cap."""
        return min(self.timeout_cap,
                   max(10, (3 if self.pytest else 10) * self.control))

    def run(self, tree, timeout):
        """(passed, tests run or None if it does not say, seconds, log)"""
        build = os.path.join(tree, 'build')
        env = dict(os.environ)
        if self.pytest is not None:
            ids = self.pytest_ids or [self.pytest]
            cmd = [PYTHON, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                   '-rA' if self.pytest_ids else '-x',
                   *[os.path.join(tree, i) for i in ids]]
            cwd = tree
        else:
            def here(v):	# the same file in this tree
                return tree + v[len(self.home):] \
                    if v.startswith(self.home + os.sep) else v
            env.update({k: here(v) for k, v in self.env.items()})
            cmd, cwd = [here(c) for c in self.cmd], here(self.workdir)
            if self.filter is not None:
                env['EWYK_TEST_FILTER'] = self.filter
                env['LD_PRELOAD'] = ' '.join(filter(None, [
                    os.path.join(build, SHIM), env.get('LD_PRELOAD')]))
        # A test a break makes fail skips its clean-up: its files go in
        # a directory of this run's, removed whatever happened.
        scratch = tempfile.TemporaryDirectory(prefix='ewyk-mut-')
        env['TMPDIR'] = scratch.name
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            # An interrupt first: pytest then runs its teardown, which
            # stops the ewykd it started (in a session of its own, out of
            # the group's reach) and removes its namespaces.
            os.killpg(p.pid, signal.SIGINT)
            try:
                out, _ = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                out, _ = p.communicate()
            rc = 'timeout'
        took = time.monotonic() - t0
        scratch.cleanup()
        log = out.decode(errors='replace')
        return rc == 0, count_run(log, self.pytest is not None), took, \
            log if rc != 'timeout' else log + '\n(timed out)\n'


def count_run(log, pytest):
    if pytest:
        m = re.search(r'(\d+) passed', log)
        return int(m.group(1)) if m else 0
    n = [int(x) for x in re.findall(r'\[=+\] (\d+) test\(s\) run\.', log)]
    if n:
        return sum(n)
    replays = log.count('\nreplay ') + log.startswith('replay ')
    return replays if replays else None


def count_cases(log, pattern):
    """How many of a cmocka program's cases, as its output names them,
    the filter pattern selects (cmocka's glob: '*' and '?')."""
    return sum(fnmatch.fnmatchcase(n, pattern) for n in
               re.findall(r'^\[ RUN      \] (\S+)$', log, re.M))


def control_units(specs, used):
    """The control's runs, [(spec to run, names it answers for)]: a cmocka
    program once, whole, for every test of the list that is a filter of
    it (its output names the cases each filter selects; the process and
    EAL start-up, most of a filtered run's time, is paid once), every
    other test on its own."""
    programs, units = {}, []
    for s in sorted(used):
        sp = specs[s]
        if sp.pytest is not None:
            # One pytest run for a file's catchers: its module's
            # appliance starts once, not once per catcher.
            key = ('pytest', sp.pytest.split('::')[0])
            if key not in programs:
                whole = copy.copy(sp)
                whole.pytest_ids = []
                programs[key] = (whole, [])
                units.append(programs[key])
            programs[key][0].pytest_ids.append(sp.pytest)
            programs[key][1].append(s)
            continue
        if sp.args is not None:
            units.append((sp, [s]))
            continue
        key = (tuple(sp.cmd), sp.workdir, tuple(sorted(sp.env.items())))
        if key not in programs:
            whole = copy.copy(sp)
            whole.filter = None
            programs[key] = (whole, [])
            units.append(programs[key])
        programs[key][1].append(s)
    return units


def runs_on_break(b, spec):
    """How many times a catcher runs on its break: twice where timing or
    threads may decide its outcome, unless the break is steady and the
    catcher an integration test (a stress test always runs twice)."""
    if not spec.timing or (b['steady'] and spec.pytest):
        return 1
    return 2


def judge(outcomes):
    """A break's verdict from its catchers' runs on it ({test: [passed,
    passed again...]}): ('unsteady', tests whose runs disagree) before
    ('survived', tests that passed) before ('caught', [])."""
    unsteady = [s for s, runs in outcomes.items() if len(set(runs)) > 1]
    if unsteady:
        return 'unsteady', unsteady
    missed = [s for s, runs in outcomes.items() if runs[0]]
    if missed:
        return 'survived', missed
    return 'caught', []


def failed_names(spec, log):
    """The failing test as a list entry: the cmocka tests that failed
    inside it by name, else the test itself."""
    names = []
    for m in re.finditer(r'^\[  (?:FAILED|ERROR) +\] (\w+)$', log, re.M):
        if m.group(1) not in names:
            names.append(m.group(1))
    return ['%s:%s' % (spec.split(':')[0], n) for n in names] or [spec]


_print_lock = threading.Lock()


def say(text):
    """Prints a whole line (or lines) at once: workers print side by side."""
    with _print_lock:
        print(text)
        sys.stdout.flush()


def in_parallel(fns, workers=None):
    """Runs fns on up to workers threads (all at once by default); their
    results in order."""
    if len(fns) <= 1 or workers == 1:
        return [f() for f in fns]
    with concurrent.futures.ThreadPoolExecutor(workers or len(fns)) as ex:
        return list(ex.map(lambda f: f(), fns))


def cost(group, specs):
    """A group of breaks' expected time: a compile and a test each, an
    integration test (run twice) many."""
    return sum(16 if any(specs[s].pytest for s in b['tests']) else 1
               for b in group)


def meson_tests(build):
    out = subprocess.run(['meson', 'introspect', build, '--tests'],
                         check=True, capture_output=True).stdout
    return {t['name']: t for t in json.loads(out)}


# The scratch build: neither optimised nor with debug information, which
# together are more than half of what a compile costs (every break is one
# compile, and the control run checks that the tests pass on this build
# too); a break may leave a variable unused, so no -Werror. Compiled
# through ccache when there is one (meson takes it when it sets up): the
# file a break put back compiles as a hit, and so does every broken file
# of an earlier run, in either tree.
BUILD_OPTIONS = {'optimization': '0', 'debug': False, 'werror': False}
CCACHE = shutil.which('ccache')


def compiles_through_ccache(build):
    out = subprocess.run(['meson', 'introspect', build, '--compilers'],
                         capture_output=True, text=True).stdout
    try:
        exe = json.loads(out)['host']['c']['exelist']
    except (ValueError, KeyError):
        return False
    return any(os.path.basename(x) == 'ccache' for x in exe)


def configure(tree, build):
    if (os.path.exists(os.path.join(build, 'build.ninja')) and CCACHE and
            'CC' not in os.environ and not compiles_through_ccache(build)):
        shutil.rmtree(build)	# set up before ccache was installed
    if os.path.exists(os.path.join(build, 'build.ninja')):
        out = subprocess.run(['meson', 'introspect', build, '--buildoptions'],
                             capture_output=True, text=True).stdout
        have = {o['name']: o['value'] for o in json.loads(out or '[]')}
        if all(have.get(k) == v for k, v in BUILD_OPTIONS.items()):
            return True
        cmd = ['meson', 'configure', build]
    else:
        cmd = ['meson', 'setup', build]
    cmd += ['-D%s=%s' % (k, str(v).lower()) for k, v in BUILD_OPTIONS.items()]
    p = subprocess.run(cmd, cwd=tree, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout + p.stderr)
        print('mutation: %s failed' % ' '.join(cmd[:2]))
    return p.returncode == 0


def ninja(build, targets):
    # A test run from the source (a script) needs nothing built: ninja
    # without a target would build every one.
    if not targets:
        return True, ''
    # Paths inside the tree hashed as relative ones: the trees share hits.
    env = dict(os.environ, CCACHE_BASEDIR=os.path.dirname(build))
    p = subprocess.run(['ninja', '-C', build] + sorted(set(targets)),
                       capture_output=True, text=True, env=env)
    return p.returncode == 0, p.stdout + p.stderr


# The run -------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=' '.join(
        __doc__.split('\n\n')[0].split()))
    ap.add_argument('--only', nargs='+', default=[],
                    help='breaks by name or glob')
    ap.add_argument('--file', action='append', default=[],
                    help='a list other than tests/mutation/breaks/*.toml')
    ap.add_argument('--list', action='store_true',
                    help='print the breaks and check that each applies')
    ap.add_argument('--find', nargs='?', const='*', metavar='GLOB',
                    help='run every test of the unit suite (or those whose '
                    'names match GLOB[,GLOB...]) on each break and say '
                    'which fail, to choose the test to list')
    ap.add_argument('-j', '--jobs', type=int, default=2,
                    help='breaks built and run side by side, each in a '
                    'scratch tree of its own (default 2)')
    ap.add_argument('--dir', default=os.path.join(ROOT, 'build-mutation'),
                    help='scratch directory (default build-mutation)')
    opt = ap.parse_args()
    t_start = time.monotonic()

    files = opt.file or sorted(glob.glob(os.path.join(BREAKS, '*.toml')))
    try:
        breaks = load_breaks(files)
    except ListError as e:
        print('mutation: the list is broken: %s' % e)
        return 1
    if opt.only:
        breaks = [b for b in breaks
                  if any(fnmatch.fnmatchcase(b['name'], g) for g in opt.only)]
    if not breaks:
        print('mutation: no break to run')
        print('mutation: 0 breaks: 0 caught, 1 failed')
        return 1

    # Every break must still apply to the source as it is now.
    stale = []
    for b in breaks:
        try:
            with open(os.path.join(ROOT, b['file'])) as f:
                b['orig'] = f.read()
            b['broken'] = apply_edits(b['orig'], b['edits'])
        except (OSError, ListError) as e:
            stale.append(b)
            print('STALE     %-30s %s: %s' % (b['name'], b['file'], e))
    if opt.list:
        for b in breaks:
            print('%-30s %-28s %s' % (b['name'], b['file'],
                                      ', '.join(b['tests'])))
        print('%d breaks, %d stale' % (len(breaks), len(stale)))
        return 1 if stale else 0

    # One scratch tree per worker: tree, tree-1, ... Each break is built
    # and run in one of them; all of a file's breaks in the same one.
    trees = [os.path.join(opt.dir, 'tree' if k == 0 else 'tree-%d' % k)
             for k in range(max(1, opt.jobs))]
    for t in trees:
        os.makedirs(t, exist_ok=True)
    # One run at a time in the scratch trees: another would patch and
    # build under this one's feet.
    lock = open(os.path.join(opt.dir, 'lock'), 'w')
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print('mutation: waiting for the run already in %s' % opt.dir)
        fcntl.flock(lock, fcntl.LOCK_EX)
    for t in trees:
        changed = sync_tree(t)
        print('mutation: %s: %d file(s) rewritten' % (
            os.path.relpath(t, ROOT), changed))
        if not configure(t, os.path.join(t, 'build')):
            return 1
        ok, log = ninja(os.path.join(t, 'build'), ['build.ninja'])
        if not ok:	# it reconfigures when meson.build files changed
            print(log[-3000:])
            return 1
    tree, build = trees[0], os.path.join(trees[0], 'build')
    mtests = meson_tests(build)

    specs = {}
    try:
        if opt.find:
            every = sorted(n for n, t in mtests.items()
                           if ('unit' in t['suite'] or
                               any(x.endswith(':unit') for x in t['suite']))
                           and any(fnmatch.fnmatchcase(n, g)
                                   for g in opt.find.split(',')))
            for b in breaks:
                b['tests'] = every
        for b in breaks:
            for s in b['tests']:
                if s not in specs:
                    specs[s] = Spec(s, mtests, build)
            if b['steady'] and not all(specs[s].pytest for s in b['tests']):
                raise ListError('break %r: steady, but a catcher is not an '
                                'integration test (a stress test always '
                                'runs twice)' % b['name'])
    except ListError as e:
        print('mutation: %s' % e)
        return 1

    live = [b for b in breaks if b not in stale]
    used = {s for b in live for s in b['tests']}
    targets = [t for s in used for t in specs[s].targets]
    t0 = time.monotonic()
    # The first tree alone (ninja uses every CPU), then the others side by
    # side: what the first compiled is in ccache for them (paths hashed
    # relative to the tree), where building all at once compiled every
    # file once per tree.
    built = [ninja(os.path.join(trees[0], 'build'), targets)]
    built += in_parallel([lambda t=t: ninja(os.path.join(t, 'build'), targets)
                          for t in trees[1:]])
    print('mutation: control build, %d target(s): %.0f s' % (
        len(set(targets)), time.monotonic() - t0))
    for ok, log in built:
        if not ok:
            print(log[-3000:])
            print('mutation: the unbroken tree does not build')
            return 1

    # Control: each test passes on the unbroken tree and runs something.
    # Two side by side (integration tests too: each has namespaces and an
    # appliance of its own, as in tests/run.sh's integration stage).
    t0 = time.monotonic()

    def control(unit):
        whole, names = unit
        cap = whole.timeout_cap * (len(whole.pytest_ids or [None]))
        passed, ran, took, log = whole.run(tree, cap)
        ok = True
        for s in names:
            sp = specs[s]
            sp.control = took
            n = ran if sp.filter is None else count_cases(log, sp.filter)
            if whole.pytest_ids:
                # Each catcher of the file by its own line; its time a
                # share of the run's (the appliance started once).
                sp.control = took / len(names) + 2
                n = int(re.search(r'(?m)^PASSED ' + re.escape(sp.pytest) +
                                  r'$', log) is not None)
            if passed and n != 0:
                continue
            if ok:
                say(log[-3000:])
            ok = False
            say('CONTROL   %-40s %s' % (s, 'ran no test' if passed
                                        else 'fails on the unbroken tree'))
        return ok

    # Integration tests first: the longest.
    units = sorted(control_units(specs, used),
                   key=lambda u: (u[0].pytest is None, u[1][0]))
    results = in_parallel([lambda u=u: control(u) for u in units],
                          workers=len(trees))
    print('mutation: control run of %d test(s): %.0f s' % (
        len(used), time.monotonic() - t0))
    if not all(results):
        print('mutation: %d breaks: 0 caught, %d failed' % (len(breaks),
                                                            len(breaks)))
        return 1

    caught, survived, broken, nondeterministic = [], [], [], []

    def run_break(b, tree):
        """Applies b in tree, builds and runs its tests, puts it back."""
        build = os.path.join(tree, 'build')
        path = os.path.join(tree, b['file'])
        t0 = time.monotonic()
        write_file(path, b['broken'])
        try:
            ok, log = ninja(build, [t for s in b['tests']
                                    for t in specs[s].targets])
            built = time.monotonic() - t0
            if not ok:
                broken.append(b)
                say(log[-2000:] + '\nNO BUILD  %-30s %s' % (b['name'],
                                                             b['file']))
                return
            outcomes, failed = {}, []
            for s in b['tests']:
                sp = specs[s]
                limit = sp.limit()
                passed, _, _, log = sp.run(tree, limit)
                outcomes[s] = [passed]
                if runs_on_break(b, sp) == 2 and not opt.find:
                    # Once more: a catcher by chance is no catcher.
                    outcomes[s].append(sp.run(tree, limit)[0])
                if not passed:
                    failed += failed_names(s, log)
        finally:
            write_file(path, b['orig'])
        took = time.monotonic() - t0
        verdict, which = judge(outcomes)
        if opt.find:
            say('%-30s %-26s failed: %s' % (b['name'], b['file'],
                                            ', '.join(failed) or 'NONE'))
        elif verdict == 'unsteady':
            nondeterministic.append(b)
            say('UNSTEADY  %-30s %-26s %s  [failed once of two runs: %s] '
                '(%.1f s)' % (b['name'], b['file'], b['what'],
                              ', '.join(which), took))
        elif verdict == 'survived':
            survived.append(b)
            say('SURVIVED  %-30s %-26s %s  [passed: %s] (%.1f s)' % (
                b['name'], b['file'], b['what'], ', '.join(which), took))
        else:
            caught.append(b)
            say('caught    %-30s %-26s by %s (%.1f s, build %.1f s)' % (
                b['name'], b['file'], ', '.join(b['tests']), took, built))

    # A worker takes whole groups: a file's breaks (its object is built
    # once per group). Biggest groups first, each to the least loaded
    # worker.
    groups = {}
    for b in sorted(live, key=lambda b: b['file']):
        groups.setdefault(b['file'], []).append(b)
    work = [[] for _ in trees]
    load = [0.0] * len(trees)
    for g in sorted(groups.values(), key=lambda g: -cost(g, specs)):
        k = load.index(min(load))
        work[k] += g
        load[k] += cost(g, specs)
    in_parallel([lambda k=k: [run_break(b, trees[k]) for b in work[k]]
                 for k in range(len(trees))])

    bad = len(survived) + len(stale) + len(broken) + len(nondeterministic)
    print('mutation: %d breaks: %d caught, %d survived, %d unsteady, '
          '%d stale, %d did not build; %.0f s' % (
              len(breaks), len(caught), len(survived), len(nondeterministic),
              len(stale), len(broken), time.monotonic() - t_start))
    print('mutation: %d breaks: %d caught, %d failed' % (
        len(breaks), len(caught), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
