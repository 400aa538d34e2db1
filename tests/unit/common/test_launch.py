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


def test_the_banner_says_how_to_see_the_demo_credentials_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from artcat.launch import print_banner
    from artcat.loaders.demo import DemoCredentials

    demo = DemoCredentials("cid", "secret", "demo@example.org", "pw")
    print_banner("all", "http://127.0.0.1:8001", demo)
    out = capsys.readouterr().out
    assert "artcat demo credentials" in out and "artcat apps list" in out
    assert "http://127.0.0.1:8001/oauth2/callback" in out
