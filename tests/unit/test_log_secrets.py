"""The suite's collector of secrets (``tests.functional.log_secrets``) finds what it must."""

from __future__ import annotations

import json

import requests

from tests.functional import log_secrets


def exchange(body: object) -> tuple[requests.PreparedRequest, requests.Response]:
    request = requests.Request("POST", "http://127.0.0.1:1/oauth2/access_token").prepare()
    response = requests.Response()
    response.status_code = 200
    response.headers["Content-Type"] = "application/json"
    response._content = json.dumps(body).encode()  # a response built by hand
    return request, response


def test_a_token_nested_in_a_json_answer_is_kept() -> None:
    token = "nested-token-value-8f3a9c2b71d4e6"
    log_secrets.harvest(*exchange({"_embedded": {"tokens": [{"access_token": token}]}}))
    assert token in log_secrets.ISSUED


def test_a_value_under_another_key_is_not_taken_for_a_secret() -> None:
    value = "just-a-title-that-says-token-9c2b71d4"
    log_secrets.harvest(*exchange({"title": value, "note": '"token"'}))
    assert value not in log_secrets.SECRETS
