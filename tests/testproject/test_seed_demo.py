"""``manage.py seed_demo``: the demo data scripts/demo and the live tests rely on."""

from __future__ import annotations

from functools import partial

import pytest
from django.contrib.auth import get_user_model

from testproject.books.management.commands.seed_demo import BOOKS
from testproject.books.models import Author, Book
from tests.commands import command_output

pytestmark = pytest.mark.django_db

seed = partial(command_output, "seed_demo")


def test_seed_demo_adds_every_book_once_even_when_run_twice():
    seed()
    seed()

    assert Book.objects.count() == len(BOOKS)
    assert Author.objects.filter(name="Ursula K. Le Guin").count() == 1
    dune = Book.objects.get(isbn="9780441172719")
    assert (dune.title, dune.author.name, str(dune.price)) == ("Dune", "Frank Herbert", "10.99")


def test_seed_demo_leaves_users_alone_without_admin_flag():
    seed()

    assert not get_user_model().objects.exists()


def test_seed_demo_admin_creates_the_demo_superuser_only_if_missing():
    seed("--admin")
    seed("--admin")

    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser
    assert admin.check_password("admin")
    assert get_user_model().objects.count() == 1
