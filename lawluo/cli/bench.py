"""``lawluo bench …``: the benchmarks, one module each; adding one is a module and a line in ``BENCHES``."""

from __future__ import annotations

from . import bench_checker, bench_retrieval, bench_tolc

#: The ``bench`` subcommands, in the order ``bench --help`` lists them.
BENCHES = (bench_retrieval, bench_tolc, bench_checker)


def add_parser(subparsers) -> None:
    """``bench`` and its subcommands (each bench module registers its own, with its ``run``)."""
    bench = subparsers.add_parser(
        "bench", help="benchmarks: statute retrieval (R@k, MRR, nDCG) or ToLC against simulated clients"
    )
    benches = bench.add_subparsers(dest="target", required=True)
    for module in BENCHES:
        module.add_parser(benches)
