"""The seeded tie draw made in C (``_score.draw_below``/``nth_tie``, ``seeded_tie``) is NumPy's
``Generator.integers`` draw: the same numbers and the same generator state after, for every bit
generator NumPy ships, so a seeded run picks the same nodes as one drawing through NumPy."""
import numpy as np
import pytest

from fastsched._kernels._score import MAX_TIES, draw_below, nth_tie
from fastsched.runtime.compiled_cycle import seeded_tie

BIT_GENERATORS = (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64)
BOUNDS = (1, 2, 3, 5, 7, 64, 100, 1000, 4999, 2**16 + 1, 2**31 - 1, 2**31 + 3, 2**32 - 2)


@pytest.mark.parametrize("bit_generator", BIT_GENERATORS, ids=lambda b: b.__name__)
def test_draw_below_is_generator_integers(bit_generator):
    for seed in range(40):
        ours, numpy_ = np.random.Generator(bit_generator(seed)), np.random.Generator(bit_generator(seed))
        drawn, expected = [], []
        for n in BOUNDS * 3:
            drawn.append(draw_below(ours.bit_generator.capsule, n))
            expected.append(int(numpy_.integers(n)))
            # other draws between ties (the 32-bit buffer of PCG64 must stay in step)
            if n % 2:
                assert ours.random() == numpy_.random()
        assert drawn == expected
        # the same state after: the next draws agree, 32-bit (buffered) and 64-bit ones
        assert ours.integers(7, size=5).tolist() == numpy_.integers(7, size=5).tolist()
        assert ours.integers(2**40, size=3).tolist() == numpy_.integers(2**40, size=3).tolist()


def test_draw_below_refuses_out_of_range_bounds():
    capsule = np.random.default_rng(0).bit_generator.capsule
    with pytest.raises(ValueError, match="n must be in"):
        draw_below(capsule, 0)
    with pytest.raises(ValueError, match="n must be in"):
        draw_below(capsule, MAX_TIES + 1)


def test_nth_tie_picks_the_drawn_tie_within_the_first_n():
    totals = np.array([5, 9, 9, 1, 9, 9, 9], dtype=np.int64)  # the last two lie past n=5
    for seed in range(200):
        k = int(np.random.default_rng(seed).integers(3))
        expected = [1, 2, 4][k]
        assert nth_tie(totals, 5, 9, 3, np.random.default_rng(seed).bit_generator.capsule) == expected
    with pytest.raises(ValueError, match="ties must be in"):
        nth_tie(totals, 5, 9, 1, np.random.default_rng(0).bit_generator.capsule)
    with pytest.raises(ValueError, match="n must be in"):
        nth_tie(totals, 8, 9, 2, np.random.default_rng(0).bit_generator.capsule)


def test_seeded_tie_matches_numpy_and_serves_other_rngs():
    rng_totals = np.random.default_rng(7)
    for seed in range(300):
        totals = rng_totals.integers(0, 4, size=50).astype(np.int64)
        n = int(rng_totals.integers(2, 51))
        best = int(totals[:n].max())
        ties = int((totals[:n] == best).sum())
        if ties < 2:
            continue
        ours, numpy_ = np.random.default_rng(seed), np.random.default_rng(seed)
        expected = int(np.flatnonzero(totals[:n] == best)[numpy_.integers(ties)])
        assert seeded_tie(totals, n, best, ties, ours) == expected
        assert ours.bit_generator.state == numpy_.bit_generator.state

    class Fixed:  # any object with integers(): called as it is
        def integers(self, n):
            return n - 1

    totals = np.array([3, 1, 3, 3], dtype=np.int64)
    assert seeded_tie(totals, 4, 3, 3, Fixed()) == 3
