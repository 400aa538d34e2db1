"""The API kit both services share: errors, parameter parsing, paging and common messages.

Each service keeps only the mapping of these to its framework (``auth_server.errors`` for
Flask, ``resource_server.errors`` for Falcon).
"""
