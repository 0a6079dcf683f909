"""``manage.py seed_demo``: a few authors and books for the demo bookshop.

Idempotent: books are keyed by ISBN, so running it twice changes nothing. With
``--admin`` it also creates the superuser ``admin`` (password ``admin``) if it is missing;
that account is for a local demo only.
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from testproject.books.models import Author, Book

#: (ISBN, title, author, price, publication date)
BOOKS: tuple[tuple[str, str, str, str, str], ...] = (
    ("9780141439518", "Pride and Prejudice", "Jane Austen", "7.99", "1813-01-28"),
    ("9780141439587", "Emma", "Jane Austen", "8.99", "1815-12-23"),
    ("9780141439471", "Frankenstein", "Mary Shelley", "6.99", "1818-01-01"),
    ("9780441172719", "Dune", "Frank Herbert", "10.99", "1965-08-01"),
    ("9780441478125", "The Left Hand of Darkness", "Ursula K. Le Guin", "9.99", "1969-03-01"),
    ("9780547773742", "A Wizard of Earthsea", "Ursula K. Le Guin", "8.99", "1968-01-01"),
    (
        "9780262510875",
        "Structure and Interpretation of Computer Programs",
        "Harold Abelson",
        "55.00",
        "1996-07-25",
    ),
)

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "admin"  # a local demo account, printed by scripts/demo


class Command(BaseCommand):
    help = "Add the demo authors and books (idempotent); --admin also creates admin/admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--admin",
            action="store_true",
            help="Also create the superuser admin/admin if no user 'admin' exists.",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        created = 0
        for isbn, title, author_name, price, published in BOOKS:
            author, _ = Author.objects.get_or_create(name=author_name)
            _, was_created = Book.objects.get_or_create(
                isbn=isbn,
                defaults={
                    "title": title,
                    "author": author,
                    "price": Decimal(price),
                    "published": datetime.date.fromisoformat(published),
                },
            )
            created += was_created
        self.stdout.write(f"Demo data: {created} book(s) added, {Book.objects.count()} in total.")
        if options["admin"]:
            self._ensure_admin()

    def _ensure_admin(self) -> None:
        users = get_user_model()
        if users.objects.filter(username=ADMIN_USERNAME).exists():
            self.stdout.write(f"Admin user {ADMIN_USERNAME!r} already exists.")
            return
        users.objects.create_superuser(ADMIN_USERNAME, "admin@example.com", ADMIN_PASSWORD)
        self.stdout.write(f"Created superuser {ADMIN_USERNAME!r} (password {ADMIN_PASSWORD!r}).")
