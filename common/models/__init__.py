"""SQLAlchemy models of every resource; importing this package registers them all."""

from common.models.accounts import (
    Application,
    AuthorizationCode,
    Collection,
    CollectionItem,
    SigningKey,
    SocialIdentity,
    Token,
    User,
    UserDetail,
)
from common.models.base import Base
from common.models.catalog import (
    ARTIST_DESCRIPTION,
    Artist,
    ArtistGene,
    ArtistSource,
    Artwork,
    ArtworkArtist,
    ArtworkGene,
    DemoLoad,
    Edition,
    Gene,
    Image,
    Partner,
    PartnerUser,
    Profile,
)
from common.models.device import DeviceAuthorization
from common.models.events import Bidder, Fair, Sale, SaleArtwork, Show, ShowArtwork
from common.models.mirrors import ImageMirror
from common.models.refresh import RefreshFamily, RefreshToken
from common.models.registration import ClientRegistration, InitialAccessToken

__all__ = [
    "ARTIST_DESCRIPTION",
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
    "ClientRegistration",
    "Collection",
    "CollectionItem",
    "DemoLoad",
    "DeviceAuthorization",
    "Edition",
    "Fair",
    "Gene",
    "Image",
    "ImageMirror",
    "InitialAccessToken",
    "Partner",
    "PartnerUser",
    "Profile",
    "RefreshFamily",
    "RefreshToken",
    "Sale",
    "SaleArtwork",
    "Show",
    "ShowArtwork",
    "SigningKey",
    "SocialIdentity",
    "Token",
    "User",
    "UserDetail",
]
