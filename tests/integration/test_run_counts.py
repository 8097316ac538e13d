# SPDX-License-Identifier: BSD-3-Clause
"""tests/run.sh counts a stage from meson's summary, and a stage that ran
nothing is a failure, not "0 passed, 0 failed"."""
import os
import subprocess

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def counts(tmp_path, log):
    f = tmp_path / "log"
    f.write_text(log)
    r = subprocess.run(["bash", "-c", f'. "{ROOT}/tests/counts.sh"; meson_counts "{f}"'],
                       capture_output=True, text=True, timeout=10)
    return r.stdout.strip(), r.stderr


def test_a_stage_is_counted_from_the_summary(tmp_path):
    assert counts(tmp_path, "Ok: 30\nFail: 2\nTimeout: 1\n")[0] == "30 3"


def test_a_stage_that_ran_nothing_fails(tmp_path):
    out, err = counts(tmp_path, "Ok: 0\nFail: 0\n")
    assert out == "0 1" and "ran no test" in err
    assert counts(tmp_path, "meson: no tests defined\n")[0] == "0 1"


def mutation(tmp_path, log):
    f = tmp_path / "log"
    f.write_text(log)
    r = subprocess.run(["bash", "-c", f'. "{ROOT}/tests/counts.sh"; mutation_counts "{f}"'],
                       capture_output=True, text=True, timeout=10)
    return r.stdout.strip(), r.stderr


def test_the_mutation_run_counts_each_break(tmp_path):
    log = ("caught    a\nSURVIVED  b\n"
           "mutation: 60 breaks: 58 caught, 1 survived, 1 stale, 0 did not build; 200 s\n"
           "mutation: 60 breaks: 58 caught, 2 failed\n")
    assert mutation(tmp_path, log)[0] == "58 2"


def test_a_mutation_run_without_summary_or_breaks_fails(tmp_path):
    out, err = mutation(tmp_path, "Traceback (most recent call last):\n")
    assert out == "0 1" and "no summary" in err
    assert mutation(tmp_path, "mutation: 0 breaks: 0 caught, 0 failed\n")[0] == "0 1"
    assert mutation(tmp_path, "mutation: 0 breaks: 0 caught, 1 failed\n")[0] == "0 1"


def mutation_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "mutation_run", os.path.join(ROOT, "tests", "mutation", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_catcher_that_fails_by_chance_is_unsteady_not_caught():
    judge = mutation_module().judge
    # Every catcher failed on the break, every time: caught.
    assert judge({"a": [False], "b:x": [False, False]}) == ("caught", [])
    # One passed: the break survived.
    assert judge({"a": [True], "b": [False]}) == ("survived", ["a"])
    # A timing catcher that failed once and passed once caught nothing
    # for sure, whichever run came first.
    assert judge({"a": [False], "s": [False, True]}) == ("unsteady", ["s"])
    assert judge({"s": [True, False]}) == ("unsteady", ["s"])


def test_stress_and_integration_catchers_run_twice():
    m = mutation_module()
    tests = {"exec_stress": {"cmd": ["/b/tests/x"], "suite": ["ewyk:unit", "ewyk:tsan"]},
             "exec_decision": {"cmd": ["/b/tests/y"], "suite": ["ewyk:unit"]}}
    assert m.Spec("exec_stress:stress_steal", tests, "/b").timing
    assert not m.Spec("exec_decision:steal_stuck_owner", tests, "/b").timing
    assert m.Spec("pytest:tests/integration/test_x.py::test_y", tests, "/b").timing


def test_a_steady_break_runs_its_integration_catcher_once_only():
    m = mutation_module()
    tests = {"exec_stress": {"cmd": ["/b/tests/x"], "suite": ["ewyk:unit", "ewyk:tsan"]}}
    stress = m.Spec("exec_stress:stress_steal", tests, "/b")
    integration = m.Spec("pytest:tests/integration/test_x.py::test_y", tests, "/b")
    assert m.runs_on_break({"steady": False}, integration) == 2
    assert m.runs_on_break({"steady": True}, integration) == 1
    assert m.runs_on_break({"steady": True}, stress) == 2


def test_the_control_runs_a_cmocka_program_once_for_all_its_filters():
    m = mutation_module()
    tests = {"tcp_edges": {"cmd": ["/b/tests/e"], "suite": ["ewyk:unit"]},
             "store": {"cmd": ["/b/tests/s"], "suite": ["ewyk:unit"]},
             "fuzz_replay": {"cmd": ["/b/tests/f", "corpus"], "suite": ["ewyk:unit"]}}
    names = ["tcp_edges:test_rst_*", "tcp_edges:test_ack_?", "tcp_edges", "store:test_x",
             "fuzz_replay@tests/fuzz/one", "pytest:tests/integration/test_x.py::test_y"]
    specs = {n: m.Spec(n, tests, "/b") for n in names}
    units = m.control_units(specs, set(names))
    by_names = {tuple(sorted(ns)): whole for whole, ns in units}
    assert sorted(by_names) == sorted([
        ("tcp_edges", "tcp_edges:test_ack_?", "tcp_edges:test_rst_*"), ("store:test_x",),
        ("fuzz_replay@tests/fuzz/one",), ("pytest:tests/integration/test_x.py::test_y",)])
    # The program runs whole (no filter), the filters' specs untouched.
    whole = by_names[("tcp_edges", "tcp_edges:test_ack_?", "tcp_edges:test_rst_*")]
    assert whole.filter is None and whole.cmd == ["/b/tests/e"]
    assert specs["tcp_edges:test_rst_*"].filter == "test_rst_*"
    assert by_names[("store:test_x",)].filter is None


def test_a_filter_counts_the_cases_it_selects_in_the_whole_run():
    count = mutation_module().count_cases
    log = ("[==========] Running 3 test(s).\n[ RUN      ] test_rst_in_window\n"
           "[       OK ] test_rst_in_window\n[ RUN      ] test_rst_old\n"
           "[ RUN      ] test_ack_a\n[==========] 3 test(s) run.\n")
    assert count(log, "test_rst_*") == 2
    assert count(log, "test_ack_?") == 1
    assert count(log, "test_ack") == 0	# a glob matches whole names only
    assert count(log, "*") == 3


def test_the_soak_counts_only_its_own_answers_that_were_not_2xx():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "soak", os.path.join(ROOT, "app", "bench", "soak.py"))
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    # The capacity probe, flat out, had a 503 and a 408: figures, not
    # failures. The soak that follows adds a 503 of its own.
    before = {"200": 1000, "503": 1, "408": 1}
    assert soak.not_2xx({"requests_by_status_reqs": {"200": 5000, "503": 1, "408": 1}},
                        before) == {}
    assert soak.not_2xx({"requests_by_status_reqs": {"200": 5000, "503": 2, "408": 1,
                                                     "201": 7}}, before) == {"503": 1}
