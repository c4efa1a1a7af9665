"""Run only by tests/test_tiers.py (its name is not collected by itself): a quick test that asks for a real fixture at
run time, which the tier guard must fail."""


def test_asks_for_a_real_model_at_run_time(request) -> None:
    request.getfixturevalue("bundled_encoder")
