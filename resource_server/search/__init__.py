"""The catalog's search endpoint: the resource (``resource``) and the query service
(``service``) over the shared engine in ``common.search``."""
