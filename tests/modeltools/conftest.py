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
    books = [
        Book.objects.create(
            isbn="9780441013593", title="Dune", author=herbert, price=Decimal("9.99"), published=day
        ),
        Book.objects.create(
            isbn="9780593098233",
            title="Dune Messiah",
            author=herbert,
            price=Decimal("8.50"),
            published=day,
        ),
        Book.objects.create(
            isbn="9780441478125",
            title="The Left Hand of Darkness",
            author=le_guin,
            price=Decimal("7.25"),
            published=day,
        ),
        Book.objects.create(
            isbn="9780061054884",
            title="The Dispossessed",
            author=le_guin,
            price=Decimal("6.00"),
            published=day,
        ),
        Book.objects.create(
            isbn="9999999999999", title="Unfinished Draft", author=le_guin, price=Decimal("0.00")
        ),
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
