"""The query parameters of the browser sign-in (``/oauth2/authorize``), named in one place: the
auth service reads them, and the OpenAPI document (served by the resource service) lists them."""

AUTHORIZE_PARAMS = (
    "client_id",
    "redirect_uri",
    "response_type",
    "state",
    "scope",
    "code_challenge",
    "code_challenge_method",
)
