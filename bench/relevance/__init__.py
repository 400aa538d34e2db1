"""Search relevance: nDCG@10 of a judged query set, per category and overall.

``queries.json`` holds queries people type (known works by title, artists, an artist with a
subject, misspellings, initials, the museums' spellings of names) with graded judgements of
what they should find, written by reading the museums' data, not the ranking: 3 for what the
query means (the artist named, the work titled), 2 for what is plainly wanted too (the named
artist's own works, the studies of a titled work), 1 for what is related (a work whose title
mentions the artist, another artist of the name), 0 for anything else. A judgement names:

- ``{"artist": ID, "grade": G}`` or ``{"artwork": ID, "grade": G}``: one resource;
- ``{"works_by": ARTIST_ID, "grade": G}``: every artwork of that artist, optionally only those
  whose title or series holds all the words of ``"title_has"`` (folded, as search folds
  them: Warhol's untitled prints of the series "Marilyn" are works on Marilyn).

A grade given twice to a result counts once, the highest. The runner loads nothing: it reads
the configured database (``INSTANCE_DIR`` for SQLite, ``DATABASE_URL`` for PostgreSQL), runs
each query through the query interface as a request does (a spelling correction is followed,
as clients follow the 302), and prints nDCG@10 per category and overall::

    INSTANCE_DIR=instance python -m bench.relevance [--verbose] [--only CATEGORY]
"""
