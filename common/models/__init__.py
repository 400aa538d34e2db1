"""SQLAlchemy models of every resource; importing this package registers them all."""

from common.models.accounts import (
    Application,
    AuthorizationCode,
    Collection,
    CollectionItem,
    SocialIdentity,
    Token,
    User,
    UserDetail,
)
from common.models.base import Base
from common.models.catalog import (
    Artist,
    ArtistGene,
    ArtistSource,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    Edition,
    Gene,
    Image,
    Partner,
    PartnerUser,
    Profile,
)
from common.models.events import Bidder, Fair, Sale, SaleArtwork, Show, ShowArtwork

__all__ = [
    "Application",
    "Artist",
    "ArtistGene",
    "ArtistSource",
    "Artwork",
    "ArtworkArtist",
    "ArtworkGene",
    "AuthorizationCode",
    "Base",
    "Bidder",
    "Collection",
    "CollectionItem",
    "Edition",
    "Fair",
    "Gene",
    "Image",
    "Partner",
    "PartnerUser",
    "Profile",
    "Sale",
    "SaleArtwork",
    "Show",
    "ShowArtwork",
    "SocialIdentity",
    "Token",
    "User",
    "UserDetail",
]
