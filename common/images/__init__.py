"""The instance's own images: the store that keeps them, their versions, the demo's pictures
and the placeholder drawn where an image is missing."""
