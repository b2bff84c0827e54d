"""The Prefect-free compositions: one per product (pairs, ood), and the checks of a published release of
either kind. The flows, the benchmarks, `release judge` and the tests call these; none of them imports Prefect."""
