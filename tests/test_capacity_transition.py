"""The capacity estimator: T₅₀ from a fitted transition (coverage on simulated seeds, refusals), the
budget curve's equivalence test, the search in rounds of k sizes, and the censored laws."""

import math

import numpy as np
import pytest

from memcap.capacity import convergence, laws, search, transition

TRUE_T50, TRUE_SCALE = 500.0, 0.2


def bracketed(threshold: float, ratio: float, rng) -> transition.Interval:
    """A seed's bracket around its threshold on a geometric grid of this ratio (a random offset)."""
    step = math.log(ratio)
    offset = rng.uniform(0, step)
    k = math.floor((math.log(threshold) - offset) / step)
    low = offset + k * step
    return transition.Interval(low, low + step)


def simulated_fits(seeds: int, truth: float, sims: int = 200, ratio: float = 1.2, seed: int = 0):
    rng = np.random.default_rng(seed)
    for _ in range(sims):
        thresholds = transition.simulate_thresholds(truth, TRUE_SCALE, seeds, rng)
        yield transition.fit([bracketed(t, ratio, rng) for t in thresholds])


@pytest.mark.parametrize("seeds", [5, 10])
def test_t50_s_interval_covers_the_truth_and_not_a_t50_half_again_as_large(seeds):
    fits = list(simulated_fits(seeds, TRUE_T50))
    covered = np.mean([f.low <= math.log(TRUE_T50) <= f.high for f in fits])
    off = np.mean([f.low <= math.log(1.5 * TRUE_T50) <= f.high for f in fits])
    assert covered >= 0.90, covered
    assert off <= 0.6 if seeds == 5 else off <= 0.2, off      # the interval has power: 1.5x off is mostly outside


def test_a_transition_s_numbers_are_positive_and_ordered():
    rng = np.random.default_rng(1)
    outcomes = {}
    for s, t in enumerate(transition.simulate_thresholds(TRUE_T50, TRUE_SCALE, 6, rng)):
        outcomes[s] = {T: T < t for T in (100, 200, 300, 400, 500, 600, 800, 1200, 2000)}
    tr = transition.transition(outcomes)
    assert 0 < tr.t50_low < tr.t50 < tr.t50_high and 0 < tr.t90 < tr.t50
    assert tr.width > 1 and tr.width_high >= tr.width and tr.seeds == 6


def test_seeds_that_agree_give_a_sharp_transition_inside_their_common_bracket():
    tr = transition.transition({s: {300: True, 330: False} for s in range(5)})
    assert tr.sharp and 300 <= tr.t50_low < tr.t50 < tr.t50_high <= 331
    assert tr.width_high < 2


@pytest.mark.parametrize("outcomes, says", [
    ({0: {100: True, 200: True}, 1: {100: True}}, "every probe passed"),
    ({0: {100: False}, 1: {50: False, 10: False}}, "every probe failed"),
    ({0: {100: True, 200: False}}, "at least 2")])
def test_the_estimator_refuses_without_a_transition(outcomes, says):
    with pytest.raises(transition.NoTransition, match=says):
        transition.transition(outcomes)


# ---- convergence: two one-sided tests on the rise per doubling --------------------------------------

def seeds_at_two_budgets(rise: float, seeds: int, spread: float, rng, resolution: float = 1.05):
    """{seed: {T: passed}} at B and 2B: each seed's threshold at 2B is its own at B times `rise` (and a
    seed's own noise of scale `spread`), each probed on a grid of `resolution`."""
    before, after = {}, {}
    for s, t in enumerate(transition.simulate_thresholds(TRUE_T50, TRUE_SCALE, seeds, rng)):
        t2 = t * rise * math.exp(spread * rng.standard_normal())
        for out, thr in ((before, t), (after, t2)):
            iv = bracketed(thr, resolution, rng)
            out[s] = {round(math.exp(iv.low)) + 0: True, round(math.exp(iv.high)): False}
    return before, after


@pytest.mark.parametrize("rise, seeds, spread, verdict", [
    (1.0, 6, 0.005, convergence.CONVERGED),       # a flat curve
    (1.2, 6, 0.005, convergence.RISING),          # +20% a doubling
    (1.0, 3, 0.15, convergence.UNDECIDED)])       # three noisy seeds cannot say
def test_the_rise_per_doubling_is_judged_by_two_one_sided_tests(rise, seeds, spread, verdict):
    r = convergence.rise(*seeds_at_two_budgets(rise, seeds, spread, np.random.default_rng(2)))
    assert r.verdict == verdict, r
    assert r.pairs == seeds and 0 < r.low <= r.ratio <= r.high


def test_the_equivalence_rule_itself():
    assert convergence.verdict(0.95, 1.05) == convergence.CONVERGED
    assert convergence.verdict(0.95, 1.12) == convergence.UNDECIDED       # not inside ±10%
    assert convergence.verdict(1.02, 1.3) == convergence.RISING
    assert convergence.verdict(0.8, 1.3) == convergence.UNDECIDED


# ---- the search: k sizes a round, seeds added by the data -------------------------------------------

def preset(**changes):
    return {"seeds": list(range(10)), "min_seeds": 5, "width": 1.5, "threshold": 0.99, "grow": 2, "t_min": 2,
            "pool": 65536, "rel_tol": 0.05, "max_probes": 20, "budget_factor": 1, **changes}


def final_brackets(p, rounds):
    outcomes = {}
    for r in rounds:
        for H, dh, s, T, b in r:
            outcomes.setdefault(s, {})[T] = T <= 700
    return {s: search.bracket(o) for s, o in outcomes.items()}


def test_rounds_of_k_sizes_find_bisection_s_bracket_in_fewer_rounds():
    p = preset(width=1.0001)          # a deterministic oracle: every seed's bracket to rel_tol either way
    passes = lambda H, dh, s, T, b: T <= 700                                     # noqa: E731
    bisect = search.simulate(p, {(2, 4): 100}, passes, k=1)
    packed = search.simulate(p, {(2, 4): 100}, passes)
    assert len(packed) <= len(bisect) / 2
    for rounds in (bisect, packed):
        brackets = final_brackets(p, rounds)
        assert len(brackets) == 10                                               # every seed in: out of seeds
        for b in brackets.values():
            assert b.low <= 700 < b.high and b.high - b.low <= max(1, 0.05 * b.low)
    assert all(len(r) >= 12 for r in packed[:2])                                 # a round fills a pack


def test_a_search_stops_at_the_width_with_five_seeds_and_adds_seeds_while_wider():
    rng = np.random.default_rng(4)
    sharp = {s: t for s, t in enumerate(transition.simulate_thresholds(700, 0.02, 10, rng))}
    wide = {s: t for s, t in enumerate(transition.simulate_thresholds(700, 0.6, 10, rng))}
    for thresholds, seeds_used in ((sharp, {5}), (wide, set(range(6, 11)))):
        passes = lambda H, dh, s, T, b, th=thresholds: T < th[s]                 # noqa: E731
        rounds = search.simulate(preset(), {(2, 4): 100}, passes)
        outcomes = {}
        for r in rounds:
            for H, dh, s, T, b in r:
                outcomes.setdefault(s, {})[T] = passes(H, dh, s, T, b)
        st = search.state(outcomes and {s: {1: o} for s, o in outcomes.items()}, preset(), 1)
        assert len(outcomes) in seeds_used, len(outcomes)
        assert st.verdict in (search.REACHED, search.OUT_OF_SEEDS)
        assert (st.verdict == search.REACHED) == (st.fit.ratio <= 1.5)


# ---- the laws: lower bounds as censored observations --------------------------------------------------

def law_table(alpha: float, censor_from: float, rng):
    """Rows T₅₀ = 20·H^α (log-normal scatter 0.1, each estimate ±15%); rows at H >= censor_from enter
    as lower bounds at half their value (their search stopped short: more steps memorize more)."""
    out = []
    for H in (1, 2, 4, 8, 16, 32):
        t = 20 * H ** alpha * math.exp(0.1 * rng.standard_normal())
        lower = H >= censor_from
        shown = t / 2 if lower else t
        out.append(laws.point(shown, shown / 1.15, shown * 1.15, lower, H))
    return out


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_a_censored_law_recovers_alpha_where_lower_bounds_read_as_values_would_not(alpha):
    hits, dropped_hits = 0, 0
    for i in range(20):
        rows = law_table(alpha, 16, np.random.default_rng(i))
        law = laws.fit(rows)
        hits += law.low <= alpha <= law.high
        assert law.censored == 2 and law.points == 6
        biased = laws.fit([r if not r.lower else laws.Point(r.x, r.y, r.se, False) for r in rows])  # bounds as values
        dropped_hits += biased.low <= alpha <= biased.high
    assert hits >= 17 and dropped_hits <= 10


def test_a_law_needs_enough_rows_and_a_measured_one():
    rng = np.random.default_rng(0)
    rows = law_table(1.0, 100, rng)
    assert laws.fit(rows[:3]) is None                               # 3 rows for 2 coefficients: no interval
    assert laws.fit([laws.Point(r.x, r.y, r.se, True) for r in rows]) is None    # every row a lower bound
    q = laws.ratio(rows[1], rows[0])
    assert 0 < q[1] < q[0] < q[2]
