"""Fixed word lists the demo catalog draws its names, places and materials from."""

from __future__ import annotations

FIRST_NAMES_FEMALE = (
    "Ada", "Beatriz", "Clara", "Dagny", "Elena", "Greta", "Hana", "Ines", "Juno", "Lena",
    "Mira", "Noor", "Rosa", "Sofia", "Yara", "Zofia",
)  # fmt: skip
FIRST_NAMES_MALE = (
    "Anton", "Bruno", "Emil", "Farid", "Hugo", "Kenji", "Luis", "Marek", "Olu", "Pablo",
    "Tomas", "Viktor", "Yusuf", "Jonas",
)  # fmt: skip
LAST_NAMES = (
    "Albers", "Brandt", "Castell", "Duarte", "Ekwueme", "Falk", "Garnier", "Halloran",
    "Ishikawa", "Jovanović", "Kessler", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
    "Quintero", "Rossi", "Sandoval", "Tanaka", "Ulrich", "Valente", "Whitcombe", "Xu",
    "Yilmaz", "Zeller", "Ødegaard", "Núñez",
)  # fmt: skip
COLLECTIVES = ("Atelier Nord", "The Lantern Collective", "Studio Meridian")

# (hometown, nationality, region)
PLACES = (
    ("Lyon, France", "French", "Europe"),
    ("Osaka, Japan", "Japanese", "Asia"),
    ("Lagos, Nigeria", "Nigerian", "Africa"),
    ("Mexico City, Mexico", "Mexican", "Latin America"),
    ("Pittsburgh, PA, USA", "American", "North America"),
    ("Glasgow, Scotland", "British", "Europe"),
    ("Bergen, Norway", "Norwegian", "Europe"),
    ("Kraków, Poland", "Polish", "Europe"),
    ("São Paulo, Brazil", "Brazilian", "Latin America"),
    ("Seoul, South Korea", "Korean", "Asia"),
    ("Cairo, Egypt", "Egyptian", "Africa"),
    ("Melbourne, Australia", "Australian", "Oceania"),
    ("Toronto, Canada", "Canadian", "North America"),
    ("Barcelona, Spain", "Spanish", "Europe"),
    ("Düsseldorf, Germany", "German", "Europe"),
    ("Florence, Italy", "Italian", "Europe"),
)
CITIES = (
    "New York, NY, USA", "London, United Kingdom", "Berlin, Germany", "Paris, France",
    "Los Angeles, CA, USA", "Tokyo, Japan", "Mexico City, Mexico", "Lisbon, Portugal",
)  # fmt: skip

ADJECTIVES = (
    "Blue", "Quiet", "Broken", "Golden", "Northern", "Silent", "Red", "Distant", "Pale",
    "Burning", "Hidden", "Late", "Open", "Small", "Tidal", "White", "Violet", "Wandering",
)  # fmt: skip
NOUNS = (
    "Harbour", "Garden", "Window", "Figure", "Horizon", "Orchard", "Violin", "River", "Tower",
    "Bather", "Composition", "Interior", "Field", "Mirror", "Lighthouse", "Procession", "Vessel",
    "Bridge", "Forest", "Dancer", "Table", "Shore", "Staircase", "Moon",
)  # fmt: skip
PLACE_NAMES = (
    "Dusk", "Dawn", "Étretat", "the Lake", "Noon", "the Station", "Low Tide", "the Market",
)  # fmt: skip
THEMES = (
    "Between Light and Matter", "The Long Afternoon", "Soft Machines", "After the Flood",
    "Common Ground", "Lines of Flight", "A Room of Echoes", "Salt and Iron", "New Horizons",
    "Things Held Close", "The Weight of Air", "Borrowed Landscapes",
)  # fmt: skip

# category -> (media, shape kinds drawn from: flat, deep, round, unknown)
CATEGORIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Painting": (
        ("Oil on canvas", "Acrylic on canvas", "Oil on panel", "Tempera on board"),
        ("flat", "flat", "flat", "round"),
    ),
    "Sculpture": (
        ("Bronze", "Carved marble", "Painted steel", "Cast aluminium", "Glazed ceramic"),
        ("deep", "deep", "deep", "round", "unknown"),
    ),
    "Photography": (
        ("Gelatin silver print", "Chromogenic print", "Archival pigment print", "Platinum print"),
        ("flat",),
    ),
    "Print": (
        ("Lithograph", "Etching and aquatint", "Screenprint on wove paper", "Woodcut"),
        ("flat",),
    ),
    "Drawing, Collage or other Work on Paper": (
        ("Graphite on paper", "Charcoal on paper", "Ink and wash on paper", "Collage"),
        ("flat", "flat", "unknown"),
    ),
    "Design/Decorative Art": (
        ("Blown glass", "Porcelain", "Walnut and brass"),
        ("deep", "round"),
    ),
    "Textile Arts": (("Wool tapestry", "Embroidered silk"), ("flat",)),
    "Mixed Media": (("Mixed media on board", "Found objects and resin"), ("flat", "deep")),
    "Installation": (("Neon, wire and transformer", "Site-specific installation"), ("unknown",)),
    "Video/Film/Animation": (("Single-channel video, colour, sound",), ("unknown",)),
}
# Categories of which a work is often made in editions.
EDITIONED = ("Print", "Photography", "Sculpture")

# (name, family, description)
GENES = (
    ("Impressionism", "Styles and Movements", "Loose brushwork and the play of outdoor light."),
    ("Cubism", "Styles and Movements", "Objects broken up and reassembled from many viewpoints."),
    ("Surrealism", "Styles and Movements", "Dream images and unexpected juxtapositions."),
    ("Abstract Expressionism", "Styles and Movements", "Gesture and scale after 1945."),
    ("Pop Art", "Styles and Movements", "Images borrowed from advertising and mass media."),
    ("Minimalism", "Styles and Movements", "Simple geometric forms and industrial materials."),
    ("Oil Painting", "Medium and Techniques", "Pigment bound in drying oil."),
    ("Photography", "Medium and Techniques", "Images made with light on a sensitive surface."),
    ("Printmaking", "Medium and Techniques", "Images transferred from a matrix, in editions."),
    ("Bronze", "Medium and Techniques", "Sculpture cast in copper alloy."),
    ("Textile", "Medium and Techniques", "Woven, knitted and embroidered works."),
    ("Landscapes", "Subject Matter", "Views of land, sea and sky."),
    ("Portraits", "Subject Matter", "Likenesses of people."),
    ("Still Life", "Subject Matter", "Arrangements of everyday objects."),
    ("Architecture", "Subject Matter", "Buildings and built spaces."),
    ("The Sea", "Subject Matter", "Coasts, harbours and open water."),
)
MEDIUM_GENE = {
    "Painting": "Oil Painting",
    "Photography": "Photography",
    "Print": "Printmaking",
    "Sculpture": "Bronze",
    "Textile Arts": "Textile",
}

GALLERY_PATTERNS = ("{last} Gallery", "Galerie {last}", "{adj} {noun} Projects", "{last} Fine Art")
INSTITUTION_PATTERNS = (
    "{city} Museum of Art",
    "{city} Kunsthalle",
    "Museum of Contemporary Art {city}",
)
FAIR_NAMES = ("Harbourfront Art Fair", "Meridian Contemporary", "Northlight Print Fair")
SALE_NAMES = (
    "Evening Sale: Modern and Contemporary",
    "Online Sale: Prints and Multiples",
    "Photographs",
    "Benefit Auction",
    "Design Online",
    "Spring Exhibition Sale",
)
