"""A cart kept in the session: {product id: quantity}, the kind of data sessions are for."""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from .catalogue import PRODUCTS, price


def index(request: HttpRequest) -> HttpResponse:
    products = [(key, name, price(cents)) for key, (name, cents) in PRODUCTS.items()]
    return render(request, "shop/index.html", {"products": products})


@require_POST
def add_to_cart(request: HttpRequest) -> HttpResponse:
    product = request.POST.get("product", "")
    if product not in PRODUCTS:
        messages.error(request, "No such product.")
        return redirect("shop")
    cart = request.session.get("cart", {})
    cart[product] = cart.get(product, 0) + 1
    request.session["cart"] = cart
    messages.success(request, f"Added {PRODUCTS[product][0]} to your cart.")
    return redirect("shop")


@require_POST
def empty_cart(request: HttpRequest) -> HttpResponse:
    request.session.pop("cart", None)
    messages.info(request, "Your cart is empty.")
    return redirect("cart")


def cart(request: HttpRequest) -> HttpResponse:
    items = request.session.get("cart", {})
    lines = [
        (PRODUCTS[key][0], count, price(PRODUCTS[key][1] * count)) for key, count in items.items() if key in PRODUCTS
    ]
    total = price(sum(PRODUCTS[key][1] * count for key, count in items.items() if key in PRODUCTS))
    return render(request, "shop/cart.html", {"lines": lines, "total": total})
