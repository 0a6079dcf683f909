"""Fixtures for the ModelTools tests: a small catalogue, users, and no request log."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import pytest
from django.contrib.auth.models import Permission

from testproject.books.models import Author, Book

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@pytest.fixture(autouse=True)
def _no_request_log(no_request_log: None) -> None:
    """The request log writes to the database off the request path; these tests count
    queries, so it is off."""


@pytest.fixture
def catalogue(db: None) -> dict[str, Any]:
    """Two authors and five books; one book is unpublished."""
    herbert = Author.objects.create(name="Frank Herbert")
    le_guin = Author.objects.create(name="Ursula K. Le Guin")
    day = datetime.date(1965, 8, 1)
    rows = [
        ("9780441013593", "Dune", herbert, "9.99", day),
        ("9780593098233", "Dune Messiah", herbert, "8.50", day),
        ("9780441478125", "The Left Hand of Darkness", le_guin, "7.25", day),
        ("9780061054884", "The Dispossessed", le_guin, "6.00", day),
        ("9999999999999", "Unfinished Draft", le_guin, "0.00", None),
    ]
    books = [
        Book.objects.create(
            isbn=isbn, title=title, author=author, price=Decimal(price), published=published
        )
        for isbn, title, author, price, published in rows
    ]
    return {"herbert": herbert, "le_guin": le_guin, "books": books}


def with_perms(user: User, *codenames: str) -> User:
    """Give ``user`` the ``books`` permissions named by codename."""
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="books", codename__in=codenames)
    )
    return user


@pytest.fixture
def clerk(django_user_model: Any) -> User:
    """An active user with no permissions."""
    user: User = django_user_model.objects.create_user("clerk", password="x")
    return user


@pytest.fixture
def editor(django_user_model: Any) -> User:
    """A user who may add, change and delete books."""
    user: User = django_user_model.objects.create_user("editor", password="x")
    return with_perms(user, "add_book", "change_book", "delete_book", "view_book")


@pytest.fixture
def boss(django_user_model: Any) -> User:
    """A superuser (also staff)."""
    user: User = django_user_model.objects.create_superuser("boss", password="x")
    return user
