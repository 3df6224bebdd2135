"""Theory made executable: constructions and bounds from the papers, checked numerically.

MLT (Mahdavi et al. 2024): `construct` (Theorem 1's constructive memorizer), `rank_bounds`
(Props 2 and 5), `saturation` (Fig 3). DPC modules are prefixed `dpc_`.
"""
