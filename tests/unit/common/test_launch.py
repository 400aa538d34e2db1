import pytest

from artcat.launch import wants_demo
from common.settings import AuthSettings


@pytest.mark.parametrize(
    ("service", "environment", "no_demo", "expected"),
    [
        ("all", "development", False, True),
        ("all", "development", True, False),
        ("auth", "development", False, False),
        ("resource", "development", False, False),
        ("all", "staging", False, True),
        # A production instance never gets the demo user and application (the banner prints
        # their credentials), whatever the command line says.
        ("all", "production", False, False),
    ],
)
def test_the_demo_loads_only_for_serve_all_and_never_in_production(
    service: str, environment: str, no_demo: bool, expected: bool
) -> None:
    settings = AuthSettings(
        secret_key="k", environment=environment, public_url="https://art.example.org"
    )
    assert wants_demo(service, settings, no_demo=no_demo) is expected
