"""The API root links the user's applications (served by the authorization server) as the
reference API's root does: ``applications`` and the ``application`` template."""

from __future__ import annotations

import pytest
import requests
from uritemplate import expand

from common.models import Application
from common.stores import Stores
from tests.functional.catalog_support import issue_user_token
from tests.pages import Account
from tests.servers import LiveServer

pytestmark = pytest.mark.functional


def test_root_links_applications_and_their_template(
    combined_server: LiveServer, stores: Stores, account: Account
) -> None:
    api = f"{combined_server.url}/api"
    links = requests.get(api, timeout=10).json()["_links"]
    assert links["applications"] == {
        "href": f"{api}/applications{{?user_id,total_count,size,cursor}}",
        "templated": True,
    }
    assert links["application"] == {"href": f"{api}/applications/{{id}}", "templated": True}
    # Only a first-party application's user token reads the user's applications.
    with stores.sessions() as s, s.begin():
        s.get_one(Application, account.app_id).first_party = True
    headers = {"X-Access-Token": issue_user_token(stores, account.app_id, account.user_id)}
    listing = requests.get(
        expand(links["applications"]["href"], user_id=account.user_id, size=5),
        headers=headers,
        timeout=10,
    )
    assert listing.status_code == 200
    found = listing.json()["_embedded"]["applications"]
    assert [a["id"] for a in found] == [account.app_id]
    one = requests.get(
        expand(links["application"]["href"], id=account.app_id), headers=headers, timeout=10
    )
    assert one.status_code == 200 and one.json()["client_id"] == account.client_id
