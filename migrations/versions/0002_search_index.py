"""search index

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

The documents and words tables are plain tables on both backends (see
resource_server/search/models.py). The full-text index beside them depends on the dialect:

- SQLite: an FTS5 table over the documents' folded text (external content, rowid = document
  id), an fts5vocab table over it, and an FTS5 trigram table over the words for spelling
  suggestions. The indexer rebuilds the FTS5 tables after writing documents; a trigger mirrors
  plain deletes of documents.
- PostgreSQL: the unaccent and pg_trgm extensions, a text search configuration that folds
  accents, two generated tsvector columns (title; title and body) with GIN indexes, and a
  trigram GIN index on the words.

The DDL is written out here, not imported from the application, so that this revision stays
what it was when later code changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_UP = [
    """CREATE VIRTUAL TABLE search_fts USING fts5(
        kind, title_terms, body_terms,
        content='search_documents', content_rowid='id',
        tokenize='unicode61 remove_diacritics 2')""",
    "CREATE VIRTUAL TABLE search_fts_vocab USING fts5vocab('search_fts', 'col')",
    # Contentless: it holds each word padded with spaces, so word starts and ends make trigrams.
    "CREATE VIRTUAL TABLE search_words_trigram USING fts5(word, content='', tokenize='trigram')",
    """CREATE TRIGGER search_documents_fts_delete AFTER DELETE ON search_documents BEGIN
        INSERT INTO search_fts(search_fts, rowid, kind, title_terms, body_terms)
        VALUES ('delete', old.id, old.kind, old.title_terms, old.body_terms);
    END""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS search_documents_fts_delete",
    "DROP TABLE IF EXISTS search_words_trigram",
    "DROP TABLE IF EXISTS search_fts_vocab",
    "DROP TABLE IF EXISTS search_fts",
]
POSTGRES_UP = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE TEXT SEARCH CONFIGURATION artcat_search (COPY = pg_catalog.simple)",
    """ALTER TEXT SEARCH CONFIGURATION artcat_search
        ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
        WITH unaccent, simple""",
    """ALTER TABLE search_documents
        ADD COLUMN title_tsv tsvector GENERATED ALWAYS AS
            (to_tsvector('artcat_search'::regconfig, title_terms)) STORED,
        ADD COLUMN tsv tsvector GENERATED ALWAYS AS
            (strip(to_tsvector('artcat_search'::regconfig, title_terms || ' ' || body_terms)))
            STORED""",
    "CREATE INDEX ix_search_documents_title_tsv ON search_documents USING gin (title_tsv)",
    "CREATE INDEX ix_search_documents_tsv ON search_documents USING gin (tsv)",
    "CREATE INDEX ix_search_words_word_trgm ON search_words USING gin (word gin_trgm_ops)",
]
# The extensions stay: other objects of the database may use them.
POSTGRES_DOWN = ["DROP TEXT SEARCH CONFIGURATION IF EXISTS artcat_search"]


def upgrade() -> None:
    """Apply this migration."""
    op.create_table('search_documents',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=False, nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('resource_id', sa.String(length=24), nullable=False),
    sa.Column('title', sa.Text(), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('thumbnail', sa.String(length=500), nullable=True),
    sa.Column('permalink', sa.String(length=500), nullable=True),
    sa.Column('popularity', sa.Float(), nullable=False),
    sa.Column('title_terms', sa.Text(), nullable=False),
    sa.Column('body_terms', sa.Text(), nullable=False),
    sa.Column('title_key', sa.String(length=200), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_search_documents'))
    )
    with op.batch_alter_table('search_documents', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_search_documents_kind_resource_id'), ['kind', 'resource_id'], unique=True)
        batch_op.create_index(batch_op.f('ix_search_documents_title_key_id'), ['title_key', 'id'], unique=False)

    op.create_table('search_words',
    sa.Column('id', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('word', sa.String(length=100), nullable=False),
    sa.Column('documents', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_search_words')),
    sa.UniqueConstraint('word', name=op.f('uq_search_words_word'))
    )
    dialect = op.get_bind().dialect.name
    for statement in {"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}.get(dialect, []):
        op.execute(statement)


def downgrade() -> None:
    """Revert this migration."""
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in SQLITE_DOWN:
            op.execute(statement)
    op.drop_table('search_words')
    with op.batch_alter_table('search_documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_search_documents_title_key_id'))
        batch_op.drop_index(batch_op.f('ix_search_documents_kind_resource_id'))

    op.drop_table('search_documents')
    if dialect == "postgresql":
        for statement in POSTGRES_DOWN:
            op.execute(statement)
