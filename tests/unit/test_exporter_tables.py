# SPDX-License-Identifier: BSD-3-Clause
"""ewyk-exporter's tables, without an ewykd: every telemetry key it maps
is exported at its own value, converted only by the unit its name ends in
(_ns, _us, _ms to seconds), and a counter's metric ends in _total, a
time's in _seconds (_seconds_total). Each reply goes through the exporter's own collect
functions, as a scrape does.

Usage: test_exporter_tables.py PATH/TO/ewyk-exporter.py"""
import importlib.machinery
import importlib.util
import sys
import unittest

UNITS = {"_ns": 1e9, "_us": 1e6, "_ms": 1e3}


def load(path):
    loader = importlib.machinery.SourceFileLoader("ewyk_exporter", path)
    spec = importlib.util.spec_from_loader("ewyk_exporter", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def unit_of(key):
    return next((s for suffix, s in UNITS.items() if key.endswith(suffix)), 1)


def samples(fams, name):
    return [s for s in fams.fams[name].samples if s.name in (name, name + "_total")]


class Tables(unittest.TestCase):
    def each_entry(self):
        for tables in (ex.FLAT, ex.PER_SHARD):
            for cmd, table in tables.items():
                for key, entry in table.items():
                    yield cmd, key, entry

    def test_scale_is_the_unit_of_the_key(self):
        for cmd, key, (name, kind, _doc, scale) in self.each_entry():
            with self.subTest(cmd=cmd, key=key):
                self.assertEqual(scale, unit_of(key))
                if scale != 1:
                    self.assertTrue(name.endswith(("_seconds", "_seconds_total")), name)
                if kind == ex.C:
                    self.assertTrue(name.endswith("_total"), name)

    def test_flat_replies_keep_their_values(self):
        for cmd, table in ex.FLAT.items():
            # Distinct values, each a multiple of every unit.
            reply = {k: 3e9 * (i + 1) for i, k in enumerate(table)}
            fams = ex.Families()
            ex.flat(fams, cmd, reply)
            for key, (name, _kind, _doc, _scale) in table.items():
                with self.subTest(cmd=cmd, key=key):
                    got = [s.value for s in samples(fams, name)]
                    self.assertEqual(got, [reply[key] / unit_of(key)])

    def test_per_shard_replies_keep_their_values(self):
        for cmd, table in ex.PER_SHARD.items():
            reply = {f"shard_{n}": {k: 3e9 * (i + 1) + n for i, k in enumerate(table)}
                     for n in (0, 1)}
            fams = ex.Families()
            ex.collect_per_shard(fams, cmd, reply)
            for key, (name, _kind, _doc, _scale) in table.items():
                with self.subTest(cmd=cmd, key=key):
                    got = sorted((s.labels["shard"], s.value) for s in samples(fams, name)
                                 if "mode" not in s.labels and "route" not in s.labels)
                    want = sorted((str(n), reply[f"shard_{n}"][key] / unit_of(key))
                                  for n in (0, 1))
                    self.assertEqual(got, want)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.rsplit("\n", 1)[-1])
    ex = load(sys.argv.pop(1))
    unittest.main(verbosity=1)
