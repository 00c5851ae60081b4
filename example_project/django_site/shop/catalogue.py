"""The shop's few products: a constant, so the example needs no table for them (shared with the FastAPI app)."""

PRODUCTS = {
    "teapot": ("Teapot", 2400),
    "cups": ("Cups (4)", 1600),
    "sampler": ("Tea sampler", 950),
}


def price(cents: int) -> str:
    return f"{cents / 100:.2f}"
