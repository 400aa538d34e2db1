"""Where the instance keeps its image files: a folder, or a bucket of an S3-compatible store.

Both stores hold the same keys (``<folder>/<version>.jpg``) and are written the same way: a
file is written whole or not at all (a folder's through a rename, S3's by its PUT), so a
reader never sees half an image and an interrupted fetch leaves nothing behind to trust.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from common.settings import Settings

# A key: one folder and one file name, of safe characters only (never ``..``, never a slash
# more): the serving route builds keys from the URL, and the folder store joins them to a path.
_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}/[A-Za-z0-9_-]{1,40}\.(?:jpg|svg)")


class ImageStoreError(ValueError):
    """A key outside the store's key format."""


def check_key(key: str) -> str:
    """Return the key when it is one the stores may hold, else raise ``ImageStoreError``."""
    if not _KEY.fullmatch(key):
        raise ImageStoreError(f"not an image key: {key!r}")
    return key


class ImageStore(Protocol):
    """Read and write image files by key."""

    def get(self, key: str) -> bytes | None:
        """Return a file's bytes, or None when there is none."""

    def put(self, key: str, data: bytes, content_type: str) -> None:
        """Write a file whole (replacing any file of that key)."""

    def exists(self, key: str) -> bool:
        """Tell whether a file of that key is stored."""


class FolderStore:
    """Image files in a folder of the local file system (the default: instance/images)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"FolderStore({str(self.root)!r})"

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def get(self, key: str) -> bytes | None:
        """Return a file's bytes, or None when there is none."""
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def put(self, key: str, data: bytes, content_type: str) -> None:
        """Write a file through a temporary file renamed into place (whole or not at all)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def exists(self, key: str) -> bool:
        """Tell whether a file of that key is stored."""
        return self._path(key).is_file()


class S3Store:
    """Image files in a bucket of S3 or of any S3-compatible store (MinIO, Ceph, R2...)."""

    def __init__(self, bucket: str, prefix: str = "", client: Any = None) -> None:
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.client = client

    def __repr__(self) -> str:
        return f"S3Store(s3://{self.bucket}/{self.prefix})"

    @classmethod
    def connect(cls, url: str, endpoint_url: str = "") -> S3Store:
        """Return the store of an ``s3://bucket/prefix`` URL, through boto3's client."""
        import boto3  # imported here: only an S3 store pays for it

        parts = urlsplit(url)
        if not parts.netloc:
            raise ImageStoreError(f"IMAGE_STORE={url!r} names no bucket (s3://bucket/prefix)")
        client = boto3.client("s3", endpoint_url=endpoint_url or None)
        return cls(parts.netloc, parts.path, client)

    def get(self, key: str) -> bytes | None:
        """Return an object's bytes, or None when there is none."""
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self.prefix + check_key(key))
        except self.client.exceptions.NoSuchKey:
            return None
        body: bytes = reply["Body"].read()
        return body

    def put(self, key: str, data: bytes, content_type: str) -> None:
        """Write an object (one PUT: whole or not at all)."""
        self.client.put_object(
            Bucket=self.bucket,
            Key=self.prefix + check_key(key),
            Body=data,
            ContentType=content_type,
        )

    def exists(self, key: str) -> bool:
        """Tell whether an object of that key is stored."""
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self.prefix + check_key(key))
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") in {"404", "NoSuchKey", "NotFound"}:
                return False
            raise
        return True


def open_store(settings: Settings) -> ImageStore:
    """Return the image store the settings name (IMAGE_STORE; a folder by default)."""
    where = settings.image_store.strip()
    if where.lower().startswith("s3://"):
        return S3Store.connect(where, settings.image_s3_endpoint_url)
    return FolderStore(Path(where) if where else settings.instance_dir / "images")
